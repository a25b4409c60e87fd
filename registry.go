package mcpeffect

import (
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
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
// being checked. Lookups take no lock and allocate nothing. The zero
// Registry is empty and ready to use, as is one from [NewRegistry].
type Registry struct {
	// tools is the table of the classified tools. Readers load it with no
	// lock and write nothing, so that lookups on every core share the
	// cache lines they read instead of passing them from core to core.
	tools atomic.Pointer[toolTable]
	// scoped holds the scopes of resources and prompts, copied on write
	// (it changes rarely, and is small).
	scoped atomic.Pointer[scopedTable]
	// recoveries holds the declared recoveries by tool, copied on write.
	recoveries atomic.Pointer[map[string]Recovery]
	mu         sync.Mutex // held by the writers of tools, scoped and recoveries
}

// A toolRule is the rule of a tool, as AddTool, AddToolHandler and
// AddRule add it: see entry.
type toolRule struct {
	rule    *EffectRule
	raw     bool
	wrapped bool
	schema  *jsonschema.Resolved
}

// scopesFrom returns the bits of the scopes from least to Full.
func scopesFrom(least Scope) uint8 {
	var bits uint8
	for s := least; s <= Full; s++ {
		bits |= 1 << s
	}
	return bits
}

func newEntry(e Effect) entry {
	callers := scopesFrom(e.Required())
	return entry{effect: e, callers: callers, some: callers, least: e.Required()}
}

func newRuleEntry(tr *toolRule) entry {
	least := Full
	for _, o := range tr.rule.outcomes {
		least = min(least, o.Effect.Required())
	}
	return entry{effect: tr.rule.worst, callers: scopesFrom(tr.rule.worst.Required()), some: scopesFrom(least), least: least,
		rule: tr.rule, raw: tr.raw, wrapped: tr.wrapped, schema: tr.schema}
}

// describe names the classification of an entry in errors.
func (e entry) describe() string {
	if e.rule != nil {
		return "by its arguments (" + e.rule.String() + ")"
	}
	return "as " + e.effect.String()
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{}
}

// lookup returns the entry of the tool called name, or the zero entry,
// which no scope may call, for a name the registry does not know. It is
// the lookup of every call, through the middleware: one hash and one
// probe, with no lock and no allocation.
func (r *Registry) lookup(name string) *entry {
	if te := r.tools.Load().find(name); te != nil {
		return &te.entry
	}
	return &unknown
}

// Add classifies the tool called name with effect e. Once Add has
// returned, every lookup sees the tool.
//
// It returns an error, and leaves the registry unchanged, when name is not a
// valid MCP tool name (1 to 128 characters among A-Z a-z 0-9 _ - .), when
// e is not valid (see [Effect.Valid]), or when name is already classified
// (the first classification stays). The error wraps [ErrInvalidToolName],
// [ErrInvalidEffect] or [ErrAlreadyClassified].
//
// Adding tools one by one, as [AddTool] does, costs time in proportion to
// their number: an Add copies the table only when it has grown by a
// quarter since it was last copied (or when it is small).
func (r *Registry) Add(name string, e Effect) error {
	if err := validateEntry(name, e); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.insert(name, newEntry(e))
}

// addWrapped is Add for a tool that AddTool or AddToolHandler adds, whose
// handler runs behind their wrapper.
func (r *Registry) addWrapped(name string, e Effect) error {
	if err := validateEntry(name, e); err != nil {
		return err
	}
	ent := newEntry(e)
	ent.wrapped = true
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.insert(name, ent)
}

// insert adds the tool called name, or returns the error of a name
// already classified. r.mu is held.
func (r *Registry) insert(name string, ent entry) error {
	t := r.tools.Load()
	if old := t.find(name); old != nil {
		return ruleErrorf(ErrAlreadyClassified, "mcpeffect: tool %q is already classified %s", name, old.describe())
	}
	if next := t.with(&toolEntry{name, ent}); next != t {
		r.tools.Store(next)
	}
	return nil
}

// AddAll classifies every tool of tools, a map from tool name to effect,
// or none of them: it returns the errors of every entry that [Registry.Add]
// would refuse, joined in the order of their names, and then leaves the
// registry unchanged. Lookups see the whole batch at once.
func (r *Registry) AddAll(tools map[string]Effect) error {
	if err := refused(tools, validateEntry); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.tools.Load()
	if err := refused(tools, func(name string, _ Effect) error {
		if ent := old.find(name); ent != nil {
			return ruleErrorf(ErrAlreadyClassified, "mcpeffect: tool %q is already classified %s", name, ent.describe())
		}
		return nil
	}); err != nil {
		return err
	}
	// A new table, published once, so that no lookup sees half a batch.
	add := make([]*toolEntry, 0, len(tools))
	for name, e := range tools {
		add = append(add, &toolEntry{name, newEntry(e)})
	}
	r.tools.Store(old.merged(add...))
	return nil
}

// addRule classifies the tool called name by tr's rule, as Add does with
// one effect. A name already classified by the same rule is accepted.
func (r *Registry) addRule(name string, tr *toolRule) error {
	if err := ValidateToolName(name); err != nil {
		return err
	}
	if tr.rule.err != nil {
		return ruleErrorf(ErrInvalidEffect, "mcpeffect: tool %q: %v", name, tr.rule.err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ent := r.tools.Load().find(name); ent != nil && ent.rule == tr.rule && ent.raw == tr.raw && ent.wrapped == tr.wrapped {
		return nil
	}
	return r.insert(name, newRuleEntry(tr))
}

// refused returns the errors that check gives the entries of tools,
// joined in the order of their names, or nil. Only the refused names are
// sorted, so that a batch that is accepted costs no sort.
func refused(tools map[string]Effect, check func(string, Effect) error) error {
	var bad []string
	errs := make(map[string]error)
	for name, e := range tools {
		if err := check(name, e); err != nil {
			bad = append(bad, name)
			errs[name] = err
		}
	}
	switch len(bad) {
	case 0:
		return nil
	case 1:
		return errs[bad[0]]
	}
	slices.Sort(bad)
	joined := make([]error, len(bad))
	for i, name := range bad {
		joined[i] = errs[name]
	}
	return errors.Join(joined...)
}

// Effect returns the classification of the tool called name, and whether
// it has one. For a tool whose effect depends on its arguments (see
// [EffectRule]), it is the worst case of the rule's outcomes, which the
// tool advertises.
func (r *Registry) Effect(name string) (Effect, bool) {
	ent := r.lookup(name)
	return ent.effect, ent.effect != 0
}

// Rule returns the [EffectRule] of the tool called name, and whether it
// has one: false for a tool with one effect, and for an unknown one.
func (r *Registry) Rule(name string) (*EffectRule, bool) {
	ent := r.lookup(name)
	return ent.rule, ent.rule != nil
}

// Required returns the least [Scope] that may call the tool called name:
// [ReadOnly] for a read, [NonDestructive] for a write that is not
// destructive, [Full] for a destructive one. For an unknown name it returns
// false, and no scope may call it. For a tool whose effect depends on its
// arguments, it is the scope that may make every call of it, that of the
// worst case.
func (r *Registry) Required(name string) (Scope, bool) {
	ent := r.lookup(name)
	if ent.effect == 0 {
		return 0, false
	}
	return ent.effect.Required(), true
}

// Allowed reports whether a caller holding scope s may call the tool called
// name. An unknown name is never allowed, whatever the scope, and the zero
// Scope allows nothing. For a tool whose effect depends on its arguments,
// it reports whether s may make every call of it, whatever the arguments;
// [Registry.Middleware] lets s make the calls whose own effect it allows.
//
// Allowed takes no lock and allocates nothing, at the cost of a lookup in
// a plain map: it is made to be called on a hot path, as the middleware's
// own lookup is, which reads the same table.
func (r *Registry) Allowed(name string, s Scope) bool {
	// An unknown name has no callers; for a Scope beyond Full, 1<<s is a
	// bit callers never has, or 0.
	return r.tools.Load().callers(name)&(1<<s) != 0
}

// Len returns the number of classified tools.
func (r *Registry) Len() int {
	return r.tools.Load().len()
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
	t := r.tools.Load()
	out := make([]namedEntry, 0, t.len())
	for te := range t.all() {
		out = append(out, namedEntry{te.name, te.entry})
	}
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
// read-only, destructive, not idempotent, open world. A tool whose effect
// depends on its arguments gets the hints of the worst case of its rule's
// outcomes.
func (r *Registry) Annotations(name string) *mcp.ToolAnnotations {
	return r.lookup(name).effect.Annotations()
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

// AddRule classifies the tool called name by rule, an effect that
// depends on the arguments (see [EffectRule]), as [AddTool] does with a
// rule:
// [Enforcer.Decide] then computes the effect of each call from the raw
// arguments it is given, which must be those the tool's handler acts on.
// It returns the errors of [Registry.Add], and one for a nil rule or one
// that cannot be used; a name already classified by the same rule is
// accepted.
func (r *Registry) AddRule(name string, rule *EffectRule) error {
	if rule == nil {
		return ruleErrorf(ErrInvalidEffect, "mcpeffect: tool %q: nil rule", name)
	}
	return r.addRule(name, &toolRule{rule: rule, raw: true})
}
