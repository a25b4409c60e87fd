package mcpeffect

import (
	"strings"
	"testing"
)

// FuzzParseEffect checks that whatever ParseEffect accepts is a valid
// effect whose text form parses back to itself.
func FuzzParseEffect(f *testing.F) {
	for _, s := range []string{"read", "write|destructive|idempotent", "Read | OpenWorld", "destructive", "read|write", "", "|", "write||idempotent", "openworld"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseEffect(s)
		if err != nil {
			if e != 0 {
				t.Fatalf("ParseEffect(%q) = %s with error %v; want 0", s, e, err)
			}
			return
		}
		if !e.Valid() {
			t.Fatalf("ParseEffect(%q) = %s, which is not valid", s, e)
		}
		text, err := e.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%s): %v", e, err)
		}
		var back Effect
		if err := back.UnmarshalText(text); err != nil || back != e {
			t.Fatalf("%q -> %s -> %q -> %s, %v", s, e, text, back, err)
		}
	})
}

// FuzzScopeStrings checks the reading of a token's scope strings (given
// here space-separated, as in an OAuth scope parameter) and of scope text.
func FuzzScopeStrings(f *testing.F) {
	for _, s := range []string{"tools:read", "openid tools:write profile", "tools:destructive tools:read", "TOOLS:READ", "read-only", "full", "", "\x00 \xff"} {
		f.Add(s)
	}
	var names ScopeNames
	f.Fuzz(func(t *testing.T, s string) {
		tokens := strings.Fields(s)
		got := names.Scope(tokens)
		var want Scope
		for _, tok := range tokens {
			for _, level := range []Scope{ReadOnly, NonDestructive, Full} {
				if tok == names.Name(level) && level > want {
					want = level
				}
			}
		}
		if got != want {
			t.Fatalf("Scope(%q) = %s, want %s", tokens, got, want)
		}
		if sc, err := ParseScope(s); err == nil {
			if sc > Full || !strings.EqualFold(sc.String(), s) {
				t.Fatalf("ParseScope(%q) = %s", s, sc)
			}
		}
	})
}
