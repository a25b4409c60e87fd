package manifest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// How a manifest is signed, after SEP-3140's signed capability manifest:
// the signature is a detached JWS (RFC 7515, appendix F) over the
// canonical JSON (RFC 8785) of the manifest without its "signature"
// member, made with Ed25519 ("EdDSA", RFC 8037), and naming its key by
// the key's JWK thumbprint (RFC 7638) in "kid". The manifest carries its
// signature as a member of its own, rather than beside it, so that
// mcpeffect diff and anything else that reads a manifest reads a signed
// one as it is.

// jwsType is the "typ" of the JWS header of a signed manifest.
const jwsType = "mcpeffect-manifest+jws"

type jwsHeader struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid,omitempty"`
	Typ  string   `json:"typ,omitempty"`
	Crit []string `json:"crit,omitempty"`
}

// Sign returns the JSON of m, indented, signed with key: m with its
// Signature set (see the package documentation), which [Verify] checks.
// m is not changed.
func Sign(m *Manifest, key ed25519.PrivateKey) ([]byte, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, errors.New("mcpeffect: signing a manifest: not an Ed25519 private key")
	}
	signed := *m
	signed.Signature = ""
	payload, err := canonicalOf(&signed)
	if err != nil {
		return nil, fmt.Errorf("mcpeffect: signing a manifest: %w", err)
	}
	header, err := json.Marshal(jwsHeader{Alg: "EdDSA", Kid: KeyID(key.Public().(ed25519.PublicKey)), Typ: jwsType})
	if err != nil {
		return nil, err
	}
	h := base64.RawURLEncoding.EncodeToString(header)
	sig := ed25519.Sign(key, signingInput(h, payload))
	signed.Signature = h + ".." + base64.RawURLEncoding.EncodeToString(sig)
	var b bytes.Buffer
	if err := signed.WriteJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func signingInput(header string, payload []byte) []byte {
	return []byte(header + "." + base64.RawURLEncoding.EncodeToString(payload))
}

// Parse reads a manifest as [Manifest.WriteJSON] or [Sign] writes it,
// without checking its signature. Members it does not know are refused,
// as [Verify] refuses them: a signed member that no reader shows would be
// signed for nothing.
func Parse(data []byte) (*Manifest, error) {
	m, _, err := parse(data)
	return m, err
}

// parse reads data as a manifest, and returns it with the canonical JSON
// of data as read, less its signature: what a signature signs.
func parse(data []byte) (*Manifest, []byte, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("mcpeffect: reading a manifest: %w", err)
	}
	if dec.More() {
		return nil, nil, errors.New("mcpeffect: reading a manifest: more than one JSON value")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil || doc == nil {
		return nil, nil, errors.New("mcpeffect: reading a manifest: not a JSON object")
	}
	if _, ok := doc["tools"]; !ok {
		return nil, nil, errors.New(`mcpeffect: reading a manifest: no "tools"`)
	}
	delete(doc, "signature")
	payload, err := canonicalOf(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("mcpeffect: reading a manifest: %w", err)
	}
	// What is read must be what is signed: a member given twice, or in
	// another case (which encoding/json matches too), could make the two
	// differ.
	unsigned := m
	unsigned.Signature = ""
	again, err := canonicalOf(&unsigned)
	if err != nil {
		return nil, nil, fmt.Errorf("mcpeffect: reading a manifest: %w", err)
	}
	if !bytes.Equal(again, payload) {
		return nil, nil, errors.New("mcpeffect: reading a manifest: it does not read back as written (a member given twice, in another case, or empty where it should be left out): not a manifest mcpeffect wrote")
	}
	return &m, payload, nil
}

