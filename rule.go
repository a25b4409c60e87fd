package mcpeffect

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// An EffectRule declares the effect of a tool whose calls do different
// things depending on their arguments, such as a tool that gets, lists or
// deletes according to its "action" argument. A single static [Effect]
// would have to be the worst of them, so that a read-only token could not
// even get, and hosts would ask before every call.
//
// A rule declares every effect its tool's calls may have, its outcomes.
// What the server advertises is the worst case over them (see
// [Registry.Effect] and [Registry.Annotations]), which is what a careful
// host must assume before it knows the arguments. What it enforces is the
// effect of each call, computed from the arguments as the tool's handler
// receives them. An argument that selects no declared outcome, one that is
// missing or of the wrong type, anything uncertain: the call counts as the
// worst case, and is refused unless the caller's scope allows that.
//
// There are two forms. [EffectByArgument] is the common one: one string
// argument names the operation, and each of its values has an effect.
// [EffectByFunc] is the general one: a function of the arguments, with the
// list of effects it may return.
//
// A rule is added to a server with [AddTool] or
// [AddToolHandler], whose wrapper computes the effect of each call;
// a tool whose effect depends on its arguments must be served by that
// wrapper and no other handler. An EffectRule is immutable and safe for
// concurrent use; the zero EffectRule has no outcomes and is refused.
type EffectRule struct {
	// outcomes in the order Outcomes returns them: by value in the
	// common form, as declared in the general form.
	outcomes []Outcome
	worst    Effect
	err      error // why the rule cannot be used, reported when it is added

	// The common form.
	arg     string
	byValue map[string]Effect

	// The general form: fn is a func(In) Effect, in is In, and decoded
	// computes the outcome of raw arguments decoded into In.
	fn      any
	in      reflect.Type
	decoded func(json.RawMessage) (Effect, bool)
}

// An Outcome is one effect that the calls of a tool with an
// [EffectRule] may have.
type Outcome struct {
	// Value is the value of the rule's argument that selects this
	// outcome, in the common form ([EffectByArgument]); empty in the
	// general form.
	Value string `json:"value,omitempty"`
	// Effect is the effect of the calls with this outcome.
	Effect Effect `json:"effect"`
}

// EffectByArgument returns the rule of a tool whose string argument arg
// selects the operation: a call whose argument arg is a key of effects
// has that key's effect. A call with any other value, without the
// argument, or with a value that is not a string, has the worst case of
// all the effects.
//
// Values are compared exactly, as the handler would: "GET" is not "get".
// With [AddTool], the argument is read from the handler's decoded
// input In: a field of a struct whose JSON name is arg (a string, a
// pointer to one, or a named string type), or the key arg of a map. A
// field of a struct cannot tell a missing argument from an empty string;
// the call then has the effect of "" if effects declares it, as the
// handler sees "", and the worst case otherwise. A pointer field tells
// them apart: nil is the worst case.
//
// Adding the rule panics if arg is empty, effects is empty or holds an
// invalid effect (see [Effect.Valid]), or In has no such argument.
func EffectByArgument(arg string, effects map[string]Effect) *EffectRule {
	r := &EffectRule{arg: arg, byValue: maps.Clone(effects)}
	for _, v := range slices.Sorted(maps.Keys(effects)) {
		r.outcomes = append(r.outcomes, Outcome{Value: v, Effect: effects[v]})
	}
	switch {
	case arg == "":
		r.err = fmt.Errorf("EffectByArgument: empty argument name")
	case len(effects) == 0:
		r.err = fmt.Errorf("EffectByArgument(%q): no values and their effects", arg)
	}
	r.settle()
	return r
}

