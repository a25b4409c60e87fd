package mcpeffect

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// validEffects are all the effects a tool can have: a read or one of the
// four kinds of write, each with and without OpenWorld.
var validEffects = []Effect{
	Read, Write, Idempotent, Destructive, Destructive | Idempotent,
	Read | OpenWorld, Write | OpenWorld, Idempotent | OpenWorld,
	Destructive | OpenWorld, Destructive | Idempotent | OpenWorld,
}

func TestEffectValidity(t *testing.T) {
	// Every one of the 256 values of an Effect is either in validEffects
	// or refused with an error that names the rule.
	for i := range 256 {
		e := Effect(i)
		err := e.validate()
		if want := slices.Contains(validEffects, e); (err == nil) != want {
			t.Errorf("Effect(%#x) = %s: Check() = %v, want valid = %t", i, e, err, want)
		}
	}
}

func TestEffectCheckErrors(t *testing.T) {
	tests := []struct {
		name string
		e    Effect
		want string
	}{
		{"zero", 0, "must have Read or Write"},
		{"open world alone", OpenWorld, "neither Read nor Write"},
		{"read and write", Read | Write, "Read cannot be combined with Write"},
		{"read and destructive", Read | Destructive, "Read cannot be combined with Destructive"},
		{"read and idempotent", Read | Idempotent, "Read cannot be combined with Idempotent"},
		{"read, destructive, idempotent", Read | Destructive | Idempotent, "Read cannot be combined with Destructive"},
		{"unknown bit", Read | 1<<6, "unknown effect bits 0x40"},
		{"high bit", 1 << 7, "unknown effect bits 0x80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.e.validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check(%s) = %v, want an error containing %q", tt.e, err, tt.want)
			}
		})
	}
}

func TestEffectString(t *testing.T) {
	tests := []struct {
		e    Effect
		want string
	}{
		{Read, "read"},
		{Write, "write"},
		{Destructive, "write|destructive"},
		{Idempotent, "write|idempotent"},
		{Destructive | Idempotent, "write|destructive|idempotent"},
		{Read | OpenWorld, "read|openworld"},
		{Destructive | Idempotent | OpenWorld, "write|destructive|idempotent|openworld"},
		{0, "none"},
		{Read | 1<<6, "read|0x40"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("Effect(%#x).String() = %q, want %q", uint8(tt.e), got, tt.want)
		}
	}
}

func TestEffectTextRoundTrip(t *testing.T) {
	for _, e := range validEffects {
		text, err := e.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%s): %v", e, err)
		}
		var got Effect
		if err := got.UnmarshalText(text); err != nil || got != e {
			t.Errorf("UnmarshalText(%q) = %s, %v; want %s", text, got, err, e)
		}
	}
	for _, e := range []Effect{0, OpenWorld, Read | Write, 1 << 7} {
		if text, err := e.MarshalText(); err == nil {
			t.Errorf("MarshalText(%s) = %q, want an error for an invalid effect", e, text)
		}
	}
}

func TestParseEffect(t *testing.T) {
	tests := []struct {
		in      string
		want    Effect
		wantErr string
	}{
		{in: "read", want: Read},
		{in: "destructive", want: Destructive},
		{in: "idempotent", want: Idempotent},
		{in: " Write | Destructive | IDEMPOTENT ", want: Destructive | Idempotent},
		{in: "openworld|read", want: Read | OpenWorld},
		{in: "write|write", want: Write},
		{in: "", wantErr: "empty effect"},
		{in: "  ", wantErr: "empty effect"},
		{in: "read|", wantErr: `unknown flag ""`},
		{in: "delete", wantErr: `unknown flag "delete"`},
		{in: "read|destructive", wantErr: "Read cannot be combined with Destructive"},
		{in: "openworld", wantErr: "neither Read nor Write"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseEffect(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidEffect) {
					t.Fatalf("ParseEffect(%q) = %s, %v; want an ErrInvalidEffect containing %q", tt.in, got, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.in)) && tt.in != "" && strings.TrimSpace(tt.in) != "" {
					t.Errorf("error %q does not quote the input", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseEffect(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
	// A failed UnmarshalText leaves the destination alone.
	e := Write
	if err := e.UnmarshalText([]byte("bogus")); err == nil || e != Write {
		t.Errorf("UnmarshalText(bogus) = %v and left %s, want an error and write", err, e)
	}
}

type hints struct{ readOnly, destructive, idempotent, openWorld bool }

func hintsOf(t *testing.T, a *mcp.ToolAnnotations) hints {
	t.Helper()
	if a.DestructiveHint == nil || a.OpenWorldHint == nil {
		t.Fatalf("annotations %+v leave a hint implicit", a)
	}
	return hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
}

// TestAnnotationsTable holds every valid effect to the hints it must
// advertise, row by row as in the effect table of the package's
// documentation.
func TestAnnotationsTable(t *testing.T) {
	tests := []struct {
		e    Effect
		want hints
	}{
		{Read, hints{true, false, true, false}},
		{Write, hints{false, false, false, false}},
		{Idempotent, hints{false, false, true, false}},
		{Destructive, hints{false, true, false, false}},
		{Destructive | Idempotent, hints{false, true, true, false}},
		{Read | OpenWorld, hints{true, false, true, true}},
		{Write | OpenWorld, hints{false, false, false, true}},
		{Idempotent | OpenWorld, hints{false, false, true, true}},
		{Destructive | OpenWorld, hints{false, true, false, true}},
		{Destructive | Idempotent | OpenWorld, hints{false, true, true, true}},
	}
	r := NewRegistry()
	for _, tt := range tests {
		name := strings.ReplaceAll(tt.e.String(), "|", "_")
		if err := r.Add(name, tt.e); err != nil {
			t.Fatal(err)
		}
		if got := hintsOf(t, tt.e.Annotations()); got != tt.want {
			t.Errorf("%s.Annotations() = %+v, want %+v", tt.e, got, tt.want)
		}
		a := r.Annotations(name)
		if got := hintsOf(t, a); got != tt.want {
			t.Errorf("Annotations(%q) = %+v, want %+v", name, got, tt.want)
		}
		if a.Title != "" {
			t.Errorf("Annotations(%q).Title = %q, want none: the title is the tool's, not the registry's", name, a.Title)
		}
	}
	worst := hints{false, true, false, true}
	for _, name := range []string{"unknown", ""} {
		if got := hintsOf(t, r.Annotations(name)); got != worst {
			t.Errorf("Annotations(%q) = %+v, want the worst case %+v", name, got, worst)
		}
	}
	if got := hintsOf(t, (Read | Write).Annotations()); got != worst {
		t.Errorf("invalid effect annotations = %+v, want the worst case", got)
	}
}