// Verify reads a signed manifest, as [Sign] writes it, and checks its
// signature with pub. It returns an error, and no manifest, if the
// manifest is not signed, is signed with another key or algorithm, or
// was changed since it was signed.
func Verify(data []byte, pub ed25519.PublicKey) (*Manifest, error) {
	if len(pub) != ed25519.PublicKeySize {
		return nil, errors.New("mcpeffect: verifying a manifest: not an Ed25519 public key")
	}
	m, payload, err := parse(data)
	if err != nil {
		return nil, err
	}
	if m.Signature == "" {
		return nil, errors.New("mcpeffect: verifying a manifest: it is not signed")
	}
	h, detached, sig, ok := cut3(m.Signature)
	if !ok || detached != "" {
		return nil, errors.New("mcpeffect: verifying a manifest: its signature is not a detached JWS (header..signature)")
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("mcpeffect: verifying a manifest: the JWS header is not base64url: %w", err)
	}
	var header jwsHeader
	if err := json.Unmarshal(rawHeader, &header); err != nil {
		return nil, fmt.Errorf("mcpeffect: verifying a manifest: the JWS header is not JSON: %w", err)
	}
	switch want := KeyID(pub); {
	case header.Alg != "EdDSA":
		return nil, fmt.Errorf("mcpeffect: verifying a manifest: signed with %q, not EdDSA (Ed25519)", header.Alg)
	case len(header.Crit) > 0:
		return nil, fmt.Errorf("mcpeffect: verifying a manifest: its JWS header has critical extensions %q, which are not understood", header.Crit)
	case header.Kid != "" && header.Kid != want:
		return nil, fmt.Errorf("mcpeffect: verifying a manifest: signed with the key %s, not with this one (%s)", header.Kid, want)
	}
	rawSig, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return nil, fmt.Errorf("mcpeffect: verifying a manifest: the signature is not base64url: %w", err)
	}
	if !ed25519.Verify(pub, signingInput(h, payload), rawSig) {
		return nil, errors.New("mcpeffect: verifying a manifest: the signature does not match: the manifest was changed since it was signed, or signed with another key")
	}
	return m, nil
}

func cut3(s string) (a, b, c string, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// KeyID returns the JWK thumbprint (RFC 7638, SHA-256, unpadded
// base64url) of pub, the "kid" of what it signs.
func KeyID(pub ed25519.PublicKey) string {
	// The members of the thumbprint's JSON, in their required order.
	jwk := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(jwk))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// NewKey returns a new Ed25519 key in PEM: the private key in PKCS #8 (as
// `openssl genpkey -algorithm ed25519` writes it) and its public key in
// PKIX (as `openssl pkey -pubout` writes it).
func NewKey() (private, public []byte, err error) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), nil
}

// ParsePrivateKey reads an Ed25519 private key in PEM, PKCS #8.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	block, err := onePEM(data)
	if err != nil {
		return nil, err
	}
	if block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("mcpeffect: a PEM block of type %q, not PRIVATE KEY (an Ed25519 key in PKCS #8)", block.Type)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("mcpeffect: reading the private key: %w", err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("mcpeffect: the private key is a %T, not Ed25519", k)
	}
	return key, nil
}

// ParsePublicKey reads an Ed25519 public key in PEM: a PUBLIC KEY (PKIX),
// or the PRIVATE KEY (PKCS #8) it belongs to.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	block, err := onePEM(data)
	if err != nil {
		return nil, err
	}
	switch block.Type {
	case "PRIVATE KEY":
		key, err := ParsePrivateKey(data)
		if err != nil {
			return nil, err
		}
		return key.Public().(ed25519.PublicKey), nil
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("mcpeffect: reading the public key: %w", err)
		}
		pub, ok := k.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("mcpeffect: the public key is a %T, not Ed25519", k)
		}
		return pub, nil
	}
	return nil, fmt.Errorf("mcpeffect: a PEM block of type %q, not PUBLIC KEY or PRIVATE KEY", block.Type)
}

func onePEM(data []byte) (*pem.Block, error) {
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, errors.New("mcpeffect: not a key in PEM (-----BEGIN ...)")
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("mcpeffect: more than one PEM block: give one key")
	}
	return block, nil
}
