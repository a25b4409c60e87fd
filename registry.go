package mcpeffect

import (
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Registry holds one [Effect] per tool name. From that one classification
// it derives what a server advertises ([Registry.Annotations]) and what it
// enforces ([Registry.Allowed]).
//
// A tool's classification is fixed once added: there is no way to change or
// remove it, so a check that passed cannot be undone by a later call.
//
// A Registry is safe for concurrent use: tools may be added while calls are
// being checked. Lookups take no lock and allocate nothing.
type Registry struct {
	// The design is that of sync.Map's two maps, specialised to a map that
	// only grows. read is an immutable snapshot, loaded atomically on every
	// lookup. Tools added since the snapshot was taken live in dirty, a
	// superset of read guarded by mu; once lookups have missed read as many
	// times as dirty has entries, dirty becomes the new snapshot. Adding
	// n tools therefore costs O(n) in all, not the O(n²) of copying the
	// table on every Add.
	//
	// read is loaded by every core on every lookup and written almost
	// never: the padding keeps it on a cache line of its own, which no
	// write to a neighbouring object can invalidate (without it, a
	// parallel benchmark ran at 6 or 16 ns a lookup depending on where the
	// allocator put the Registry).
	_    [cacheLinePad]byte
	read atomic.Pointer[snapshot]
	_    [cacheLinePad - 8]byte

	mu     sync.Mutex
	dirty  map[string]entry // nil when read holds every tool
	misses int
}

// cacheLinePad is at least the size of a cache line: 64 bytes on most
// processors, 128 on some arm64 ones.
const cacheLinePad = 128

// A snapshot is immutable once stored in Registry.read. It is padded, as
// Registry.read is, because every lookup reads it.
type snapshot struct {
	_       [cacheLinePad]byte
	tools   map[string]entry
	pending bool // dirty holds tools that tools does not
	_       [cacheLinePad - 16]byte
}

type entry struct {
	effect Effect
	need   Scope // the least scope allowed to call the tool
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{}
}

// Add classifies the tool called name with effect e.
//
// It returns an error, and leaves the registry unchanged, when name is not a
// valid MCP tool name (1 to 128 characters among A-Z a-z 0-9 _ - .), when
// e is not valid (see [Effect.Valid]), or when name is already classified
// (the first classification stays). The error wraps [ErrInvalidToolName],
// [ErrInvalidEffect] or [ErrAlreadyClassified].
func (r *Registry) Add(name string, e Effect) error {
	if err := validateEntry(name, e); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.lookupLocked(name); ok {
		return ruleErrorf(ErrAlreadyClassified, "mcpeffect: tool %q is already classified as %s", name, old.effect)
	}
	if r.dirty == nil {
		snap := r.read.Load()
		n := 1
		if snap != nil {
			n += len(snap.tools)
		}
		r.dirty = make(map[string]entry, n)
		if snap != nil {
			for k, v := range snap.tools {
				r.dirty[k] = v
			}
			r.read.Store(&snapshot{tools: snap.tools, pending: true})
		} else {
			r.read.Store(&snapshot{pending: true})
		}
	}
	r.dirty[name] = entry{effect: e, need: e.required()}
	return nil
}

// lookup finds name without a lock when the snapshot has it, which is the
// steady state of a server whose tools were added at start.
func (r *Registry) lookup(name string) (entry, bool) {
	snap := r.read.Load()
	if snap == nil {
		return entry{}, false
	}
	if e, ok := snap.tools[name]; ok || !snap.pending {
		return e, ok
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.lookupLocked(name)
	r.missLocked()
	return e, ok
}

func (r *Registry) lookupLocked(name string) (entry, bool) {
	if r.dirty != nil {
		e, ok := r.dirty[name]
		return e, ok
	}
	if snap := r.read.Load(); snap != nil {
		e, ok := snap.tools[name]
		return e, ok
	}
	return entry{}, false
}

// missLocked counts a lookup that had to take the lock, and promotes dirty
// to the snapshot once such lookups have cost as much as copying it.
func (r *Registry) missLocked() {
	if r.dirty == nil {
		return
	}
	r.misses++
	if r.misses < len(r.dirty) {
		return
	}
	r.read.Store(&snapshot{tools: r.dirty})
	r.dirty = nil
	r.misses = 0
}

// Effect returns the classification of the tool called name, and whether
// it has one.
func (r *Registry) Effect(name string) (Effect, bool) {
	e, ok := r.lookup(name)
	return e.effect, ok
}

// Required returns the least [Scope] that may call the tool called name:
// [ReadOnly] for a read, [NonDestructive] for a write that is not
// destructive, [Full] for a destructive one. For an unknown name it returns
// false, and no scope may call it.
func (r *Registry) Required(name string) (Scope, bool) {
	e, ok := r.lookup(name)
	return e.need, ok
}

// Allowed reports whether a caller holding scope s may call the tool called
// name. An unknown name is never allowed, whatever the scope, and the zero
// Scope allows nothing.
//
// Allowed takes no lock and allocates nothing once the tools it is asked
// about have been looked up a few times: it is meant to sit on every call.
func (r *Registry) Allowed(name string, s Scope) bool {
	e, ok := r.lookup(name)
	return ok && s.allows(e.need)
}

// Len returns the number of classified tools.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dirty != nil {
		return len(r.dirty)
	}
	if snap := r.read.Load(); snap != nil {
		return len(snap.tools)
	}
	return 0
}

