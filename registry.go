package mcpeffect

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// An Effect classifies what calling a tool does to the world. It is a set of
// flags combined with |.
//
// Every valid effect has exactly one of [Read] or [Write]. [Destructive] and
// [Idempotent] describe writes and carry the [Write] bit themselves, so
// Destructive|Idempotent is already a write. [OpenWorld] may be added to
// either.
type Effect uint8

// The flags of an [Effect].
const (
	// Read changes nothing. Reads are idempotent by nature.
	Read Effect = 1 << iota
	// Write changes something. Alone, it is an additive write: a new row,
	// a new message; repeating it adds another.
	Write
	destructiveBit
	idempotentBit
	// OpenWorld reaches outside a closed, known set of resources: another
	// application, the web, a user's files.
	OpenWorld

	// Destructive is a write that deletes or overwrites what exists.
	Destructive = destructiveBit | Write
	// Idempotent is a write that converges: repeating it with the same
	// arguments changes nothing more.
	Idempotent = idempotentBit | Write
)

// effectBits holds every bit an Effect may carry.
const effectBits = Read | Write | destructiveBit | idempotentBit | OpenWorld

// flagNames lists the flags in the order String writes them.
var flagNames = [...]struct {
	bit  Effect
	name string
}{
	{Read, "read"},
	{Write, "write"},
	{destructiveBit, "destructive"},
	{idempotentBit, "idempotent"},
	{OpenWorld, "openworld"},
}

// String returns the flags of e joined by |, such as "write|destructive" or
// "read|openworld": the form [Effect.UnmarshalText] reads back. The zero
// Effect is "none"; bits that no flag names are shown in hex.
func (e Effect) String() string {
	if e == 0 {
		return "none"
	}
	var b strings.Builder
	for _, f := range flagNames {
		if e&f.bit != 0 {
			if b.Len() > 0 {
				b.WriteByte('|')
			}
			b.WriteString(f.name)
		}
	}
	if rest := e &^ effectBits; rest != 0 {
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		fmt.Fprintf(&b, "%#x", uint8(rest))
	}
	return b.String()
}

// Valid reports whether e is an effect a tool can have: see [Effect.Check].
func (e Effect) Valid() bool { return e.Check() == nil }

// Check returns nil if e is an effect a tool can have, or an error naming
// the rule it breaks: it has bits no flag names, it is neither [Read] nor
// [Write], or it combines Read with a write flag.
func (e Effect) Check() error {
	switch {
	case e&^effectBits != 0:
		return fmt.Errorf("unknown effect bits %#x", uint8(e&^effectBits))
	case e&(Read|Write) == 0:
		if e == 0 {
			return errors.New("no effect: it must have Read or Write")
		}
		return fmt.Errorf("effect %s has neither Read nor Write", e)
	case e&Read != 0 && e&(Write|destructiveBit|idempotentBit) != 0:
		// The message starts with the flag's Go name, as users write it.
		return fmt.Errorf("%s cannot be combined with %s", "Read", writeFlagName(e))
	}
	return nil
}

// writeFlagName names the most specific write flag in e, for errors.
func writeFlagName(e Effect) string {
	switch {
	case e&destructiveBit != 0:
		return "Destructive"
	case e&idempotentBit != 0:
		return "Idempotent"
	}
	return "Write"
}

// MarshalText implements [encoding.TextMarshaler]. Only valid effects
// marshal: an invalid one is an error rather than text that cannot be read
// back.
func (e Effect) MarshalText() ([]byte, error) {
	if err := e.Check(); err != nil {
		return nil, fmt.Errorf("mcpeffect: cannot marshal effect %s: %w", e, err)
	}
	return []byte(e.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]. It reads flag names
// separated by |, in any order and case, with spaces allowed around them:
// "read", "write|destructive", "Write | Idempotent | OpenWorld".
// "destructive" and "idempotent" imply "write". The result must be a valid
// effect (see [Effect.Check]); on error e is left unchanged.
func (e *Effect) UnmarshalText(text []byte) error {
	v, err := ParseEffect(string(text))
	if err != nil {
		return err
	}
	*e = v
	return nil
}

// ParseEffect parses the text form of an effect; see [Effect.UnmarshalText].
func ParseEffect(s string) (Effect, error) {
	if strings.TrimSpace(s) == "" {
		return 0, errors.New("mcpeffect: empty effect")
	}
	var e Effect
	for part := range strings.SplitSeq(s, "|") {
		name := strings.TrimSpace(part)
		var bit Effect
		for _, f := range flagNames {
			if strings.EqualFold(name, f.name) {
				bit = f.bit
				break
			}
		}
		switch bit {
		case 0:
			return 0, fmt.Errorf("mcpeffect: effect %q: unknown flag %q (want read, write, destructive, idempotent or openworld)", s, name)
		case destructiveBit:
			bit = Destructive
		case idempotentBit:
			bit = Idempotent
		}
		e |= bit
	}
	if err := e.Check(); err != nil {
		return 0, fmt.Errorf("mcpeffect: effect %q: %w", s, err)
	}
	return e, nil
}

// required is the least scope that may call a tool of effect e.
func (e Effect) required() Scope {
	switch {
	case e&destructiveBit != 0:
		return Full
	case e&Write != 0:
		return NonDestructive
	}
	return ReadOnly
}

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
	title  string
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{}
}

// Add classifies the tool called name with effect e.
//
// It returns an error, and leaves the registry unchanged, when name is not a
// valid MCP tool name (1 to 128 characters among A-Z a-z 0-9 _ - .), when
// name is already classified (the first classification stays), or when e is
// not valid (see [Effect.Check]).
func (r *Registry) Add(name string, e Effect) error {
	return r.AddTitled(name, "", e)
}

// AddTitled is [Registry.Add] with a human-readable title, which
// [Registry.Annotations] reports as the title annotation.
func (r *Registry) AddTitled(name, title string, e Effect) error {
	if err := CheckToolName(name); err != nil {
		return fmt.Errorf("mcpeffect: %w", err)
	}
	if err := e.Check(); err != nil {
		return fmt.Errorf("mcpeffect: tool %q: %w", name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.lookupLocked(name); ok {
		return fmt.Errorf("mcpeffect: tool %q is already classified as %s", name, old.effect)
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
	r.dirty[name] = entry{effect: e, need: e.required(), title: title}
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

// Title returns the title given to the tool with [Registry.AddTitled], or "".
func (r *Registry) Title(name string) string {
	e, _ := r.lookup(name)
	return e.title
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

// CheckToolName returns nil if name is a valid MCP tool name: 1 to 128
// characters, each an ASCII letter or digit or one of _ - and .
// Otherwise the error names the first character that is not allowed.
func CheckToolName(name string) error {
	if name == "" {
		return errors.New("empty tool name")
	}
	if len(name) > 128 {
		return fmt.Errorf("tool name %.20q... is %d bytes long; at most 128 are allowed", name, len(name))
	}
	for i, c := range name {
		if c == utf8.RuneError && !strings.HasPrefix(name[i:], string(utf8.RuneError)) {
			return fmt.Errorf("tool name %q: invalid UTF-8 at byte %d (want A-Z a-z 0-9 _ - .)", name, i)
		}
		if !validToolNameRune(c) {
			return fmt.Errorf("tool name %q: character %q at byte %d is not allowed (want A-Z a-z 0-9 _ - .)", name, c, i)
		}
	}
	return nil
}

func validToolNameRune(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '-' || c == '.'
}
