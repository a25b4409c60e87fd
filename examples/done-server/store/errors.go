package store

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
)

// An Error is a request that the domain refuses (see [refusal.Error]).
// Its message names the problem in words meant for the caller, such as
// `task "0199..." is in the Trash: restore it first`.
type Error = refusal.Error

func invalidf(format string, args ...any) error {
	return refusal.New(refusal.Invalid, format, args...)
}

func notFoundf(format string, args ...any) error {
	return refusal.New(refusal.NotFound, format, args...)
}

func conflictf(format string, args ...any) error {
	return refusal.New(refusal.Conflict, format, args...)
}

func forbiddenf(format string, args ...any) error {
	return refusal.New(refusal.Forbidden, format, args...)
}

// Limits on text, in characters.
const (
	MaxName = 200   // titles, names, labels
	MaxText = 20000 // descriptions, notes, comments, reasons
)

// within returns err, a refusal of one item of a list, with the item
// named first, such as `steps[2]: text must not be empty`; any other
// error as it is.
func within(item string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Code: e.Code, Message: item + ": " + e.Message}
	}
	return err
}

// checkID returns an error unless id, the argument called field, is an id
// this store could have made.
func checkID(field, id string) error {
	if id == "" {
		return invalidf("%s is required", field)
	}
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return invalidf("%s %s is not a valid id (ids look like 0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b)", field, quote(id))
	}
	return nil
}

// checkOptionalID is checkID for a reference that may be left empty.
func checkOptionalID(field, id string) error {
	if id == "" {
		return nil
	}
	return checkID(field, id)
}

// checkName returns an error unless s, the argument called field, is a
// one-line name of 1 to MaxName characters.
func checkName(field, s string) error {
	if err := checkText(field, s, MaxName); err != nil {
		return err
	}
	if strings.TrimSpace(s) == "" {
		return invalidf("%s must not be empty", field)
	}
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return invalidf("%s must be one line without control characters (found %q at byte %d)", field, r, i)
	}
	return nil
}

// checkStorable returns an error unless s, the argument called field, is
// text that both stores keep as it is: valid UTF-8, without a NUL.
// PostgreSQL refuses either in text, with an error of its own that would
// reach the caller as Done's internal error, where SQLite keeps them; so
// that the two stores answer alike, and the caller is told which
// argument is wrong, it is the one check of what a store refuses. Every
// check of text and of names calls it ([checkText], [checkName],
// [normalizeName]), and so does every query for every string it sends
// ([storableArgs]), so that none reaches SQL unchecked.
func checkStorable(field, s string) error {
	if !utf8.ValidString(s) {
		return invalidf("%s is not valid UTF-8 text", field)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return invalidf("%s must not contain NUL characters", field)
	}
	return nil
}

// checkText returns an error unless s, the argument called field, is valid
// text of at most max characters.
//
// JSON decoders replace invalid UTF-8 with U+FFFD, the replacement
// character, before the store sees it; refusing that character is how a
// request with invalid UTF-8 gets an error instead of silently mangled text.
func checkText(field, s string, max int) error {
	if err := checkStorable(field, s); err != nil {
		return err
	}
	if strings.ContainsRune(s, utf8.RuneError) {
		return invalidf("%s is not valid UTF-8 text", field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return invalidf("%s is %d characters long; at most %d are allowed", field, n, max)
	}
	return nil
}

// quote quotes s for an error message, cut short after maxQuoted
// characters if it is longer. The cut falls between characters, never
// inside one; and what it shows is Go's quoting (strconv.Quote), which
// escapes every character that is not printable, control and format
// characters included (U+0000 as \x00, U+202E, which turns the text
// after it right to left, as \u202e), and every byte that is not UTF-8:
// the text of a caller can neither break the message nor disguise it.
func quote(s string) string {
	const maxQuoted = 60
	if utf8.RuneCountInString(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := 0
	for range maxQuoted {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return strconv.Quote(s[:cut]) + "..."
}
