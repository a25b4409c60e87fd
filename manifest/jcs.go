package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Canonical returns the JSON text data in the JSON Canonicalization
// Scheme (RFC 8785, "JCS"): no white space, the members of each object
// sorted by the UTF-16 code units of their names, each string with the
// fewest escapes, each number as ECMAScript writes a double. It is the form
// that SEP-3140 hashes and signs, so that two parties that decode and
// write the same JSON value again (go-sdk decodes a tool's input schema
// into maps) agree on its hash.
//
// It returns an error for text that is not one JSON value, and for a
// number that does not fit in a double, which JCS cannot write.
func Canonical(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("mcpeffect: canonical JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("mcpeffect: canonical JSON: more than one JSON value")
	}
	var b bytes.Buffer
	if err := canonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// canonicalOf returns the canonical JSON of v, a Go value that
// encoding/json can write.
func canonicalOf(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("mcpeffect: canonical JSON: %w", err)
	}
	return Canonical(data)
}

func canonical(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("mcpeffect: canonical JSON: the number %s does not fit in a double", v)
		}
		b.WriteString(es6Number(f))
	case string:
		canonicalString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			canonicalString(b, k)
			b.WriteByte(':')
			if err := canonical(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("mcpeffect: canonical JSON: unexpected %T", v)
	}
	return nil
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785
// sorts the names of an object's members: a name with a character beyond
// U+FFFF (a surrogate pair) sorts before one with U+E000, as in
// ECMAScript, not after it as UTF-8 bytes would.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// canonicalString writes s as JSON.stringify does: only the quote, the
// backslash and the control characters are escaped, the usual ones by
// their short forms; everything else is written as it is, in UTF-8.
func canonicalString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// es6Number writes f as ECMAScript's Number.prototype.toString does
// (ECMA-262, 7.1.12.1), which RFC 8785 requires: the shortest digits that
// read back as f, in plain notation from 1e-6 up to 1e21, and with an
// exponent outside it.
func es6Number(f float64) string {
	if f == 0 {
		return "0" // and -0 too
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// "d.ddde±x": the shortest digits and the decimal exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mantissa, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	n := x + 1 // f = 0.digits × 10^n
	k := len(digits)
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	out := sign + digits[:1]
	if k > 1 {
		out += "." + digits[1:]
	}
	if n-1 >= 0 {
		return out + "e+" + strconv.Itoa(n-1)
	}
	return out + "e" + strconv.Itoa(n-1)
}
