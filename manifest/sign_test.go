package manifest_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/manifest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The examples of RFC 8785, section 3.2.2.3 and appendix B, and the
// orders of its section 3.2.3.
func TestCanonical(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"numbers", `[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001]`, `[333333333.3333333,1e+30,4.5,0.002,1e-27]`},
		{"zero and signs", `[-0, 0.0, -1.5, 1e21, 1e20, 1e-6, 1e-7, 9007199254740993]`, `[0,0,-1.5,1e+21,100000000000000000000,0.000001,1e-7,9007199254740992]`},
		{"strings", `"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/"`, `"€$\u000f\nA'B\"\\\\\"/"`},
		{"literals", `[null, true, false]`, `[null,true,false]`},
		{"UTF-16 order", `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			`{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","` + "\u00f6" + `":"Latin Small Letter O With Diaeresis","` + "\u20ac" + `":"Euro Sign","` + "\U0001F600" + `":"Emoji: Grinning Face","` + "\ufb33" + `":"Hebrew Letter Dalet With Dagesh"}`},
		{"U+2028 stays", `"\u2028<>&"`, "\"\u2028<>&\""},
	} {
		got, err := manifest.Canonical([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: Canonical(%s) = %s, %v; want %s", c.name, c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{``, `{`, `1 2`, `1e400`, `{"a":1}x`} {
		if got, err := manifest.Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%q) = %s, want an error", bad, got)
		}
	}
}

// server returns a server with two tools, one whose effect depends on its
// arguments, its registry, and a client session to it.
func server(t *testing.T, description string) (*mcp.ClientSession, *mcpeffect.Registry) {
	t.Helper()
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "cluster", Version: "v1"}, nil)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods", Description: description}, mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
		"get": mcpeffect.Read, "delete": mcpeffect.Destructive,
	}), pods)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "get_pod", Description: "Gets a pod: 0.1 €."}, mcpeffect.Read|mcpeffect.OpenWorld, pods)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, r
}

// signedManifest writes the manifest of what cs lists, as mcpeffect
// manifest does, from the hints and outcomes the tools publish.
func listedManifest(t *testing.T, cs *mcp.ClientSession, r *mcpeffect.Registry) *manifest.Manifest {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &manifest.Manifest{ServerInfo: &manifest.ServerInfo{Name: "cluster", Version: "v1"}, IssuedAt: "2026-08-21T10:00:00Z"}
	for _, tool := range res.Tools {
		e, _ := r.Effect(tool.Name)
		rule, _ := r.Rule(tool.Name)
		mt, err := manifest.ToolOf(tool, e, rule, mcpeffect.ScopeNames{})
		if err != nil {
			t.Fatal(err)
		}
		m.Tools = append(m.Tools, mt)
	}
	return m
}

// The definition a client lists hashes as the server's own: the schema
// decoded into maps, the hints as go-sdk decodes them, the outcomes from
// _meta.
func TestDefinitionSameBothSides(t *testing.T) {
	tool := &mcp.Tool{
		Name:        "scale",
		Description: "Scales a deployment to 1.5e3 replicas, or fewer.",
		InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
			"replicas": {Type: "number", Maximum: ptr(1500.0)},
			"name":     {Type: "string", Description: "the deployment's name, <b>\u2028</b>"},
		}, Required: []string{"name"}},
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true},
		Meta:        mcp.Meta{mcpeffect.OutcomesMetaKey: map[string]any{"outcomes": []any{map[string]any{"effect": "write|destructive|idempotent"}}}, "other": 1},
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "scaler"}, nil)
	s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 {
		t.Fatal(res, err)
	}
	server, err := manifest.DefinitionOf(tool)
	if err != nil {
		t.Fatal(err)
	}
	client, err := manifest.DefinitionOf(res.Tools[0])
	if err != nil {
		t.Fatal(err)
	}
	if server.Hash() != client.Hash() {
		t.Errorf("server %s\n%+v\nclient %s\n%+v", server.Hash(), server, client.Hash(), client)
	}
	if server.InputSchema == nil || server.Annotations == nil || server.Outcomes == nil || server.OutputSchema != nil {
		t.Errorf("parts: %+v", server)
	}
	if want := `{"idempotentHint":true,"readOnlyHint":false,"destructiveHint":true}`; len(server.Annotations) != len(want) {
		t.Errorf("annotations %s", server.Annotations)
	}
}

