package catalog

import (
	"strings"
	"testing"
)

// TestRequestState holds the requestState of the multi-round-trip tools to
// what a client may send back: only a state made for the same tool, as it
// was made, is accepted.
func TestRequestState(t *testing.T) {
	c := NewStates()
	good := c.Sign("tool_a", "round1")
	if got, ok := c.Verify("tool_a", good); !ok || got != "round1" {
		t.Fatalf("Verify(Sign(...)) = %q, %t", got, ok)
	}
	p, m, _ := strings.Cut(good, ".")
	other := NewStates()
	for name, state := range map[string]string{
		"tampered, as the suite does": good + "-TAMPERED",
		"for another tool":            c.Sign("tool_b", "round1"),
		"by another server":           other.Sign("tool_a", "round1"),
		"another payload":             "cm91bmQy." + m,
		"no mac":                      p,
		"empty mac":                   p + ".",
		"empty":                       "",
		"a dot":                       ".",
		"newlines in the payload":     strings.Repeat("\r\n", 100) + good,
		"padding":                     p + "==." + m,
		"not base64":                  "ü." + m,
		"huge":                        strings.Repeat("A", 1<<20) + "." + m,
	} {
		if got, ok := c.Verify("tool_a", state); ok {
			t.Errorf("%s: Verify(%.40q) accepted, payload %q", name, state, got)
		}
	}
}