// EffectByFunc returns the rule of a tool whose effect f computes from
// the arguments of each call, as the tool's handler receives them:
// In is the input type of the handler given to [AddTool], or
// [json.RawMessage], the raw arguments, for [AddToolHandler].
// outcomes are all the effects f may return.
//
// f must be quick and have no side effects: it runs before the call is
// allowed. It should return 0 when the arguments leave the effect
// uncertain. A call for which f returns 0, an effect not among outcomes
// or an invalid one, or panics, has the worst case of outcomes.
//
// Adding the rule panics if f is nil, or outcomes is empty or holds an
// invalid effect. The rule is a [FuncRule] of In, which [AddTool]
// accepts only for a handler whose input is In: a mismatch does not
// compile.
func EffectByFunc[In any](f func(In) Effect, outcomes ...Effect) *FuncRule[In] {
	r := &EffectRule{in: reflect.TypeFor[In]()}
	if f != nil {
		r.fn = f
		r.decoded = func(args json.RawMessage) (Effect, bool) {
			var in In
			if len(args) > 0 && json.Unmarshal(args, &in) != nil {
				return r.worst, false
			}
			return r.settleComputed(callSafely(f, in))
		}
	}
	for _, e := range outcomes {
		if !slices.ContainsFunc(r.outcomes, func(o Outcome) bool { return o.Effect == e }) {
			r.outcomes = append(r.outcomes, Outcome{Effect: e})
		}
	}
	switch {
	case f == nil:
		r.err = fmt.Errorf("EffectByFunc: nil function")
	case len(outcomes) == 0:
		r.err = fmt.Errorf("EffectByFunc: no outcomes")
	}
	r.settle()
	return &FuncRule[In]{r}
}

// A FuncRule is the rule of [EffectByFunc]: an [EffectRule] whose
// function takes In, the input of the handler of the tool it classifies
// ([json.RawMessage] for a low-level handler), so that [AddTool] and
// [AddToolHandler] accept it only for a handler of that input: a rule
// written for another input does not compile. It has the methods of its
// EffectRule, which [Registry.Rule] returns once the tool is added.
type FuncRule[In any] struct {
	*EffectRule
}

// rule returns the EffectRule of f, or the zero EffectRule, which is
// refused, for a nil f.
func (f *FuncRule[In]) rule() *EffectRule {
	if f == nil || f.EffectRule == nil {
		return nil
	}
	return f.EffectRule
}

// settle checks the outcomes and computes their worst case.
func (r *EffectRule) settle() {
	effects := make([]Effect, 0, len(r.outcomes))
	for _, o := range r.outcomes {
		if err := o.Effect.validate(); err != nil && r.err == nil {
			if r.arg != "" {
				r.err = fmt.Errorf("EffectByArgument(%q): value %q: %v", r.arg, o.Value, err)
			} else {
				r.err = fmt.Errorf("EffectByFunc: outcome %s: %v", o.Effect, err)
			}
		}
		effects = append(effects, o.Effect)
	}
	r.worst = worstOf(effects)
}

// worstOf returns the worst case of effects, the effect whose hints a
// host must assume when it does not know which of them a call has: a read
// only if all are reads, destructive or open world if any is, idempotent
// only if all are (a read is).
func worstOf(effects []Effect) Effect {
	if len(effects) == 0 {
		return 0
	}
	var w Effect
	read, idempotent := true, true
	for _, e := range effects {
		if e&Read == 0 {
			read = false
			if e&idempotentBit == 0 {
				idempotent = false
			}
		}
		w |= e & (destructiveBit | OpenWorld)
	}
	if read {
		return Read | w&OpenWorld
	}
	w |= Write
	if idempotent {
		w |= idempotentBit
	}
	return w
}

// Argument returns the name of the argument that selects the outcome, in
// the common form ([EffectByArgument]), or "" in the general form.
func (r *EffectRule) Argument() string { return r.arg }

// Outcomes returns the effects the rule declares: one per value, sorted
// by value, in the common form; in the general form, the effects given to
// [EffectByFunc], without repeats, in their order.
func (r *EffectRule) Outcomes() []Outcome { return slices.Clone(r.outcomes) }

// Worst returns the worst case of the rule's outcomes: what its tool
// advertises, and the effect of a call whose outcome is uncertain.
func (r *EffectRule) Worst() Effect { return r.worst }

// String describes the rule, such as `by action: delete=write|destructive,
// get=read` or `by function: read, write`.
func (r *EffectRule) String() string {
	var b strings.Builder
	if r.arg != "" {
		fmt.Fprintf(&b, "by %s:", r.arg)
		for i, o := range r.outcomes {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %q=%s", o.Value, o.Effect)
		}
		return b.String()
	}
	b.WriteString("by function:")
	for i, o := range r.outcomes {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s", o.Effect)
	}
	return b.String()
}

