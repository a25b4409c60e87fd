package effectproof

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Snapshot is a state in canonical form: records by key, and in each
// record each value that is not empty, as compact JSON with object keys
// sorted and numbers as written. Empty values are left out, so that an
// absent field and an empty one compare equal. Being a copy, it cannot
// change when the server changes its own data.
type Snapshot map[string]map[string]string

// Canonical converts a state, records by key each with its fields by
// name, into a Snapshot, or returns an error naming the record and field
// of a value that does not marshal.
//
// A value is compared by its JSON encoding. A value that is null, "", an
// empty list or an empty object is empty, exactly as a field that is
// absent is; false and 0 are values.
func Canonical[R ~map[string]any, S ~map[string]R](s S) (Snapshot, error) {
	snap := make(Snapshot, len(s))
	for key, rec := range s {
		fields := make(map[string]string, len(rec))
		for name, v := range rec {
			text, err := CanonicalJSON(v)
			if err != nil {
				return nil, fmt.Errorf("record %q, field %q: %v", key, name, err)
			}
			if text != "" {
				fields[name] = text
			}
		}
		snap[key] = fields
	}
	return snap, nil
}

// CanonicalJSON returns v as compact JSON with object keys sorted, or ""
// if v is empty.
func CanonicalJSON(v any) (string, error) {
	if plain(v) {
		// Already what decoding gives: encoding it once is what the
		// round trip below would give, without the decoded copy it
		// makes of every value.
		if empty(v) {
			return "", nil
		}
		return encode(v)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	// Decoding and encoding again sorts the keys of objects that a custom
	// marshaller wrote in any order; UseNumber keeps numbers as written.
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

// empty reports whether v, a value as JSON decodes it, is empty: null, "",
// [] or {}, which a record leaves out.
func empty(v any) bool {
	switch d := v.(type) {
	case nil:
		return true
	case string:
		return d == ""
	case []any:
		return len(d) == 0
	case map[string]any:
		return len(d) == 0
	}
	return false
}

// encode writes v, made only of what decoding JSON gives, as compact
// JSON with object keys sorted.
func encode(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the text is read by people, not put in a page
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// plain reports whether v is made only of what decoding JSON with
// UseNumber gives (nil, bool, json.Number, map[string]any and []any) and
// of strings and Go integers, every string and object key valid UTF-8:
// a value that encodes as its decoded copy does. A string that is not
// valid UTF-8 is not plain, since encoding writes each bad byte as an
// escape, and decoding that as the character it stands for.
func plain(v any) bool {
	switch v := v.(type) {
	case nil, bool, json.Number, int, int64:
		return true
	case string:
		return utf8.ValidString(v)
	case []any:
		for _, e := range v {
			if !plain(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for k, e := range v {
			if !utf8.ValidString(k) || !plain(e) {
				return false
			}
		}
		return true
	}
	return false
}

// A Kind says how a record or a field differs between two snapshots.
type Kind uint8

// The kinds of [Change].
const (
	RecordAdded   Kind = iota // a record that did not exist
	FieldFilled               // a value in a field that was empty
	FieldChanged              // a value replaced by another
	FieldCleared              // a value removed, leaving the field empty
	RecordRemoved             // a record that no longer exists
)

var kindNames = [...]string{"record added", "field filled", "field changed", "field cleared", "record removed"}

// String names k, as the JSON report of mcpeffect verify does: "record
// added", "field changed".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Destroys reports whether a change of kind k loses a value that existed
// before it: what only a destructive write may do.
func (k Kind) Destroys() bool {
	return k == FieldChanged || k == FieldCleared || k == RecordRemoved
}

// A Change is one difference between two snapshots. Before and After hold
// the field's values, or for a whole record its fields as a JSON object;
// "" is empty. Field is "" for a record added or removed.
type Change struct {
	Kind          Kind
	Key, Field    string
	Before, After string
}

// Diff returns every difference from before to after, ordered by record
// key and then field name.
func Diff(before, after Snapshot) []Change {
	var changes []Change
	keys := slices.Sorted(maps.Keys(before))
	for key := range after {
		if _, ok := before[key]; !ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		b, inBefore := before[key]
		a, inAfter := after[key]
		switch {
		case !inBefore:
			changes = append(changes, Change{Kind: RecordAdded, Key: key, After: recordJSON(a)})
			continue
		case !inAfter:
			changes = append(changes, Change{Kind: RecordRemoved, Key: key, Before: recordJSON(b)})
			continue
		}
		names := slices.Sorted(maps.Keys(b))
		for name := range a {
			if _, ok := b[name]; !ok {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		for _, name := range names {
			bv, av := b[name], a[name]
			var kind Kind
			switch {
			case bv == av:
				continue
			case bv == "":
				kind = FieldFilled
			case av == "":
				kind = FieldCleared
			default:
				kind = FieldChanged
			}
			changes = append(changes, Change{Kind: kind, Key: key, Field: name, Before: bv, After: av})
		}
	}
	return changes
}

// recordJSON writes the fields of a record, already JSON, as one object.
func recordJSON(fields map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, name := range slices.Sorted(maps.Keys(fields)) {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(name) // a string always marshals
		b.Write(key)
		b.WriteByte(':')
		b.WriteString(fields[name])
	}
	b.WriteByte('}')
	return b.String()
}

// Limits on what a failure shows, so that a tool that rewrites a table or
// a field that holds a document does not bury the report.
const (
	MaxShownChanges = 20
	MaxShownValue   = 200 // bytes of one value
	MaxShownError   = 500 // bytes of an error's text
)

// String describes c on one line, for a failure. Record keys and field
// names are quoted by %q, which escapes what is not printable; values are
// made printable by [Shown].
func (c Change) String() string {
	switch c.Kind {
	case RecordAdded:
		return fmt.Sprintf("record %q added: %s", c.Key, Shown(c.After))
	case RecordRemoved:
		return fmt.Sprintf("record %q removed; it was %s", c.Key, Shown(c.Before))
	}
	return fmt.Sprintf("record %q, field %q: %s → %s", c.Key, c.Field, Shown(c.Before), Shown(c.After))
}

// Describe writes changes one a line, each indented by a tab, showing at
// most MaxShownChanges of them.
func Describe(changes []Change) string {
	var b strings.Builder
	for i, c := range changes {
		if i == MaxShownChanges {
			fmt.Fprintf(&b, "\n\t… and %d more", len(changes)-i)
			break
		}
		b.WriteString("\n\t")
		b.WriteString(c.String())
	}
	return b.String()
}

// Shown returns a value's JSON for a failure, "empty" for an empty value,
// made printable and cut at MaxShownValue bytes.
func Shown(text string) string {
	if text == "" {
		return "empty"
	}
	return Printable(text, MaxShownValue)
}

// Printable returns text cut at max bytes on a character boundary, with
// every character that is not printable escaped, so that a hostile value
// (a right-to-left override, a terminal escape) cannot disguise a report.
func Printable(text string, max int) string {
	cut := ""
	if len(text) > max {
		n := max
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		cut = fmt.Sprintf("… (%d bytes in all)", len(text))
		text = text[:n]
	}
	var b strings.Builder
	for _, r := range text {
		switch {
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	return b.String() + cut
}
