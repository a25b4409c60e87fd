package store

import (
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
)

// TestTokenNames mints tokens with hostile names, on the command line's
// authority, among people and agents who already have names: each is
// normalised, or refused with the rule it breaks.
func TestTokenNames(t *testing.T) {
	s, _, err := openAt(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range []NewToken{
		{Name: "alice", Kind: Human}, {Name: "straße", Kind: Human}, {Name: "zoë", Kind: Human},
		{Name: "builder", Kind: Agent}, {Name: "ace", Kind: Agent}, {Name: "mike", Kind: Agent}, {Name: "bob", Kind: Human},
	} {
		n.Scope = mcpeffect.ReadOnly
		if _, _, err := s.MintToken(t.Context(), n); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, input string
		kind        Kind
		want        string // the name stored, or, if it starts with "!", what the error says
	}{
		{"spaces trimmed and collapsed", "  helper \u00a0  bot  ", Agent, "helper bot"},
		{"fullwidth letters", "ｒｅｖｉｅｗｅｒ", Agent, "reviewer"},
		{"mathematical letters", "𝐫𝐮𝐧𝐧𝐞𝐫", Agent, "runner"},
		{"a composed and a decomposed ë are one name", "zoe\u0308", Human, "zoë"},
		{"no-break spaces around an existing name", "\u00a0alice\u00a0", Human, "alice"},
		{"Japanese: Han and Katakana", "山田タロウ", Human, "山田タロウ"},
		{"Han and Latin", "山田 taro", Human, "山田 taro"},
		{"Greek alone", "Ελένη", Human, "Ελένη"},
		{"Cyrillic alone", "Дмитрий", Human, "Дмитрий"},

		{"a person's name with a trailing space, for an agent", "alice ", Agent, `!belongs to a human`},
		{"a person's name in capitals", "ALICE", Agent, `!differs only in case from "alice"`},
		{"full case folding: SS and ß", "STRASSE", Agent, `!differs only in case from "straße"`},
		{"zero-width space", "al\u200bice", Agent, "!U+200B"},
		{"zero-width joiner", "alice\u200d", Agent, "!U+200D"},
		{"right-to-left override", "\u202eecila", Agent, "!U+202E"},
		{"byte order mark", "\ufeffalice", Agent, "!U+FEFF"},
		{"soft hyphen", "al\u00adice", Agent, "!U+00AD"},
		{"variation selector", "alice\ufe0f", Agent, "!U+FE0F"},
		{"Hangul filler", "alice\u3164", Agent, "!U+3164"},
		{"braille blank", "alice\u2800", Agent, "!U+2800"},
		{"tab", "ali\tce", Agent, "!U+0009"},
		{"line feed", "alice\nbob", Agent, "!U+000A"},
		{"private use", "alice\ue000", Agent, "!U+E000"},
		{"a Cyrillic а in a Latin name", "\u0430lice", Agent, "!mixes letters of Cyrillic and Latin"},
		{"a Greek ο in a Latin name", "b\u03bfb", Agent, "!mixes letters of Latin and Greek"},
		{"a whole name in Cyrillic that reads as a Latin one", "асе", Human, `!looks like "ace"`},
		{"Greek capitals like no name here", "ΑΚΕ", Human, ""},
		{"a digit one for an l", "bui1der", Agent, `!looks like "builder"`},
		{"a capital I for an l", "buiIder", Agent, `!looks like "builder"`},
		{"rn for m", "rnike", Agent, `!looks like "mike"`},
		{"a zero for an o", "b0b", Agent, `!looks like "bob"`},
		{"an unrelated name with a digit", "r2d2", Agent, "r2d2"},
		{"too long", strings.Repeat("x", MaxPersonName+1), Agent, "!at most 64"},
		{"long, but not too long", strings.Repeat("x", MaxPersonName), Agent, strings.Repeat("x", MaxPersonName)},
		{"empty", "", Agent, "!must not be empty"},
		{"only spaces", " \u3000 ", Agent, "!must not be empty"},
		{"huge", strings.Repeat("x", 10000), Agent, "!characters long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, _, err := s.MintToken(t.Context(), NewToken{Name: c.input, Kind: c.kind, Scope: mcpeffect.ReadOnly})
			if want, refused := strings.CutPrefix(c.want, "!"); refused {
				if err == nil || refusal.CodeOf(err) == 0 || !strings.Contains(err.Error(), want) {
					t.Errorf("MintToken(%q) = %q, %v; want a refusal saying %q", c.input, k.Name, err, want)
				}
				return
			}
			if c.want == "" {
				// Not a look-alike of any name here: it only has to pass.
				if err != nil {
					t.Errorf("MintToken(%q): %v", c.input, err)
				}
				return
			}
			if err != nil || k.Name != c.want {
				t.Errorf("MintToken(%q) = %q, %v; want %q", c.input, k.Name, err, c.want)
			}
		})
	}
}
