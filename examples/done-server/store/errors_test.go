package store

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestQuote quotes hostile text: whatever the input, the quote is valid
// UTF-8 without a control or format character, cut between characters
// after 60 of them, and shows what it quotes, escaped.
func TestQuote(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     string // in the quote
		cut      bool
	}{
		{"short", "plan", `"plan"`, false},
		{"a 3-byte character across byte 60", strings.Repeat("a", 59) + "€€", `"` + strings.Repeat("a", 59) + `€"...`, true},
		{"a 4-byte character across byte 60", strings.Repeat("a", 58) + "😀x", `"` + strings.Repeat("a", 58) + `😀x"`, false},
		{"60 characters of 2 bytes, kept whole", strings.Repeat("é", 60), `"` + strings.Repeat("é", 60) + `"`, false},
		{"61 characters of 2 bytes", strings.Repeat("é", 61), `"` + strings.Repeat("é", 60) + `"...`, true},
		{"right-to-left override", "invoice\u202Efdp.exe", `invoice\u202efdp.exe`, false},
		{"NUL", "a\x00b", `a\x00b`, false},
		{"escape sequence", "\x1b[31mred", `\x1b[31mred`, false},
		{"zero-width space and joiner", "ad\u200Bmin\u200D", `ad\u200bmin\u200d`, false},
		{"line separator", "a\u2028b", `a\u2028b`, false},
		{"invalid UTF-8", "a\xffb", `a\xffb`, false},
		{"format character at the cut", strings.Repeat("a", 59) + "\u202E" + "b", `\u202e"...`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := quote(c.in)
			if !utf8.ValidString(q) {
				t.Errorf("quote(%q) = %q: not valid UTF-8", c.in, q)
			}
			if i := strings.IndexFunc(q, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }); i >= 0 {
				t.Errorf("quote(%q) = %q: a control or format character at byte %d", c.in, q, i)
			}
			if !strings.Contains(q, c.want) {
				t.Errorf("quote(%q) = %q, want it to hold %q", c.in, q, c.want)
			}
			if strings.HasSuffix(q, "...") != c.cut {
				t.Errorf("quote(%q) = %q: cut %v, want %v", c.in, q, !c.cut, c.cut)
			}
		})
	}
}
