package write

import (
	"strings"
	"testing"
)

// TestMDEscape: text a server sent cannot add markup, links, HTML, lines
// or cells to a comment.
func TestMDEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"get_note", `get\_note`},
		{"a | b", `a \| b`},
		{"<img src=x onerror=alert(1)>", `&lt;img src=x onerror=alert\(1\)&gt;`},
		{"[click](https://evil.example)", `\[click\]\(https\://evil\.example\)`},
		{"line\n| injected | row |", `"line\\n\| injected \| row \|"`}, // renders as the quoted Go string
		{"@someone **bold** `code` ~strike~ #1", `\@someone \*\*bold\*\* \` + "`" + `code\` + "`" + ` \~strike\~ \#1`},
		{"&amp;", `&amp;amp;`},
	} {
		got := mdEscape(tc.in)
		if got != tc.want {
			t.Errorf("mdEscape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.ContainsAny(got, "\n\r<>") {
			t.Errorf("mdEscape(%q) = %q holds a line break or an angle bracket", tc.in, got)
		}
	}
}
