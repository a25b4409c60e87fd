package mcpeffect

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On the 2026-07-28 protocol, the server asks for confirmation in the
// result of the call, and the client calls again with the person's answer
// and the request state the server gave: the state is signed, and binds
// the answer to one call, one caller and an expiry, so that an answer
// cannot be forged, nor used for another call.

// The request state is base64url of: a version byte, the expiry in Unix
// milliseconds, a random nonce, the binding of the call, and the HMAC-SHA256
// of all that under the confirmer's key.
const (
	stateVersion = 1
	nonceSize    = 16
	statePayload = 1 + 8 + nonceSize + sha256.Size
	stateSize    = statePayload + sha256.Size
)

var errExpired = errors.New("the answer came after it expired")

// requestStates mints and verifies the request states of one confirmer:
// its key, its clock, how long an answer may take, the store of answers
// used, and who makes a call (ConfirmOptions.Caller).
type requestStates struct {
	key    []byte
	now    func() time.Time
	expiry time.Duration
	used   AnswerStore
	caller func(context.Context, *mcp.CallToolRequest) string
}

// binding returns the digest of what an answer is bound to: the tool, the
// arguments (canonical: keys sorted, spaces gone), the caller and its
// scope.
func (c *requestStates) binding(ctx context.Context, scope Scope, req *mcp.CallToolRequest, tool string) [sha256.Size]byte {
	var caller string
	switch {
	case c.caller != nil:
		caller = "caller:" + c.caller(ctx, req)
	case req.Extra != nil && req.Extra.TokenInfo != nil:
		ti := req.Extra.TokenInfo
		scopes := slices.Clone(ti.Scopes)
		slices.Sort(scopes)
		caller = "token:" + ti.UserID + "\x00" + strings.Join(scopes, " ")
	default:
		caller = fmt.Sprintf("session:%p", req.Session)
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte("mcpeffect confirm v1"), []byte(tool), canonicalArgs(req.Params.Arguments), []byte(caller), {byte(scope)}} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// canonicalArgs returns args in a canonical form, so that the same
// arguments sent again with keys in another order or other spacing bind
// the same. Where a key is given twice, the last counts, as go-sdk
// decodes. Arguments that are not JSON are taken as they are.
func canonicalArgs(args json.RawMessage) []byte {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return trimmed
	}
	out, err := json.Marshal(v)
	if err != nil {
		return trimmed
	}
	return out
}

// mint returns a new request state for binding.
func (c *requestStates) mint(binding [sha256.Size]byte) (string, error) {
	var b [stateSize]byte
	b[0] = stateVersion
	binary.BigEndian.PutUint64(b[1:9], uint64(c.now().Add(c.expiry).UnixMilli()))
	if _, err := io.ReadFull(rand.Reader, b[9:9+nonceSize]); err != nil {
		return "", err
	}
	copy(b[9+nonceSize:statePayload], binding[:])
	mac := hmac.New(sha256.New, c.key)
	mac.Write(b[:statePayload])
	mac.Sum(b[:statePayload])
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// verify returns nil if state is one that c minted for binding, not
// expired and never accepted before, and marks it accepted in the store
// of used answers.
func (c *requestStates) verify(ctx context.Context, state string, binding [sha256.Size]byte) error {
	b, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(b) != stateSize || b[0] != stateVersion {
		return errors.New("its request state is not one this server makes")
	}
	mac := hmac.New(sha256.New, c.key)
	mac.Write(b[:statePayload])
	if !hmac.Equal(mac.Sum(nil), b[statePayload:]) {
		return errors.New("its request state is not signed by this server")
	}
	if !hmac.Equal(b[9+nonceSize:statePayload], binding[:]) {
		return errors.New("it answers a question about another call (another tool, other arguments or another caller)")
	}
	expiry := time.UnixMilli(int64(binary.BigEndian.Uint64(b[1:9])))
	if c.now().After(expiry) {
		return errExpired
	}
	fresh, err := c.used.Use(ctx, b[9:9+nonceSize], expiry)
	switch {
	case err != nil:
		// Fail closed: an answer that cannot be recorded could be
		// replayed.
		return fmt.Errorf("its answer could not be recorded as used: %v", err)
	case !fresh:
		return errors.New("it was accepted once already")
	}
	return nil
}
