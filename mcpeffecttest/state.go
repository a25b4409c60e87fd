package mcpeffecttest

import "github.com/mcpeffect/mcpeffect/internal/effectproof"

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

// The engine's names, as this package's code calls them: the proof
// lives in internal/effectproof, which mcpeffect verify shares.
func canonical(s State) (effectproof.Snapshot, error) { return effectproof.Canonical(s) }
func shown(text string) string                        { return effectproof.Shown(text) }
func printable(text string, max int) string {
	return effectproof.Printable(text, max)
}
