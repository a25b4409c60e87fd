package connector

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// naiveIndexFold is the reference for indexFold: it tries every rune
// boundary of text, and compares as many runes as query has with
// strings.EqualFold. Slow, and plainly right.
func naiveIndexFold(text, query string) (start, end int) {
	n := utf8.RuneCountInString(query)
	for i := 0; i <= len(text); {
		j := advance(text, i, n)
		if strings.EqualFold(text[i:j], query) && runeCount(text[i:j]) == n {
			return i, j
		}
		if i == len(text) {
			break
		}
		i = advance(text, i, 1)
	}
	return -1, -1
}

// runeCount counts runes as fold does: an invalid byte is one.
func runeCount(s string) int { return utf8.RuneCountInString(s) }

// TestIndexFold finds matches whose case mapping changes byte lengths,
// at the edges of the text, in text that is not valid UTF-8, and checks
// each against the reference and the snippet around it.
func TestIndexFold(t *testing.T) {
	for _, c := range []struct {
		name, text, query string
		want              string // the matched bytes of text; "" for none
	}{
		{"ascii", "Ship on Friday", "friday", "Friday"},
		{"U+023A grows when lower-cased", strings.Repeat("Ⱥ", 100) + " the end", "END", "end"},
		{"U+023A in the match", "xx Ⱥb yy", "ⱥB", "Ⱥb"},
		{"a query that grows when lower-cased", "ⱥⱥⱥ match", "ȺȺȺ", "ⱥⱥⱥ"},
		{"Kelvin sign shrinks to k", strings.Repeat("\u212a", 50) + "ok", "KKok", "\u212a\u212aok"},
		{"long s folds to s", "ſecret", "SECRET", "ſecret"},
		{"match at the very start", "Friday comes", "FRIDAY", "Friday"},
		{"match at the very end", "on friday", "Friday", "friday"},
		{"the whole text", "Ⱥ", "ⱥ", "Ⱥ"},
		{"invalid UTF-8 before the match", "\xff\xfe\xc3 café", "CAFÉ", "café"},
		{"invalid UTF-8 after the match", "café\xff", "café", "café"},
		{"a cut sequence at the end", "abc\xe2\x82", "ABC", "abc"},
		{"no match", "Ship on Friday", "monday", ""},
		{"a longer query than the text", "ab", "abc", ""},
		{"Greek final sigma", "ΟΔΟΣ", "οδος", "ΟΔΟΣ"},
		{"dotted capital I does not fold to i", "İstanbul", "istanbul", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			start, end := folded{c.text, foldBytes(c.text)}.indexFold(fold(c.query))
			ws, we := naiveIndexFold(c.text, c.query)
			if start != ws || end != we {
				t.Fatalf("indexFold = [%d, %d), the reference [%d, %d)", start, end, ws, we)
			}
			got := ""
			if start >= 0 {
				got = c.text[start:end]
			}
			if got != c.want {
				t.Errorf("matched %q, want %q", got, c.want)
			}
			s := snippet(c.text, start, end)
			if !utf8.ValidString(s) || (c.want != "" && !strings.Contains(s, c.want) && utf8.ValidString(c.want)) {
				t.Errorf("snippet %q", s)
			}
		})
	}
}

// FuzzIndexFold holds indexFold to the reference on any text and query,
// and the snippet to valid UTF-8: nothing panics, whatever the bytes.
func FuzzIndexFold(f *testing.F) {
	for _, seed := range [][2]string{
		{strings.Repeat("Ⱥ", 40) + "needle", "NEEDLE"},
		{"\u212a\u212a", "kk"},
		{"\xff\xfe\xfd", "\ufffd"},
		{"ſſ", "SS"},
		{"", ""},
		{"a", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, text, query string) {
		start, end := folded{text, foldBytes(text)}.indexFold(fold(query))
		if start >= 0 && (start > end || end > len(text)) {
			t.Fatalf("[%d, %d) is not a range of a text of %d bytes", start, end, len(text))
		}
		if utf8.ValidString(text) && utf8.ValidString(query) {
			if ws, we := naiveIndexFold(text, query); start != ws || end != we {
				t.Fatalf("indexFold(%q, %q) = [%d, %d), the reference [%d, %d)", text, query, start, end, ws, we)
			}
		}
		if s := snippet(text, start, end); !utf8.ValidString(s) {
			t.Fatalf("snippet %q is not valid UTF-8", s)
		}
	})
}
