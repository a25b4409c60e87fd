package mcpeffecttest

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

// A State is what the users of a server see as data, as records by key:
// a record for each task, comment or link, under a key that names it,
// such as "task/7f3c" or "task/7f3c/label/urgent". [Verify] compares the
// State before and after a call, so a difference names the record and the
// field that changed.
//
// Keys are the author's to choose; they need only be stable, so that the
// same record has the same key before and after a call, and values
// deterministic: a list read without an ORDER BY may come back in another
// order, which is a change. A collection that
// grows, such as a task's labels, is best kept as records of its own (one
// a link), since a field's value is compared as a whole: a labels field
// that goes from ["a"] to ["a","b"] has changed, while a new record
// "task/7f3c/label/b" is an addition.
//
// A record's fields are what users see, which is not always a table's
// columns. In particular, a state that an empty column stands for must be
// a value: a task moved to the Trash by filling its trash_id column would
// show as a field filled, an addition, when users see a task gone. Give
// the record a field such as in_trash, false and then true (a change), or
// key the trashed task where users find it ("trash/7f3c", the task's key
// removed).
//
// State leaves out what users do not see as data: bookkeeping such as an
// updated_at column, a last-used time or the activity log. What a state
// function leaves out is best kept to one short list, each entry with the
// reason it is not data, since what it leaves out [Verify] cannot see.
type State map[string]Record

// A Record is the fields of one record of a [State], by name.
//
// A value is compared by its JSON encoding, so it may be any value that
// encoding/json marshals: a string, a number, a time.Time, a slice, a
// struct. A value that is null, "", an empty list or an empty object is
// empty, exactly as a field that is absent is: all empty values are equal,
// and giving an empty field a value adds to the record rather than
// changing it. false and 0 are values, not empty.
type Record map[string]any

// snapshot is a State in canonical form: each value that is not empty, as
// compact JSON with object keys sorted and numbers as written. Empty values
// are left out, so that an absent field and an empty one compare equal.
// Being a copy, it cannot change when the server changes its own data.
type snapshot map[string]map[string]string

// canonical converts s into a snapshot, or returns an error naming the
// record and field of a value that does not marshal.
func canonical(s State) (snapshot, error) {
	snap := make(snapshot, len(s))
	for key, rec := range s {
		fields := make(map[string]string, len(rec))
		for name, v := range rec {
			text, err := canonicalJSON(v)
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

// canonicalJSON returns v as compact JSON with object keys sorted, or ""
// if v is empty.
func canonicalJSON(v any) (string, error) {
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
	switch d := decoded.(type) {
	case nil:
		return "", nil
	case string:
		if d == "" {
			return "", nil
		}
	case []any:
		if len(d) == 0 {
			return "", nil
		}
	case map[string]any:
		if len(d) == 0 {
			return "", nil
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the text is read by people, not put in a page
	if err := enc.Encode(decoded); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// A changeKind says how a record or a field differs between two snapshots.
type changeKind uint8

const (
	recordAdded   changeKind = iota // a record that did not exist
	fieldFilled                     // a value in a field that was empty
	fieldChanged                    // a value replaced by another
	fieldCleared                    // a value removed, leaving the field empty
	recordRemoved                   // a record that no longer exists
)

// destroys reports whether a change loses a value that existed before it.
func (k changeKind) destroys() bool {
	return k == fieldChanged || k == fieldCleared || k == recordRemoved
}

// A change is one difference between two snapshots. before and after hold
// the field's values, or for a whole record its fields as a JSON object;
// "" is empty.
type change struct {
	kind          changeKind
	key, field    string
	before, after string
}

// diff returns every difference from before to after, ordered by record
// key and then field name.
func diff(before, after snapshot) []change {
	var changes []change
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
			changes = append(changes, change{kind: recordAdded, key: key, after: recordJSON(a)})
			continue
		case !inAfter:
			changes = append(changes, change{kind: recordRemoved, key: key, before: recordJSON(b)})
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
			var kind changeKind
			switch {
			case bv == av:
				continue
			case bv == "":
				kind = fieldFilled
			case av == "":
				kind = fieldCleared
			default:
				kind = fieldChanged
			}
			changes = append(changes, change{kind: kind, key: key, field: name, before: bv, after: av})
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
	maxShownChanges = 20
	maxShownValue   = 200 // bytes of one value
)

// String describes c on one line, for a failure.
func (c change) String() string {
	switch c.kind {
	case recordAdded:
		return fmt.Sprintf("record %q added: %s", c.key, shown(c.after))
	case recordRemoved:
		return fmt.Sprintf("record %q removed; it was %s", c.key, shown(c.before))
	}
	return fmt.Sprintf("record %q, field %q: %s → %s", c.key, c.field, shown(c.before), shown(c.after))
}

// describe writes changes one a line, each indented by a tab, showing at
// most maxShownChanges of them.
func describe(changes []change) string {
	var b strings.Builder
	for i, c := range changes {
		if i == maxShownChanges {
			fmt.Fprintf(&b, "\n\t… and %d more", len(changes)-i)
			break
		}
		b.WriteString("\n\t")
		b.WriteString(c.String())
	}
	return b.String()
}

// shown returns a value's JSON for a failure, "empty" for an empty value,
// made printable and cut at maxShownValue bytes.
func shown(text string) string {
	if text == "" {
		return "empty"
	}
	return printable(text, maxShownValue)
}

// printable returns text cut at max bytes on a character boundary, with
// every character that is not printable escaped, so that a hostile value
// (a right-to-left override, a terminal escape) cannot disguise a report.
func printable(text string, max int) string {
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