// All returns every classified tool with its effect, sorted by name. It
// iterates over the tools classified when it is called; tools added during
// the iteration are not seen.
func (r *Registry) All() iter.Seq2[string, Effect] {
	tools := r.sorted()
	return func(yield func(string, Effect) bool) {
		for _, t := range tools {
			if !yield(t.name, t.effect) {
				return
			}
		}
	}
}

type namedEntry struct {
	name string
	entry
}

// sorted returns every classified tool, sorted by name.
func (r *Registry) sorted() []namedEntry {
	r.mu.Lock()
	tools := r.dirty
	if tools == nil {
		if snap := r.read.Load(); snap != nil {
			tools = snap.tools
		}
	}
	out := make([]namedEntry, 0, len(tools))
	for name, e := range tools {
		out = append(out, namedEntry{name, e})
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b namedEntry) int { return strings.Compare(a.name, b.name) })
	return out
}

// Annotations returns the annotations of the tool called name, derived from
// its effect as in [Effect.Annotations]. Each call returns a new value that
// the caller may change. The title, which is not the registry's, is left
// empty: [AddTool] keeps the one set on the [mcp.Tool].
//
// A name the registry does not know gets the worst case that the MCP
// specification tells hosts to assume of a tool without annotations: not
// read-only, destructive, not idempotent, open world.
func (r *Registry) Annotations(name string) *mcp.ToolAnnotations {
	ent, ok := r.lookup(name)
	if !ok {
		return worstCase()
	}
	return ent.effect.Annotations()
}

// validateEntry returns the error of Add for a name or an effect that no
// registry accepts.
func validateEntry(name string, e Effect) error {
	if err := ValidateToolName(name); err != nil {
		return err
	}
	if err := e.validate(); err != nil {
		return ruleErrorf(ErrInvalidEffect, "mcpeffect: tool %q: %v", name, err)
	}
	return nil
}

// ValidateToolName returns nil if name is a valid MCP tool name: 1 to 128
// characters, each an ASCII letter or digit or one of _ - and . (the rule
// go-sdk applies, which only logs a name it refuses). Otherwise the error
// names the first character that is not allowed, and wraps
// [ErrInvalidToolName].
func ValidateToolName(name string) error {
	if name == "" {
		return ruleErrorf(ErrInvalidToolName, "mcpeffect: empty tool name")
	}
	if len(name) > 128 {
		return ruleErrorf(ErrInvalidToolName, "mcpeffect: tool name %.20q... is %d bytes long; at most 128 are allowed", name, len(name))
	}
	for i, c := range name {
		if c == utf8.RuneError && !strings.HasPrefix(name[i:], string(utf8.RuneError)) {
			return ruleErrorf(ErrInvalidToolName, "mcpeffect: tool name %q: invalid UTF-8 at byte %d (want A-Z a-z 0-9 _ - .)", name, i)
		}
		if !validToolNameRune(c) {
			return ruleErrorf(ErrInvalidToolName, "mcpeffect: tool name %q: character %q at byte %d is not allowed (want A-Z a-z 0-9 _ - .)", name, c, i)
		}
	}
	return nil
}

func validToolNameRune(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '-' || c == '.'
}
