package mcpeffect

import (
	"hash/maphash"
	"iter"
	"maps"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
)

// An entry is what the registry keeps of a tool: its classification,
// and what each scope may call of it.
type entry struct {
	// effect is the tool's effect; for a tool with a rule, the worst case
	// of its outcomes.
	effect Effect
	// callers has bit s set when Scope s may make every call of the tool,
	// so that Allowed is a bit test; some, when s may make at least one
	// (for a tool without a rule, the same).
	callers, some uint8
	// least is the least scope that may make some call of the tool.
	least Scope
	rule  *EffectRule // nil for a tool with one effect
	// raw reports that the raw arguments of a call give, where they give
	// it with certainty, what the rule computes from the handler's input
	// (see EffectRule.CallEffect), so that the middleware, the HTTP
	// challenge and tool resolution may compute the effect of a call;
	// schema is then the tool's input schema, with which tool resolution
	// validates them.
	raw    bool
	schema *jsonschema.Resolved
	// wrapped reports a tool added with AddTool or AddToolHandler, whose
	// wrapper decides a call that the raw arguments leave uncertain from
	// the input its handler receives, and tells the idempotency of a call
	// whether its handler ran. A tool classified with Add or AddRule has
	// no such wrapper: its raw arguments decide, whatever they give.
	wrapped bool
}

// unknown is the entry of every tool the registry does not know. No one
// changes it.
var unknown entry

// A toolTable is the table of a Registry's tools, in two parts, since a
// tool's classification is fixed once added:
//
//   - base, a Go map that is never written once the table is published,
//     so that readers need no lock and a lookup costs what a lookup in a
//     plain map does; its values carry the callers' bits, so that
//     Allowed reads nothing else;
//   - recent, the tools added since base was made: a hash table with
//     open addressing whose slots, once filled, never change, so that a
//     slot holds nil or a complete entry, published by an atomic store,
//     and adding a tool fills one slot.
//
// Adding a tool to a small table makes a new base with it (copying a map
// of at most smallTable tools); beyond, a tool goes to recent until
// recent holds a quarter of base, and then base and recent are merged
// into a new base. The merges copy geometrically growing tables, so
// adding n tools one by one costs time in proportion to n (copying the
// whole table at each Add cost time in proportion to n²), and at least
// four fifths of a large table's tools are in base.
//
// A nil *toolTable is empty.
type toolTable struct {
	base map[string]baseEntry // never written once published

	seed  maphash.Seed
	slots []atomic.Pointer[toolEntry] // a power of two long, or empty
	n     int                         // filled slots; written under Registry.mu
	count atomic.Int64                // n, for readers
}

// smallTable is the size up to which a table keeps every tool in base.
const smallTable = 256

type baseEntry struct {
	callers uint8 // the entry's, for Allowed
	te      *toolEntry
}

type toolEntry struct {
	name string
	entry
}

// find returns the entry of name, or nil.
func (t *toolTable) find(name string) *toolEntry {
	if t == nil {
		return nil
	}
	if b, ok := t.base[name]; ok {
		return b.te
	}
	return t.findRecent(name)
}

// callers returns the callers' bits of the tool called name: 0 for a name
// t does not know.
func (t *toolTable) callers(name string) uint8 {
	if t == nil {
		return 0
	}
	if b, ok := t.base[name]; ok {
		return b.callers
	}
	if te := t.findRecent(name); te != nil {
		return te.callers
	}
	return 0
}

func (t *toolTable) findRecent(name string) *toolEntry {
	if len(t.slots) == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := maphash.String(t.seed, name) & mask; ; i = (i + 1) & mask {
		te := t.slots[i].Load()
		if te == nil || te.name == name {
			return te
		}
	}
}

// with returns t with the entries of add: t itself, with them in recent
// slots, or a new table that the caller must publish. Registry.mu is held,
// and no entry of add is in t.
func (t *toolTable) with(add ...*toolEntry) *toolTable {
	base, recent := 0, 0
	if t != nil {
		base, recent = len(t.base), t.n
	}
	total := base + recent + len(add)
	if total <= smallTable || 4*(recent+len(add)) > base {
		return t.merged(add...)
	}
	if 2*(recent+len(add)) > len(t.slots) {
		// Recent slots twice as many as needed, which keeps probes short
		// and one slot always empty, where a probe for an unknown name
		// ends.
		size := 16
		for 2*(recent+len(add)) > size {
			size *= 2
		}
		next := &toolTable{base: t.base, seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[toolEntry], size)}
		for te := range t.recent() {
			next.put(te)
		}
		for _, te := range add {
			next.put(te)
		}
		return next
	}
	for _, te := range add {
		t.put(te)
	}
	return t
}

// merged returns a new table whose base holds the entries of t and add,
// and whose recent slots are empty. Registry.mu is held, and no entry of
// add is in t.
func (t *toolTable) merged(add ...*toolEntry) *toolTable {
	next := &toolTable{base: make(map[string]baseEntry, t.len()+len(add))}
	if t != nil {
		maps.Copy(next.base, t.base)
	}
	for te := range t.recent() {
		next.base[te.name] = baseEntry{te.callers, te}
	}
	for _, te := range add {
		next.base[te.name] = baseEntry{te.callers, te}
	}
	return next
}

// put fills the recent slot of te.name, which t does not hold and has room
// for.
func (t *toolTable) put(te *toolEntry) {
	mask := uint64(len(t.slots) - 1)
	i := maphash.String(t.seed, te.name) & mask
	for t.slots[i].Load() != nil {
		i = (i + 1) & mask
	}
	t.slots[i].Store(te)
	t.n++
	t.count.Store(int64(t.n))
}

// len returns the number of entries.
func (t *toolTable) len() int {
	if t == nil {
		return 0
	}
	return len(t.base) + int(t.count.Load())
}

// all yields every entry, in no order.
func (t *toolTable) all() iter.Seq[*toolEntry] {
	return func(yield func(*toolEntry) bool) {
		if t == nil {
			return
		}
		for _, b := range t.base {
			if !yield(b.te) {
				return
			}
		}
		for te := range t.recent() {
			if !yield(te) {
				return
			}
		}
	}
}

// recent yields the entries of the recent slots, in no order.
func (t *toolTable) recent() iter.Seq[*toolEntry] {
	return func(yield func(*toolEntry) bool) {
		if t == nil {
			return
		}
		for i := range t.slots {
			if te := t.slots[i].Load(); te != nil && !yield(te) {
				return
			}
		}
	}
}