// CallEffect returns the effect of a call with the raw arguments args, as
// far as they give it with certainty, and whether they do. Otherwise it
// returns the worst case and false.
//
// The common form reads its argument strictly: args must be a JSON object
// with the argument exactly once, as a string, and no other key that
// differs from it only in case (decoders disagree on which one wins). A
// general form over [json.RawMessage] calls its function with args. A
// general form over another type is never certain here: only the
// handler's decoded input gives it.
//
// A server does not need CallEffect: the wrapper of [AddTool]
// computes each call's effect from what the handler receives. The HTTP
// challenge ([Enforcer.Challenge]), tool resolution ([github.com/mcpeffect/mcpeffect/resolution.Serve])
// and package mcpeffecttest use it where they only have the raw
// arguments; the first two only for a tool whose handler receives the
// argument as a plain string (not a type with its own JSON decoding, nor
// with the ",string" option), whose raw arguments then give what the
// handler receives.
func (r *EffectRule) CallEffect(args json.RawMessage) (Effect, bool) {
	if r.err != nil {
		return r.worst, false
	}
	if r.arg != "" {
		v, ok := selectorValue(args, r.arg)
		if !ok {
			return r.worst, false
		}
		e, ok := r.byValue[v]
		if !ok {
			return r.worst, false
		}
		return e, true
	}
	if f, ok := r.fn.(func(json.RawMessage) Effect); ok {
		return r.settleComputed(callSafely(f, args))
	}
	return r.worst, false
}

// outcomeOfRaw returns the outcome of a call with the raw arguments args,
// for a server whose handler decodes them itself (see [Operation]
// Arguments): in the common form read strictly, as CallEffect does; in the
// general form decoded into the function's input with encoding/json.
func (r *EffectRule) outcomeOfRaw(args json.RawMessage) callOutcome {
	if r.err != nil {
		return callOutcome{effect: r.worst}
	}
	if r.arg != "" {
		e, certain := r.CallEffect(args)
		oc := callOutcome{effect: e, certain: certain}
		oc.value, oc.has = selectorValue(args, r.arg)
		return oc
	}
	if !json.Valid(args) && len(args) > 0 || r.decoded == nil {
		return callOutcome{effect: r.worst}
	}
	if _, raw := r.fn.(func(json.RawMessage) Effect); raw {
		e, certain := r.CallEffect(args)
		return callOutcome{effect: e, certain: certain}
	}
	e, certain := r.decoded(args)
	return callOutcome{effect: e, certain: certain}
}

// settleComputed returns e if it is one of r's outcomes, and otherwise the
// worst case; the second result says which.
func (r *EffectRule) settleComputed(e Effect) (Effect, bool) {
	if e == 0 || !slices.ContainsFunc(r.outcomes, func(o Outcome) bool { return o.Effect == e }) || !e.Within(r.worst) {
		return r.worst, false
	}
	return e, true
}

// callSafely returns f(in), or 0 if f panics: a rule must never take the
// server down, and 0 is the worst case.
func callSafely[In any](f func(In) Effect, in In) (e Effect) {
	defer func() {
		if recover() != nil {
			e = 0
		}
	}()
	return f(in)
}

// selectorValue returns the string value of the member arg of the JSON
// object args, read strictly (see EffectRule.CallEffect).
func selectorValue(args json.RawMessage, arg string) (string, bool) {
	if len(args) == 0 || !json.Valid(args) {
		return "", false
	}
	var raw []byte
	if err := members(args, func(key string, v []byte) error {
		switch {
		case key == arg && raw == nil:
			raw = v
		case strings.EqualFold(key, arg):
			// Given twice, or in another case: some decoder would read
			// the other one.
			return errUncertain
		}
		return nil
	}); err != nil {
		return "", false
	}
	return stringValue(raw)
}

// A selector reads the value of a rule's argument from a handler's
// decoded input, by reflection prepared when the tool is added.
type selector struct {
	// index leads to the field in a struct (through embedded structs);
	// nil for a map.
	index []int
	ptr   bool // the field is a *string
	// raw is false when the raw arguments may not give what the handler
	// receives: the field decodes itself, or has the ",string" option.
	raw bool
}

