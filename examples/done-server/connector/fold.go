package connector

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// Matching ignores case the way [strings.EqualFold] does: rune by rune,
// under Unicode simple case folding. Lower-casing a text and searching the
// copy would give offsets into the copy, which are not offsets into the
// text: U+023A (Ⱥ, 2 bytes) lower-cases to U+2C65 (ⱥ, 3 bytes), and the
// Kelvin sign (3 bytes) to k (1 byte). So the text is folded to a copy in
// which every rune (or byte of invalid UTF-8) is exactly one rune, the
// match is found in the copy, and its position is carried back to the text
// by counting runes, never by reusing a byte offset of the copy.

// foldRune returns the representative of r's case folding orbit: the
// smallest rune that folds to the same as r. Two runes are equal ignoring
// case, as EqualFold sees it, exactly when their representatives are.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		// The orbits of ASCII letters hold only their two cases and, for
		// k and s, a rune above ASCII: the upper case is the smallest.
		if 'a' <= r && r <= 'z' {
			r -= 'a' - 'A'
		}
		return r
	}
	if r < rune(len(foldTable)) {
		return foldTable[r]
	}
	return foldOrbit(r)
}

// foldOrbit returns the smallest rune of r's case folding orbit.
func foldOrbit(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// foldTable holds foldOrbit of every rune of one or two bytes in UTF-8
// (Latin, Greek, Cyrillic, Hebrew, Arabic...), most of the runes of a
// text besides the ASCII that foldRune handles itself: one lookup instead
// of a walk of the orbit, each step of which searches Unicode's tables.
var foldTable = func() *[0x800]rune {
	var t [0x800]rune
	for r := range rune(len(t)) {
		t[r] = foldOrbit(r)
	}
	return &t
}()

// fold returns s with every rune replaced by its representative (see
// foldRune), and every byte that is not valid UTF-8 by U+FFFD: one rune
// of the result for each rune or invalid byte of s, in order.
func fold(s string) string {
	return string(foldBytes(s))
}

// foldBytes is fold, without the copy to a string.
func foldBytes(s string) []byte {
	b := make([]byte, 0, len(s)+len(s)/8)
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, foldRune(r))
		i += n
	}
	return b
}

// advance returns the byte offset in s after its first n runes, counting
// a byte that is not valid UTF-8 as one rune, as fold does; from is an
// offset of s at which a rune starts, and counting begins there.
func advance(s string, from, n int) int {
	i := from
	for ; n > 0 && i < len(s); n-- {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// A folded is a text and its folded copy (see foldBytes).
type folded struct {
	text   string
	folded []byte
}

// indexFold returns the byte offsets [start, end) in text of the first
// match of needle, ignoring case (see foldRune), or -1, -1 if there is
// none. needle must have been folded with fold. The offsets are offsets of
// text, at boundaries of its runes, whatever the case mapping did to byte
// lengths and whatever bytes text holds. An empty needle matches at 0.
func (f folded) indexFold(needle string) (start, end int) {
	at := bytes.Index(f.folded, []byte(needle))
	if at < 0 {
		return -1, -1
	}
	// A needle made by fold is valid UTF-8, and so is f.folded: a match
	// starts on a rune of the folded copy, the same rune in number as in
	// text.
	before := utf8.RuneCount(f.folded[:at])
	start = advance(f.text, 0, before)
	end = advance(f.text, start, utf8.RuneCountInString(needle))
	return start, end
}
