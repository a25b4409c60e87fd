package effectproof

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// roundTrip is CanonicalJSON for any value: marshalled, decoded, and
// encoded again. The plain values that CanonicalJSON encodes once must
// come out of it as they come out of this.
func roundTrip(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var decoded any
	if err := dec.Decode(&decoded); err != nil {
		return "", err
	}
	if empty(decoded) {
		return "", nil
	}
	return encode(decoded)
}

// plainValues are values of every kind a state's source decodes, with
// the text that sets encoders apart: markup, line and paragraph
// separators, control characters, NUL, bytes that are not UTF-8.
var plainValues = []any{
	nil, true, false, "", "Milk", "<b>&amp;</b>", "a\u2028b\u2029c", "\x00\x01\x1f\x7f", "tab\there\nline\r\"q\"\\",
	"bad \xff byte", "\u202eevil", "e\u0301", json.Number("12345678901234567890"), json.Number("1e400"), json.Number("-0.0"),
	json.Number(""), 0, 42, int64(-7), []any{}, map[string]any{}, []any{nil, "", []any{}, map[string]any{}},
	map[string]any{"b": 1, "a": map[string]any{"\xff": "x", "d": []any{json.Number("2")}, "c": "<"}, "": nil},
	map[string]any{"k\u2028": []any{true, json.Number("0.5"), "\x00"}},
}

// TestCanonicalPlain holds CanonicalJSON on plain values, which it
// encodes once, to the round trip it makes of any other value.
func TestCanonicalPlain(t *testing.T) {
	for _, v := range plainValues {
		got, err := CanonicalJSON(v)
		want, wantErr := roundTrip(v)
		if got != want || (err == nil) != (wantErr == nil) {
			t.Errorf("CanonicalJSON(%#v) = %q, %v; the round trip gives %q, %v", v, got, err, want, wantErr)
		}
	}
	if _, err := CanonicalJSON(json.Number("not a number")); err == nil {
		t.Error("an invalid number encoded")
	}
}

// FuzzCanonicalPlain decodes any JSON text as a state's source does and
// holds CanonicalJSON on it to the round trip.
func FuzzCanonicalPlain(f *testing.F) {
	for _, v := range plainValues {
		raw, _ := json.Marshal(v)
		f.Add(raw)
	}
	f.Add([]byte(`{"a":[1,2,{"b":"\u2028\ud800"}],"c":"\u003c"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		got, err := CanonicalJSON(v)
		want, wantErr := roundTrip(v)
		if got != want || (err == nil) != (wantErr == nil) {
			t.Errorf("CanonicalJSON of %q = %q, %v; the round trip gives %q, %v", data, got, err, want, wantErr)
		}
	})
}

// BenchmarkCanonical measures CanonicalJSON on a field as a JSON state
// decodes it, a list of 100,000 numbers, against the round trip it made
// of every value before (the baseline, in the same run).
func BenchmarkCanonical(b *testing.B) {
	dec := json.NewDecoder(strings.NewReader("[" + strings.Repeat("0,", 99_999) + "0]"))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		f    func(any) (string, error)
	}{{"roundtrip", roundTrip}, {"CanonicalJSON", CanonicalJSON}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.f(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
