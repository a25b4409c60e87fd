package connect

import (
	"strconv"
	"strings"
	"unicode"
)

// printable returns s, or s as a Go quoted string if it holds a character
// that is not printable: a server's words, in an error, cannot send
// escapes to a terminal.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// quoteShort quotes s for a message, cut to 60 characters.
func quoteShort(s string) string {
	r := []rune(s)
	if len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return strconv.Quote(s)
}