func ptr[T any](v T) *T { return &v }

func TestSignVerify(t *testing.T) {
	cs, r := server(t, "Gets or deletes pods.")
	m := listedManifest(t, cs, r)
	priv, pub, err := manifest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	key, err := manifest.ParsePrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubKey, err := manifest.ParsePublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if fromPriv, err := manifest.ParsePublicKey(priv); err != nil || !fromPriv.Equal(pubKey) {
		t.Fatalf("the public key of the private key file: %v, %v", fromPriv, err)
	}
	data, err := manifest.Sign(m, key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := manifest.Verify(data, pubKey)
	if err != nil {
		t.Fatalf("Verify: %v\n%s", err, data)
	}
	if len(got.Tools) != 2 || got.Tool("pods").ContentHash == "" || got.Tool("pods").Argument != "action" || got.Tool("get_pod").Description != "Gets a pod: 0.1 €." {
		t.Errorf("verified %+v", got.Tools)
	}
	if m.Signature != "" {
		t.Error("Sign changed its manifest")
	}

	// Any change to what was signed, however small, breaks it.
	_, other, _ := ed25519.GenerateKey(nil)
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"a hint", `"readOnlyHint": true`, `"readOnlyHint": false`, "does not match"},
		{"a description", `Gets a pod`, `Gets a Pod`, "does not match"},
		{"a member added", `"tools": [`, `"extra": 1, "tools": [`, "unknown field"},
		{"a member in another case", `"issuedAt"`, `"IssuedAt"`, "does not read back"},
		{"a member twice", `"issuedAt": "2026-08-21T10:00:00Z",`, `"issuedAt": "2026-08-21T10:00:00Z", "issuedAt": "2026-08-21T10:00:00Z",`, ""},
		{"no signature", `"signature"`, `"signature_"`, "unknown field"},
	} {
		changed := bytes.Replace(data, []byte(c.old), []byte(c.new), 1)
		if bytes.Equal(changed, data) {
			t.Fatalf("%s: %q not in the manifest", c.name, c.old)
		}
		_, err := manifest.Verify(changed, pubKey)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v; want it verified, as the same value", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v; want an error with %q", c.name, err, c.want)
		}
	}
	if _, err := manifest.Verify(data, other.Public().(ed25519.PublicKey)); err == nil || !strings.Contains(err.Error(), "signed with the key") {
		t.Errorf("another key: %v", err)
	}
	var unsigned bytes.Buffer
	m.WriteJSON(&unsigned)
	if _, err := manifest.Verify(unsigned.Bytes(), pubKey); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Errorf("unsigned: %v", err)
	}
	if _, err := manifest.Parse(unsigned.Bytes()); err != nil {
		t.Errorf("Parse of an unsigned manifest: %v", err)
	}
	// A JWS with another algorithm, or critical extensions, is refused
	// before its signature is looked at.
	for _, header := range []string{`{"alg":"none"}`, `{"alg":"HS256"}`, `{"alg":"EdDSA","crit":["b64"],"b64":false}`} {
		sig := strings.Replace(got.Signature, strings.Split(got.Signature, ".")[0], b64(header), 1)
		forged := bytes.Replace(data, []byte(got.Signature), []byte(sig), 1)
		if _, err := manifest.Verify(forged, pubKey); err == nil {
			t.Errorf("header %s: verified", header)
		}
	}
}

func TestDigestsChanged(t *testing.T) {
	cs, r := server(t, "Gets or deletes pods.")
	before := listedManifest(t, cs, r).Tool("pods")
	cs2, r2 := server(t, "Gets or deletes pods; and sends them to evil.example.")
	after := listedManifest(t, cs2, r2).Tool("pods")
	if before.ContentHash == after.ContentHash {
		t.Fatal("same hash for another description")
	}
	if got := before.Digests.Changed(after.Digests); len(got) != 1 || got[0] != "description" {
		t.Errorf("Changed = %q, want [description]", got)
	}
	if got := before.Digests.Changed(before.Digests); got != nil {
		t.Errorf("Changed of the same = %q", got)
	}
	if got := (*manifest.Digests)(nil).Changed(before.Digests); len(got) != 4 {
		t.Errorf("Changed from nothing = %q, want the four parts pods has", got)
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
