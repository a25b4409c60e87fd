package catalog

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// States signs the requestState that the multi-round-trip tools (SEP-2322)
// give a client, so that the client can neither forge the state of a
// round it was not given nor move one from one tool to another. Make one
// with [NewStates]; it is safe for concurrent use.
type States struct{ key []byte }

// NewStates returns a States with a key of its own: a state it signs is
// accepted by it alone.
func NewStates() *States {
	s := &States{key: make([]byte, 32)}
	rand.Read(s.key)
	return s
}

// Sign returns the requestState of tool for payload: the payload, then an
// HMAC of the tool and the payload.
func (s *States) Sign(tool, payload string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(s.mac(tool, payload))
}

func (s *States) mac(tool, payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(tool))
	m.Write([]byte{0})
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// Verify returns the payload of a requestState that Sign made for tool.
// The client sends the state back, so anything else may arrive: only the
// exact text Sign made is accepted.
func (s *States) Verify(tool, state string) (string, bool) {
	p, _, ok := strings.Cut(state, ".")
	if !ok {
		return "", false
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil || !hmac.Equal([]byte(state), []byte(s.Sign(tool, string(payload)))) {
		return "", false
	}
	return string(payload), true
}

// InvalidState is the message of the error that refuses a retry whose
// requestState was not made by the server for the tool.
const InvalidState = "invalid requestState: it was not made by this server for this tool"
