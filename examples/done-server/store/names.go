package store

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// The name of a person or an agent is who did what in Done: the author of
// a comment, the assignee of a task, who asked and who approved. It must
// not pass for another, so tokens are named under these rules:
//
//   - It is normalised: Unicode NFKC (so fullwidth, mathematical and other
//     compatibility forms become the letters they stand for), trimmed, and
//     any run of spaces inside it made one space.
//   - It holds no character that cannot be seen: no control (Cc) or format
//     (Cf) character, such as a zero-width space or a bidirectional
//     control, no variation selector or other default-ignorable code
//     point, no private-use, surrogate or unassigned one.
//   - Its letters are of one script, or of a combination that a language
//     writes with (Japanese: Han, Hiragana, Katakana and Latin; Chinese:
//     Han, Bopomofo and Latin; Korean: Han, Hangul and Latin). A name that
//     mixes others, such as a Latin name with one Cyrillic а, is refused:
//     most look-alike names are made that way.
//   - It is at most MaxPersonName characters long.
//   - It is not another name in disguise: one that matches an existing
//     name once both are case-folded (full Unicode folding, so "ß" is
//     "ss"), or once both are reduced to their skeleton, which maps the
//     common confusables of Latin, Cyrillic and Greek (Cyrillic "о",
//     Greek "ο" and the digit "0" for "o"; "I", "1" and "l"; "rn" for
//     "m"...) to one letter, is refused. A name written whole in another
//     script that reads as an existing Latin one ("асе", Cyrillic, against
//     "ace") is caught there.
//
// The skeleton is a short, reviewed list of the confusables that matter
// for names typed by people, not the whole of Unicode's confusables data:
// together with the one-script rule, it stops the look-alikes that a
// reader would take for another name, at the cost of refusing now and
// then a name that is merely similar.

// MaxPersonName is the longest name of a person or an agent, in
// characters.
const MaxPersonName = 64

// normalizeName returns the canonical form of name, the argument called
// field, under the rules above, or an error saying which rule it breaks.
// It does not look at the names that exist: see [tx.checkNameFree].
func normalizeName(field, name string) (string, error) {
	// Bound the work before normalising, which can grow a string.
	if err := checkText(field, name, 4*MaxPersonName); err != nil {
		return "", err
	}
	if err := checkVisible(field, name); err != nil {
		return "", err
	}
	n := strings.Join(strings.Fields(norm.NFKC.String(name)), " ")
	if err := checkVisible(field, n); err != nil {
		return "", err
	}
	if n == "" {
		return "", invalidf("%s must not be empty", field)
	}
	if count := utf8.RuneCountInString(n); count > MaxPersonName {
		return "", invalidf("%s is %d characters long; a name may have at most %d", field, count, MaxPersonName)
	}
	if scripts := nameScripts(n); !oneWriting(scripts) {
		return "", invalidf("%s %s mixes letters of %s, which would let it pass for another name: write it in one script",
			field, quote(n), strings.Join(scripts, " and "))
	}
	return n, nil
}

// checkVisible returns an error if s holds a character that cannot be
// seen, or that changes how the text around it shows.
func checkVisible(field, s string) error {
	for i, r := range []rune(s) {
		if r == ' ' {
			continue
		}
		// The braille blank is a symbol that shows as nothing.
		if r == '\u2800' {
			return invalidf("%s must be one line of visible characters: character %d is %U, which shows as a blank", field, i+1, r)
		}
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) ||
			!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z) {
			return invalidf("%s must be one line of visible characters: character %d is %U, a control, format or invisible character", field, i+1, r)
		}
	}
	return nil
}

// writings are the sets of scripts that one language writes with; a name
// may use letters of one script, or of one of these sets.
var writings = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// nameScripts returns the scripts of the letters of s, in the order they
// first appear; Common and Inherited characters (digits, punctuation,
// combining marks) belong to none.
func nameScripts(s string) []string {
	var scripts []string
	for _, r := range s {
		if !unicode.IsLetter(r) {
			continue
		}
		for name, table := range unicode.Scripts {
			if name == "Common" || name == "Inherited" || !unicode.Is(table, r) {
				continue
			}
			if !contains(scripts, name) {
				scripts = append(scripts, name)
			}
			break
		}
	}
	return scripts
}

