package mcpeffect

import (
	"strings"
	"testing"
)

func TestScopeText(t *testing.T) {
	for _, s := range []Scope{0, ReadOnly, NonDestructive, Full} {
		text, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got Scope
		if err := got.UnmarshalText(text); err != nil || got != s {
			t.Errorf("round trip of %s through %q = %s, %v", s, text, got, err)
		}
	}
	if text, err := Scope(9).MarshalText(); err == nil {
		t.Errorf("MarshalText(Scope(9)) = %q, want an error", text)
	}
	if got := Scope(9).String(); got != "Scope(9)" {
		t.Errorf("Scope(9).String() = %q", got)
	}
	for in, want := range map[string]Scope{"read-only": ReadOnly, "NON-DESTRUCTIVE": NonDestructive, "Full": Full, "none": 0} {
		if got, err := ParseScope(in); err != nil || got != want {
			t.Errorf("ParseScope(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "readonly", "read", " full", "admin"} {
		_, err := ParseScope(in)
		if err == nil || !strings.Contains(err.Error(), "unknown scope") {
			t.Errorf("ParseScope(%q) = %v, want an unknown scope error", in, err)
		}
	}
	s := Full
	if err := s.UnmarshalText([]byte("bogus")); err == nil || s != Full {
		t.Errorf("failed UnmarshalText changed the scope to %s", s)
	}
}

func TestScopeNamesScope(t *testing.T) {
	custom := ScopeNames{ReadOnly: "done:read", NonDestructive: "done:write", Full: "done:admin"}
	tests := []struct {
		name   string
		names  ScopeNames
		tokens []string
		want   Scope
	}{
		{"no strings", ScopeNames{}, nil, 0},
		{"unknown strings", ScopeNames{}, []string{"openid", "profile"}, 0},
		{"read", ScopeNames{}, []string{"tools:read"}, ReadOnly},
		{"write implies read", ScopeNames{}, []string{"tools:write"}, NonDestructive},
		{"destructive implies all", ScopeNames{}, []string{"tools:destructive"}, Full},
		{"widest wins in any order", ScopeNames{}, []string{"tools:write", "tools:read", "email"}, NonDestructive},
		{"full first", ScopeNames{}, []string{"tools:destructive", "tools:read"}, Full},
		{"case matters", ScopeNames{}, []string{"TOOLS:READ"}, 0},
		{"custom names", custom, []string{"done:write"}, NonDestructive},
		{"defaults do not apply to custom names", custom, []string{"tools:destructive"}, 0},
		{"partly custom", ScopeNames{Full: "admin"}, []string{"tools:read", "admin"}, Full},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.names.Scope(tt.tokens); got != tt.want {
				t.Errorf("Scope(%q) = %s, want %s", tt.tokens, got, tt.want)
			}
		})
	}
}

func TestScopeNamesName(t *testing.T) {
	var def ScopeNames
	for s, want := range map[Scope]string{0: "", ReadOnly: "tools:read", NonDestructive: "tools:write", Full: "tools:destructive", 7: ""} {
		if got := def.Name(s); got != want {
			t.Errorf("Name(%s) = %q, want %q", s, got, want)
		}
	}
	// Name and Scope are inverse on every level.
	names := ScopeNames{ReadOnly: "r", Full: "f"}
	for _, s := range []Scope{ReadOnly, NonDestructive, Full} {
		if got := names.Scope([]string{names.Name(s)}); got != s {
			t.Errorf("Scope(Name(%s)) = %s", s, got)
		}
	}
	if got := strings.Join(names.Strings(), " "); got != "r tools:write f" {
		t.Errorf("Strings() = %q", got)
	}
}

func TestScopeNamesValidate(t *testing.T) {
	tests := []struct {
		name    string
		names   ScopeNames
		wantErr string
	}{
		{"defaults", ScopeNames{}, ""},
		{"custom", ScopeNames{ReadOnly: "a", NonDestructive: "b", Full: "https://x.example/full"}, ""},
		{"space", ScopeNames{ReadOnly: "tools read"}, `scope name for read-only: scope "tools read": byte 0x20 at 5`},
		{"quote", ScopeNames{Full: `a"b`}, "scope name for full"},
		{"backslash", ScopeNames{NonDestructive: `a\b`}, "scope name for non-destructive"},
		{"non-ASCII", ScopeNames{ReadOnly: "lecture-é"}, "is not allowed in a scope token"},
		{"shared", ScopeNames{ReadOnly: "x", Full: "x"}, `scope name "x" is given to both read-only and full`},
		{"shared with a default", ScopeNames{Full: "tools:write"}, `"tools:write" is given to both non-destructive and full`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.names.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Check() = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Check() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}
