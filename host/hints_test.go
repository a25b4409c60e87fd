package host

import (
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

func b(v bool) *bool { return &v }

func TestHintsEffect(t *testing.T) {
	tests := []struct {
		name string
		h    Declared
		want mcpeffect.Effect
	}{
		{"nothing declared", Declared{}, mcpeffect.Destructive | mcpeffect.OpenWorld},
		{"read-only, rest missing", Declared{ReadOnly: b(true)}, mcpeffect.Read | mcpeffect.OpenWorld},
		{"closed read", Declared{ReadOnly: b(true), OpenWorld: b(false)}, mcpeffect.Read},
		{"read-only with destructive false", Declared{ReadOnly: b(true), Destructive: b(false), OpenWorld: b(false)}, mcpeffect.Read},
		{"contradiction is the write", Declared{ReadOnly: b(true), Destructive: b(true), OpenWorld: b(false)}, mcpeffect.Destructive},
		{"contradiction keeps idempotent", Declared{ReadOnly: b(true), Destructive: b(true), Idempotent: b(true)}, mcpeffect.Destructive | mcpeffect.Idempotent | mcpeffect.OpenWorld},
		{"write, destructive missing", Declared{ReadOnly: b(false), OpenWorld: b(false)}, mcpeffect.Destructive},
		{"additive write", Declared{ReadOnly: b(false), Destructive: b(false), Idempotent: b(false), OpenWorld: b(false)}, mcpeffect.Write},
		{"idempotent write", Declared{Destructive: b(false), Idempotent: b(true), OpenWorld: b(false)}, mcpeffect.Idempotent},
		{"open write", Declared{Destructive: b(false)}, mcpeffect.Write | mcpeffect.OpenWorld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.h.Effect()
			if got != tt.want {
				t.Errorf("Effect() = %s, want %s", got, tt.want)
			}
			if !got.Valid() {
				t.Errorf("Effect() = %s is not valid", got)
			}
		})
	}
	if got := EffectOf(nil); got != mcpeffect.Destructive|mcpeffect.OpenWorld {
		t.Errorf("EffectOf(nil) = %s, want the worst case", got)
	}
}

func TestHintsAssumed(t *testing.T) {
	got := Declared{Idempotent: b(true)}.Assumed()
	if *got.ReadOnly || !*got.Destructive || !*got.Idempotent || !*got.OpenWorld {
		t.Errorf("Assumed() = ro %t d %t i %t o %t", *got.ReadOnly, *got.Destructive, *got.Idempotent, *got.OpenWorld)
	}
}

func TestParseDeclared(t *testing.T) {
	tests := []struct {
		in      string
		want    string // the hints as r d i o with - for missing
		wantErr string
	}{
		{in: "", want: "----"},
		{in: "null", want: "----"},
		{in: "{}", want: "----"},
		{in: `{"title":"x"}`, want: "----"},
		{in: `{"readOnlyHint":true}`, want: "t---"},
		{in: `{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`, want: "fftf"},
		{in: `{"destructiveHint":null}`, want: "----"},
		{in: `{"ReadOnlyHint":true}`, want: "----"}, // names are case-sensitive, as in go-sdk
		{in: `{"readOnlyHint":"true"}`, wantErr: `readOnlyHint is "true", not a boolean`},
		{in: `{"openWorldHint":1}`, wantErr: "openWorldHint is 1, not a boolean"},
		{in: `[]`, wantErr: "not a JSON object"},
		{in: `{"readOnlyHint":tru`, wantErr: "not a JSON object"},
	}
	show := func(p *bool) byte {
		switch {
		case p == nil:
			return '-'
		case *p:
			return 't'
		}
		return 'f'
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			h, err := ParseDeclared([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseDeclared = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := string([]byte{show(h.ReadOnly), show(h.Destructive), show(h.Idempotent), show(h.OpenWorld)})
			if got != tt.want {
				t.Errorf("ParseDeclared = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestEffectOfAnnotations reads back what a server advertises for each
// effect, from the effect itself and from a registry: the host must find
// the effect the server classified.
func TestEffectOfAnnotations(t *testing.T) {
	valid := []mcpeffect.Effect{
		mcpeffect.Read, mcpeffect.Write, mcpeffect.Idempotent, mcpeffect.Destructive, mcpeffect.Destructive | mcpeffect.Idempotent,
	}
	r := mcpeffect.NewRegistry()
	for _, e := range valid {
		for _, e := range []mcpeffect.Effect{e, e | mcpeffect.OpenWorld} {
			name := strings.ReplaceAll(e.String(), "|", "_")
			if err := r.Add(name, e); err != nil {
				t.Fatal(err)
			}
			if got := EffectOf(e.Annotations()); got != e {
				t.Errorf("EffectOf(%s.Annotations()) = %s", e, got)
			}
			if got := EffectOf(r.Annotations(name)); got != e {
				t.Errorf("EffectOf(Annotations(%q)) = %s, want %s", name, got, e)
			}
		}
	}
}