// compileSelector returns the selector of argument arg in a handler input
// of type t.
func compileSelector(t reflect.Type, arg string) (*selector, error) {
	base := t
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	switch base.Kind() {
	case reflect.Map:
		if base.Key().Kind() != reflect.String || (base.Elem().Kind() != reflect.String && base.Elem().Kind() != reflect.Interface) {
			return nil, fmt.Errorf("input type %s: a map must have string keys and string or interface values", t)
		}
		return &selector{raw: true}, nil
	case reflect.Interface:
		// go-sdk decodes an object into a map[string]any.
		return &selector{raw: true}, nil
	case reflect.Struct:
	default:
		return nil, fmt.Errorf("input type %s is not a struct or a map", t)
	}
	f, err := fieldByJSONName(base, arg)
	if err != nil {
		return nil, fmt.Errorf("input type %s: %v", t, err)
	}
	ft := f.Type
	s := &selector{index: f.Index, raw: true}
	if ft.Kind() == reflect.Pointer {
		s.ptr = true
		ft = ft.Elem()
	}
	if ft.Kind() != reflect.String {
		return nil, fmt.Errorf("input type %s: field %s for argument %q is a %s, not a string", t, f.Name, arg, f.Type)
	}
	unmarshaler := reflect.TypeFor[json.Unmarshaler]()
	text := reflect.TypeFor[encoding.TextUnmarshaler]()
	if reflect.PointerTo(ft).Implements(unmarshaler) || reflect.PointerTo(ft).Implements(text) ||
		slices.Contains(strings.Split(f.Tag.Get("json"), ",")[1:], "string") {
		s.raw = false
	}
	return s, nil
}

// value returns the argument's value in v, the handler's input, and
// whether it has one.
func (s *selector) value(v reflect.Value, arg string) (string, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "", false
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Map {
		if v.Type().Key().Kind() != reflect.String {
			return "", false
		}
		e := v.MapIndex(reflect.ValueOf(arg).Convert(v.Type().Key()))
		for e.IsValid() && e.Kind() == reflect.Interface {
			e = e.Elem()
		}
		if !e.IsValid() || e.Kind() != reflect.String {
			return "", false
		}
		return e.String(), true
	}
	if v.Kind() != reflect.Struct || s.index == nil {
		return "", false
	}
	f, err := v.FieldByIndexErr(s.index)
	if err != nil {
		return "", false // through a nil embedded pointer: not set
	}
	if s.ptr {
		if f.IsNil() {
			return "", false
		}
		f = f.Elem()
	}
	return f.String(), true
}

// fieldByJSONName returns the field of struct type t that JSON decoding
// fills from the member name, matched exactly as go-sdk decodes (case
// sensitively), with encoding/json's rules for embedded structs: the
// shallowest field wins, a tagged one over untagged ones at the same
// depth, and two candidates left are ambiguous, so neither is decoded.
func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, error) {
	type level struct {
		t     reflect.Type
		index []int
	}
	current := []level{{t, nil}}
	visited := map[reflect.Type]bool{}
	for len(current) > 0 {
		var next []level
		var found []reflect.StructField
		tagged := 0
		for _, l := range current {
			if visited[l.t] {
				continue
			}
			visited[l.t] = true
			for i := range l.t.NumField() {
				f := l.t.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				tagName, _, _ := strings.Cut(tag, ",")
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if f.Anonymous && tagName == "" && ft.Kind() == reflect.Struct {
					next = append(next, level{ft, append(slices.Clone(l.index), i)})
					continue
				}
				if !f.IsExported() {
					continue
				}
				jsonName := tagName
				if jsonName == "" {
					jsonName = f.Name
				}
				if jsonName != name {
					continue
				}
				f.Index = append(slices.Clone(l.index), i)
				if tagName != "" {
					tagged++
					found = append([]reflect.StructField{f}, found...)
				} else {
					found = append(found, f)
				}
			}
		}
		switch {
		case len(found) == 1, len(found) > 1 && tagged == 1:
			return found[0], nil
		case len(found) > 1:
			return reflect.StructField{}, fmt.Errorf("argument %q is ambiguous: %d fields at the same depth have that JSON name, so JSON decoding fills none", name, len(found))
		}
		current = next
	}
	return reflect.StructField{}, fmt.Errorf("no field has the JSON name %q (names are matched exactly, as go-sdk decodes them)", name)
}

// A callOutcome is what a rule made of the arguments of one call.
type callOutcome struct {
	effect  Effect
	certain bool // effect is a declared outcome, not the worst case
	// value is the rule's argument, in the common form, if the call has
	// it (has).
	value string
	has   bool
}

// describe says what the outcome was, for a refusal.
func (oc callOutcome) describe(rule *EffectRule) string {
	switch {
	case rule.arg == "" && oc.certain:
		return "these arguments"
	case rule.arg == "":
		return "arguments that give none of its declared effects, the worst case"
	case oc.certain:
		return fmt.Sprintf("%s=%q", rule.arg, oc.value)
	case oc.has:
		return fmt.Sprintf("%s=%q, which it does not declare, the worst case", rule.arg, oc.value)
	}
	return fmt.Sprintf("%s missing, not a string, or given more than once, the worst case", rule.arg)
}
