package mcpeffect

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash"
	"maps"
	"math/big"
	"slices"
	"strings"
)

// The fingerprint of a call is what SEP-3182 compares two calls under one
// idempotency key by: the tool's name and its arguments as parsed JSON
// values, so that key order, spaces, escapes and the writing of numbers
// (1, 1.0, 10e-1) make no difference, and any other difference does. It
// is the SHA-256 of a canonical form written as the value is walked:
// every string length-prefixed, so that no two values write the same
// bytes; the members of an object sorted by name (a name given twice
// counts once, with its last value, as encoding/json and go-sdk decode
// it); a number as its exact decimal value (sign, digits without the
// zeros that do not count, and a power of ten), so that numbers beyond
// float64's precision stay apart. No Unicode normalization is done
// beyond what parsing does, as the draft says.

// fingerprint returns the fingerprint of a call of tool with the raw
// arguments args. Absent or null arguments are {}, which is what a
// handler receives for either.
func fingerprint(tool string, args json.RawMessage) ([sha256.Size]byte, error) {
	h := sha256.New()
	writeString(h, "mcpeffect call v1")
	writeString(h, tool)
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return [sha256.Size]byte{}, err
	}
	if dec.More() {
		return [sha256.Size]byte{}, errors.New("the arguments hold more than one JSON value")
	}
	if err := writeCanonical(h, v); err != nil {
		return [sha256.Size]byte{}, err
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum, nil
}

func writeString(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

// writeCanonical writes v, a value decoded with UseNumber, to h.
func writeCanonical(h hash.Hash, v any) error {
	switch v := v.(type) {
	case nil:
		h.Write([]byte{'n'})
	case bool:
		if v {
			h.Write([]byte{'t'})
		} else {
			h.Write([]byte{'f'})
		}
	case json.Number:
		c, err := canonicalNumber(string(v))
		if err != nil {
			return err
		}
		h.Write([]byte{'d'})
		writeString(h, c)
	case string:
		h.Write([]byte{'s'})
		writeString(h, v)
	case []any:
		h.Write([]byte{'['})
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(v)))
		h.Write(n[:])
		for _, e := range v {
			if err := writeCanonical(h, e); err != nil {
				return err
			}
		}
	case map[string]any:
		h.Write([]byte{'{'})
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(v)))
		h.Write(n[:])
		for _, k := range slices.Sorted(maps.Keys(v)) {
			writeString(h, k)
			if err := writeCanonical(h, v[k]); err != nil {
				return err
			}
		}
	default:
		return errors.New("not a JSON value")
	}
	return nil
}

// canonicalNumber returns the exact value of lit, a JSON number, in one
// form for every writing of it: "0" for zero (and -0), else an optional
// "-", the significant digits without leading or trailing zeros, "e" and
// the power of ten they are multiplied by, so that 1, 1.0, 10e-1 and
// 0.1e1 are all "1e0", and 100 is "1e2".
func canonicalNumber(lit string) (string, error) {
	s := lit
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	mant, exp, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mant, exp, hasExp = strings.Cut(s, "E")
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return "0", nil
	}
	trimmed := strings.TrimRight(digits, "0")
	// The value is digits × 10^(exp - len(frac)), and then × 10^zeros
	// for the trailing zeros dropped.
	power := new(big.Int)
	if hasExp {
		if _, ok := power.SetString(strings.TrimPrefix(exp, "+"), 10); !ok {
			return "", errors.New("a number with an exponent that is not a number: " + lit)
		}
	}
	power.Sub(power, big.NewInt(int64(len(frac))))
	power.Add(power, big.NewInt(int64(len(digits)-len(trimmed))))
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + power.String(), nil
}
