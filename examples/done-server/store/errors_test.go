package store

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
)

// codeOf is refusal.CodeOf, for the tests.
var codeOf = refusal.CodeOf

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

// TestStorable: what PostgreSQL refuses in text, a NUL and invalid UTF-8,
// is refused on both stores alike: by the check of the argument, which
// names it, and, for what no check caught, by every query before it is
// sent, never by the database with an error of its own.
func TestStorable(t *testing.T) {
	ctx := t.Context()
	s, _, err := openAt(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, bad := range []string{"a\x00b", "a\xffb"} {
		// Names that reach a lookup.
		if _, err := s.ListTasks(ctx, TaskFilter{Assignee: bad}); codeOf(err) != refusal.Invalid || !strings.Contains(err.Error(), "assignee") {
			t.Errorf("ListTasks, assignee %q: %v", bad, err)
		}
		if _, err := s.ListRuns(ctx, RunFilter{Agent: bad}); codeOf(err) != refusal.Invalid || !strings.Contains(err.Error(), "agent") {
			t.Errorf("ListRuns, agent %q: %v", bad, err)
		}
		if _, err := s.PersonToken(ctx, bad); codeOf(err) != refusal.Invalid || !strings.Contains(err.Error(), "name") {
			t.Errorf("PersonToken %q: %v", bad, err)
		}
		// Each way a query is sent.
		_, err := read(ctx, s, Actor{}, func(t *tx) (int, error) {
			var n int
			return n, t.queryRow(`SELECT count(*) FROM tokens WHERE name = ?`, bad).Scan(&n)
		})
		if codeOf(err) != refusal.Invalid {
			t.Errorf("queryRow with %q: %v", bad, err)
		}
		_, err = read(ctx, s, Actor{}, func(t *tx) ([]Token, error) {
			return collect(t, scanToken, `SELECT `+tokenColumns+tokenFrom+` WHERE k.name = ?`, Kind(bad))
		})
		if codeOf(err) != refusal.Invalid {
			t.Errorf("query with %q, of a named string type: %v", bad, err)
		}
		_, err = write(ctx, s, Actor{}, func(t *tx) (struct{}, error) {
			_, err := t.exec(`UPDATE tokens SET name = ? WHERE id = ''`, bad)
			return struct{}{}, err
		})
		if codeOf(err) != refusal.Invalid {
			t.Errorf("exec with %q: %v", bad, err)
		}
	}
}