// oneWriting reports whether scripts are one script, or all of one of the
// writings.
func oneWriting(scripts []string) bool {
	if len(scripts) <= 1 {
		return true
	}
next:
	for _, w := range writings {
		for _, s := range scripts {
			if !contains(w, s) {
				continue next
			}
		}
		return true
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// foldName returns name case-folded, for comparing names whatever their
// case. It normalises name as normalizeName does, without refusing
// anything, so that it also works on names stored before those rules.
func foldName(name string) string {
	n := strings.Join(strings.Fields(norm.NFKC.String(name)), " ")
	return norm.NFKC.String(cases.Fold().String(n))
}

// skeletonName returns the skeleton of name: its folded form with the
// confusables below mapped to one letter, so that two names that read the
// same have the same skeleton.
func skeletonName(name string) string {
	n := strings.Join(strings.Fields(norm.NFKC.String(name)), " ")
	n = strings.Map(func(r rune) rune {
		if m, ok := confusableUpper[r]; ok {
			return m
		}
		return r
	}, n)
	n = norm.NFKC.String(cases.Fold().String(n))
	n = strings.Map(func(r rune) rune {
		if m, ok := confusableLower[r]; ok {
			return m
		}
		return r
	}, n)
	return confusableRuns.Replace(n)
}

// confusableUpper maps the capitals that look like a Latin letter, before
// case folding, since folding makes them differ: Latin "I" looks like "l",
// not like "i", and Cyrillic "В" like "B", not like "в".
var confusableUpper = map[rune]rune{
	'I': 'l',
	// Cyrillic
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'Х': 'X', 'У': 'Y', 'Ү': 'Y', 'І': 'l', 'Ӏ': 'l', 'Ј': 'J', 'Ѕ': 'S', 'Ԛ': 'Q', 'Ԝ': 'W',
	// Greek
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'l', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
}

// confusableLower maps, after case folding, the small letters and digits
// that look like a Latin small letter.
var confusableLower = map[rune]rune{
	'0': 'o', '1': 'l', 'ı': 'i',
	// Cyrillic
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's',
	'ԁ': 'd', 'һ': 'h', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'ү': 'y',
	// Greek
	'ο': 'o', 'α': 'a', 'ν': 'v', 'ρ': 'p', 'ι': 'i', 'κ': 'k', 'υ': 'u', 'χ': 'x', 'ϲ': 'c', 'ϳ': 'j',
}

// confusableRuns maps the pairs of Latin letters that read as one.
var confusableRuns = strings.NewReplacer("rn", "m", "vv", "w")

// checkNameFree returns an error if name, normalised, would pass for a
// name that tokens already have, other than itself: the same once
// case-folded, or the same skeleton. A name equal to an existing one is
// the same identity, which may have many tokens, and is left to the
// caller, which also checks its kind.
func (t *tx) checkNameFree(field, name string) error {
	names, err := collect(t, func(row scanner) (struct {
		name string
		kind Kind
	}, error) {
		var n struct {
			name string
			kind Kind
		}
		return n, row.Scan(&n.name, &n.kind)
	}, `SELECT DISTINCT name, kind FROM tokens ORDER BY name`)
	if err != nil {
		return err
	}
	fold, skeleton := foldName(name), skeletonName(name)
	for _, other := range names {
		switch {
		case other.name == name:
		case foldName(other.name) == fold:
			return conflictf("%s %s differs only in case from %s, the name of %s %s: pick a name no one can mistake for it",
				field, quote(name), quote(other.name), article(other.kind), other.kind)
		case skeletonName(other.name) == skeleton:
			return conflictf("%s %s looks like %s, the name of %s %s: pick a name no one can mistake for it",
				field, quote(name), quote(other.name), article(other.kind), other.kind)
		}
	}
	return nil
}
