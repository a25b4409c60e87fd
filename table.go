package mcpeffect

import (
	"hash/maphash"
	"iter"
	"sync/atomic"
)

// A toolTable is the table of a Registry's tools: a hash table with open
// addressing whose slots, once filled, never change, since a tool's
// classification is fixed once added. So readers need no lock: a slot
// holds nil or a complete entry, published by an atomic store (a plain
// store on amd64 and arm64), and a lookup is one hash and one probe, as
// in a Go map. Adding a tool fills one slot, in constant time; a table
// that would be more than half full is replaced by one twice its size,
// so that adding n tools one by one costs time in proportion to n
// (copying the whole table at each Add cost time in proportion to n²).
//
// A nil *toolTable is empty.
type toolTable struct {
	seed  maphash.Seed
	slots []atomic.Pointer[toolEntry] // a power of two long
	n     int                         // filled slots; written under Registry.mu
	count atomic.Int64                // n, for readers
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
	mask := uint64(len(t.slots) - 1)
	for i := maphash.String(t.seed, name) & mask; ; i = (i + 1) & mask {
		te := t.slots[i].Load()
		if te == nil || te.name == name {
			return te
		}
	}
}

// full reports whether adding k entries to t would fill more than half of
// its slots, which keeps probes short (and one slot always empty, where a
// probe for an unknown name ends).
func (t *toolTable) full(k int) bool {
	return t == nil || 2*(t.n+k) > len(t.slots)
}

// grown returns a new table with the entries of t and room for k more.
func (t *toolTable) grown(k int) *toolTable {
	size := 16
	for 2*(t.len()+k) > size {
		size *= 2
	}
	next := &toolTable{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[toolEntry], size)}
	for te := range t.all() {
		next.put(te)
	}
	return next
}

// put fills the slot of te.name, which t does not hold and has room for.
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
	return int(t.count.Load())
}

// all yields every entry, in no order.
func (t *toolTable) all() iter.Seq[*toolEntry] {
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
