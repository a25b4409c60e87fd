package mcpeffecttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/mcpeffect/mcpeffect/internal/effectproof"
	"github.com/mcpeffect/mcpeffect/internal/testhook"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An Instance is one fresh copy of the server under test, made by the
// function given to [Verify] for each example, so that every example runs
// on a known state: a new temporary database, a new in-memory store.
//
// E is whatever the examples need besides the server to make their
// fixtures and choose their caller: a store, a clock, a way to mint
// tokens. Verify only hands it to them.
type Instance[E any] struct {
	// Server is the server under test, with its middleware installed.
	Server *mcp.Server
	// Connect, set instead of Server, opens a client session to a server
	// that Verify cannot connect to in process, such as one built on
	// another SDK (package mcpgo, for mcp-go): its requests must have the
	// caller that ctx says, as a connection given ctx in process has: the
	// scope that [SessionScope] reads from ctx, without a Caller, or what
	// the Caller put in ctx. Verify closes each session it opens.
	Connect func(ctx context.Context) (*mcp.ClientSession, error)
	// Registry classifies the server's tools.
	Registry *mcpeffect.Registry
	// State captures what users see as data (see [State]). Verify calls it
	// between calls, while no call is running.
	State func(context.Context) (State, error)
	// Env is given to each example's Setup and Caller.
	Env E
	// Caller returns, from ctx, the context that a session connects with,
	// given to [mcp.Server.Connect]: it says who calls, such as a person
	// with a credential. Examples make their fixtures as this caller, and
	// make their call as this caller too unless they have a Caller of
	// their own. If nil, the caller has the full scope of the connection
	// (see [mcpeffect.WithConnectionScope]), so that every classified tool may be
	// called.
	Caller func(ctx context.Context) context.Context
}

// An Example is one call of a tool, the evidence that its classification
// is true. A table of examples, one or more a tool, doubles as the
// documentation of what each tool does.
type Example[E any] struct {
	// Tool is the name of the tool to call.
	Tool string
	// Name tells the tool's examples apart in failures and subtest names.
	// If empty, an example is named by its place among the tool's: "#1".
	Name string
	// Args are the call's arguments: anything that marshals to a JSON
	// object, such as a map[string]any or a struct. Nil is {}.
	Args any
	// Setup, if non-nil, runs on the example's instance before anything
	// is measured. It makes the fixtures the call needs, directly through
	// env or by calling tools through s, a session of the instance's
	// caller, and returns the call's arguments in place of Args: ids that
	// only exist once the fixtures do.
	Setup func(t testing.TB, env E, s *Session) (args any)
	// Caller, if non-nil, returns, from ctx, the context that the session
	// of the example's call connects with: who makes the call, in place of
	// [Instance.Caller]. It runs after Setup, so it may use what Setup
	// made, such as an agent's credential.
	Caller func(ctx context.Context, env E) context.Context
	// WantError, if not empty, says that the call must fail, with a tool
	// error or a protocol error whose text contains WantError, and change
	// nothing: the proof that a refused call is refused whole. Such an
	// example does not count as exercising the tool.
	WantError string
	// Effect is the effect of this call, for a tool whose effect depends
	// on its arguments (see [mcpeffect.EffectRule]): the example is held
	// to it rather than to the worst case the tool advertises. In the
	// common form it may be left zero, and the rule gives it from the
	// arguments; in the general form it is required. It must be zero for
	// a tool with one effect.
	Effect mcpeffect.Effect
	// Undo, if true, also checks that the undo the tool publishes (its
	// recovery, SEP-3172; see [mcpeffect.Registry.DeclareRecovery])
	// restores what the call changed: on a fresh instance of its own,
	// with the example's Setup and Caller run again, Verify captures the
	// state, makes the call, binds the undo's arguments from the call's
	// arguments and structured result ([mcpeffect.Recovery.Bind]), calls
	// the undo in the same session, and holds the state to the one
	// before the call. It needs a tool that publishes an undo, and a call
	// that succeeds and changes something, so it cannot be set with
	// WantError.
	Undo bool
}

// VerifyOptions configure [Verify]. A nil *VerifyOptions is the zero value.
type VerifyOptions struct {
	// Parallel runs each tool's examples in a subtest of its own that
	// calls t.Parallel, when t is a *testing.T. The function that makes
	// instances, and the examples' Caller and Setup, must then be safe to
	// call concurrently, and, as with any parallel subtest, the subtests
	// run once the test function that called Verify returns.
	Parallel bool

	// Overcautious waives, for the tools it names, the failure Verify
	// reports when no example shows something a tool's classification
	// claims (see Verify): tool name to the reason, which Verify logs with
	// what it waives. A reason is required, a waiver must name a write of
	// the server, and a waiver that waives nothing fails, so that the list
	// stays true.
	Overcautious map[string]string
}

// Verify proves that the effect each tool of a server is classified with
// is true, by calling it. Where [Check] proves that what a server
// advertises and what it enforces agree, Verify proves that both tell the
// truth about what the tools do to the data their users see.
//
// newInstance makes a fresh [Instance] of the server, once to list its
// tools and once for each example; examples holds at least one [Example]
// for each tool. For each example Verify runs its Setup, connects a
// session as the example's caller, then captures the state, calls the
// tool, captures the state, calls it again with the same arguments, and
// captures the state a third time. What each call changed must fit the
// tool's classification:
//
//   - read: the state is exactly the same after the call;
//   - non-destructive write: every value that existed before the call
//     exists after it, unchanged; it may add records, and values in fields
//     that were empty (see [Record]); nothing else;
//   - destructive write: anything else, such as changing a status, an
//     assignee, a flag or a position, or moving a record to a Trash;
//   - idempotent write: repeating the call with the same arguments leaves
//     the state exactly as the first call left it.
//
// The state is what users see as data, as the instance's State function
// captures it; bookkeeping (an updated_at, a last_used_at, the activity
// log) may be left out of it, in one short, justified list (see [State]).
// The repeat may fail, as a deletion's does once the record is gone: it is
// then held, as any repeat, to what it changed.
//
// A failure names the tool, the example and each record and field that
// changed, with its value before and after. Verify also fails:
//
//   - an example whose call returns a tool error or a protocol error (a
//     refusal by the middleware, say), which did not reach the tool's
//     work, unless the example expects it with WantError;
//   - an example whose arguments the tool's input schema refuses, which is
//     reported as such, before the call;
//   - a tool with no example, or whose every example expects an error; a
//     tool on the server that the registry does not classify; a tool
//     classified but not on the server; an example for a tool the server
//     does not have; two examples of a tool with the same name;
//   - a classification that claims more than any example shows: a write
//     that no example made change anything, a destructive write that no
//     example made change or remove an existing value, a write that is not
//     idempotent whose repeat never changed anything. Hosts ask people
//     before such calls for nothing. Give an example that shows the claim,
//     classify the tool truthfully, or waive the failure with a reason in
//     [VerifyOptions.Overcautious]. Verify judges this only for a tool
//     whose examples all passed.
//
// A tool whose effect depends on its arguments (see [mcpeffect.EffectRule])
// is verified outcome by outcome: each example is held to the effect of
// its own call (see [Example] Effect), and each of the rule's outcomes
// must have an example that shows what it claims, as above.
//
// When t is a *testing.T, each tool runs as a subtest named after it, and
// each of its examples as a subtest of that, so that -run can pick one;
// the instance of an example is made with the example's subtest. Any
// other [testing.TB] runs the examples one after another and reports to t.
func Verify[E any](t testing.TB, newInstance func(testing.TB) Instance[E], examples []Example[E], opts *VerifyOptions) {
	t.Helper()
	v := &verifier[E]{newInstance: newInstance}
	if opts != nil {
		v.opts = *opts
	}
	inst := newInstance(t)
	if err := inst.check(); err != nil {
		t.Errorf("mcpeffecttest: %v", err)
		return
	}
	ctx := testhook.WithUnfilteredList(withSessionScope(t.Context(), mcpeffect.Full))
	v.listed = listToolsWith(t, ctx, func(ctx context.Context) *mcp.ClientSession { return connectTo(t, ctx, inst.Server, inst.Connect) })
	if v.listed == nil {
		return
	}
	byTool := v.plan(t, inst.Registry, examples)
	for _, name := range slices.Sorted(maps.Keys(byTool)) {
		e, _ := inst.Registry.Effect(name)
		rule, _ := inst.Registry.Rule(name)
		run(t, name, v.opts.Parallel, func(t testing.TB) {
			t.Helper()
			v.tool(t, name, e, rule, byTool[name])
		})
	}
}

// A verifier holds what every example of one Verify shares. It is read
// only once the examples run, which may be in parallel.
type verifier[E any] struct {
	newInstance func(testing.TB) Instance[E]
	opts        VerifyOptions
	listed      map[string]*mcp.Tool
}

// A namedExample is an example with the name it is reported under.
type namedExample[E any] struct {
	Example[E]
	name string
}

// plan reports every failure that needs no call: tools, classifications,
// examples and waivers that do not match. It returns the examples to run
// by tool, for the tools that are on the server and classified.
func (v *verifier[E]) plan(t testing.TB, r *mcpeffect.Registry, examples []Example[E]) map[string][]namedExample[E] {
	t.Helper()
	byTool := make(map[string][]namedExample[E])
	for i, ex := range examples {
		if _, ok := v.listed[ex.Tool]; !ok {
			t.Errorf("example %d (%q) calls tool %q, which is not on the server", i, ex.Name, ex.Tool)
			continue
		}
		name := ex.Name
		if name == "" {
			name = fmt.Sprintf("#%d", len(byTool[ex.Tool])+1)
		}
		if ex.Undo && ex.WantError != "" {
			t.Errorf("tool %q, example %q: Undo checks the undo of a call that succeeds, and WantError says this one fails: give the undo an example of its own", ex.Tool, name)
			continue
		}
		dup := slices.ContainsFunc(byTool[ex.Tool], func(other namedExample[E]) bool { return other.name == name })
		if dup {
			t.Errorf("tool %q has two examples named %q", ex.Tool, name)
			continue
		}
		byTool[ex.Tool] = append(byTool[ex.Tool], namedExample[E]{ex, name})
	}
	for _, name := range slices.Sorted(maps.Keys(v.listed)) {
		e, ok := r.Effect(name)
		switch {
		case !ok:
			t.Errorf("tool %q is on the server but has no effect classification: there is nothing to verify", name)
			delete(byTool, name)
		case len(byTool[name]) == 0:
			t.Errorf("tool %q, classified %s, has no example: its effect is not proved", name, e)
		}
	}
	for name, e := range r.All() {
		if _, ok := v.listed[name]; !ok {
			t.Errorf("tool %q is classified %s but is not on the server", name, e)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(v.opts.Overcautious)) {
		e, ok := r.Effect(name)
		_, listed := v.listed[name]
		switch {
		case !ok || !listed:
			t.Errorf("VerifyOptions.Overcautious waives tool %q, which is not a classified tool of the server", name)
		case e&mcpeffect.Write == 0:
			t.Errorf("VerifyOptions.Overcautious waives tool %q, a read, which claims nothing to waive", name)
		case strings.TrimSpace(v.opts.Overcautious[name]) == "":
			t.Errorf("VerifyOptions.Overcautious waives tool %q without a reason", name)
		}
	}
	return byTool
}

// runner is what *testing.T has, and testing.TB lacks, to run subtests.
type runner interface {
	Run(name string, f func(t *testing.T)) bool
}

// run calls f in a subtest of t called name if t can run subtests, and
// otherwise with t itself. It reports whether f passed, as far as run can
// tell: without a subtest, f reports its own failures.
func run(t testing.TB, name string, parallel bool, f func(t testing.TB)) bool {
	t.Helper()
	if r, ok := t.(runner); ok {
		return r.Run(name, func(t *testing.T) {
			// A failure is reported at the line of the caller of
			// Verify, through the call of Run: every frame between is a
			// helper.
			t.Helper()
			if parallel {
				t.Parallel()
			}
			f(t)
		})
	}
	f(t)
	return true
}

// tool runs the examples of one tool, in order, and then judges whether
// they show all that the tool's classification e claims: for a tool with
// a rule, all that each of its outcomes claims.
func (v *verifier[E]) tool(t testing.TB, name string, e mcpeffect.Effect, rule *mcpeffect.EffectRule, examples []namedExample[E]) {
	t.Helper()
	var schema *jsonschema.Resolved
	if s, err := resolveSchema(v.listed[name]); err != nil {
		t.Logf("tool %q: its input schema cannot be read (%v); only the server will check the examples' arguments", name, err)
	} else {
		schema = s
	}
	byEffect := map[mcpeffect.Effect]*effectproof.Evidence{}
	complete := true
	for _, ex := range examples {
		var out outcome
		passed := run(t, ex.name, false, func(t testing.TB) {
			t.Helper()
			out = v.example(t, name, e, rule, schema, ex)
		})
		complete = complete && passed && !out.failed
		all := byEffect[out.effect]
		if all == nil {
			all = &effectproof.Evidence{}
			byEffect[out.effect] = all
		}
		all.Merge(out.Evidence)
	}
	if !complete {
		return // a failed example may have hidden what it would have shown
	}
	var claims []string
	if rule == nil {
		all := byEffect[e]
		if all == nil || !all.Reached {
			t.Errorf("tool %q, classified %s, has no example that reaches its work: every one expects an error", name, e)
			return
		}
		claims = effectproof.Unshown(name, e, "", *all)
	} else {
		var missing []string
		claims, missing = effectproof.RuleClaims(name, rule, byEffect, "Example.Effect")
		for _, m := range missing {
			t.Errorf("%s", m)
		}
	}
	if e&mcpeffect.Write == 0 {
		return // a read claims nothing; plan reports a waiver of one
	}
	reason, waived := v.opts.Overcautious[name]
	switch {
	case len(claims) > 0 && waived:
		for _, c := range claims {
			t.Logf("%s; waived: %s", c, reason)
		}
	case len(claims) > 0:
		for _, c := range claims {
			t.Errorf("%s. Give an example that shows it, classify the tool truthfully, or waive this with a reason in VerifyOptions.Overcautious", c)
		}
	case waived:
		t.Errorf("tool %q is waived in VerifyOptions.Overcautious (%q), but its examples show all its classification %s claims: remove the waiver", name, reason, e)
	}
}

// An outcome is what one example showed.
type outcome struct {
	effectproof.Evidence
	effect mcpeffect.Effect // the effect the example was held to
	failed bool             // Verify reported a failure of the example
}

// example runs one example on a fresh instance and proves what it shows
// against the tool's classification e, or, for a tool with a rule, the
// effect of the example's call.
func (v *verifier[E]) example(t testing.TB, tool string, e mcpeffect.Effect, rule *mcpeffect.EffectRule, schema *jsonschema.Resolved, ex namedExample[E]) (out outcome) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		out.failed = true
		t.Errorf(format, args...)
	}
	at := fmt.Sprintf("tool %q, example %q", tool, ex.name)

	inst, cs, raw, ok := v.prepare(t, at, tool, e, rule, schema, ex)
	if !ok {
		out.failed = true
		return out
	}
	ctx := t.Context()
	ce, failure := effectproof.CallEffect(at, e, rule, raw, ex.Effect, ex.WantError != "", "Example.Effect")
	if failure != "" {
		fail("%s", failure)
		return out
	}
	out.effect = ce
	if rule != nil {
		e = ce
		at = fmt.Sprintf("%s (of effect %s)", at, e)
	}

	hints, _ := inst.Registry.Effect(tool)
	res := effectproof.Prove(effectproof.Trial{
		At: at, Tool: tool, Example: ex.name, Effect: e, Hints: hints, WantError: ex.WantError,
		Capture: inst.capture(ctx),
		Call: func() string {
			_, failure := callTool(ctx, cs, tool, raw)
			return failure
		},
	})
	switch {
	case res.Failure != "":
		fail("%s", res.Failure)
		return out
	case res.Refused:
		return out
	}
	if res.RepeatError != "" {
		t.Logf("%s: the repeat failed: %s", at, res.RepeatError)
	}
	out.Evidence = res.Evidence
	for _, l := range res.Lies {
		fail("%s", l.Message)
	}
	if ex.Undo && !out.failed {
		if !v.undo(t, at, tool, e, rule, schema, ex) {
			out.failed = true
		}
	}
	return out
}

// prepare makes an instance for the example ex of tool, made at at, and
// gets it ready for the call: the instance's classification checked
// against the first one's, a session of the instance's caller, the
// example's fixtures, the session of its caller, and its arguments,
// checked against the tool's input schema. It reports each failure to t
// and returns false after one.
func (v *verifier[E]) prepare(t testing.TB, at, tool string, e mcpeffect.Effect, rule *mcpeffect.EffectRule, schema *jsonschema.Resolved, ex namedExample[E]) (inst Instance[E], cs *mcp.ClientSession, raw json.RawMessage, ok bool) {
	t.Helper()
	inst = v.newInstance(t)
	if err := inst.check(); err != nil {
		t.Errorf("%s: %v", at, err)
		return inst, nil, nil, false
	}
	if got, ok := inst.Registry.Effect(tool); !ok || got != e {
		t.Errorf("%s: the example's instance classifies the tool %s, but the first instance Verify made classified it %s", at, got, e)
		return inst, nil, nil, false
	}
	if got, _ := inst.Registry.Rule(tool); (got == nil) != (rule == nil) || got != nil && got.String() != rule.String() {
		t.Errorf("%s: the example's instance classifies the tool by %v, but the first instance Verify made by %v", at, got, rule)
		return inst, nil, nil, false
	}
	ctx := t.Context()
	owner := withSessionScope(ctx, mcpeffect.Full)
	if inst.Caller != nil {
		if owner = inst.Caller(ctx); owner == nil {
			t.Errorf("%s: the Instance's Caller returned a nil context", at)
			return inst, nil, nil, false
		}
	}
	owned := connectTo(t, owner, inst.Server, inst.Connect)
	if owned == nil {
		return inst, nil, nil, false
	}
	t.Cleanup(func() { owned.Close() })
	cs = owned

	args := ex.Args
	if ex.Setup != nil {
		args = ex.Setup(t, inst.Env, &Session{t: t, server: inst.Server, dial: inst.Connect, cs: cs})
	}
	if ex.Caller != nil {
		callerCtx := ex.Caller(ctx, inst.Env)
		if callerCtx == nil {
			t.Errorf("%s: the example's Caller returned a nil context", at)
			return inst, nil, nil, false
		}
		caller := connectTo(t, callerCtx, inst.Server, inst.Connect)
		if caller == nil {
			return inst, nil, nil, false
		}
		t.Cleanup(func() { caller.Close() })
		cs = caller
	}
	raw, err := marshalArgs(args)
	if err != nil {
		t.Errorf("%s: the example's arguments: %v", at, err)
		return inst, nil, nil, false
	}
	if err := validateArgs(schema, raw); err != nil {
		t.Errorf("%s: the tool's input schema refuses the example's arguments %s: %s", at, shown(string(raw)), printable(err.Error(), maxShownError))
		return inst, nil, nil, false
	}
	return inst, cs, raw, true
}

// undo checks the undo of tool, as the example ex asks (see [Example]
// Undo), on an instance of its own, and reports whether it restored the
// state: the undo the tool publishes in its listing, not the one its
// registry holds, since a host reads the listing.
func (v *verifier[E]) undo(t testing.TB, at, tool string, e mcpeffect.Effect, rule *mcpeffect.EffectRule, schema *jsonschema.Resolved, ex namedExample[E]) bool {
	t.Helper()
	listed, err := json.Marshal(v.listed[tool])
	if err != nil {
		t.Errorf("%s: checking its undo, the tool as listed: %v", at, err)
		return false
	}
	rec, err := host.ParseRecovery(listed)
	switch {
	case err != nil:
		// The words of the listing are the server's.
		t.Errorf("%s: the example checks its undo, but the undo the tool publishes cannot be used: %s", at, printable(err.Error(), maxShownError))
		return false
	case rec == nil:
		t.Errorf("%s: the example checks its undo, but the tool publishes none (see Registry.DeclareRecovery)", at)
		return false
	}
	undo := rec.CompensatingOperation.OperationID
	if _, ok := v.listed[undo]; !ok {
		t.Errorf("%s: its undo, %q, is not a tool the server lists", at, undo)
		return false
	}
	checking := at + ", checking its undo"
	inst, cs, raw, ok := v.prepare(t, checking, tool, e, rule, schema, ex)
	if !ok {
		return false
	}
	ctx := t.Context()
	call := func(name string, args json.RawMessage) (json.RawMessage, string) {
		res, failure := callTool(ctx, cs, name, args)
		if failure != "" || res.StructuredContent == nil {
			return nil, failure
		}
		structured, err := json.Marshal(res.StructuredContent)
		if err != nil {
			// What go-sdk decoded from JSON marshals.
			return nil, fmt.Sprintf("its structured content: %v", err)
		}
		return structured, ""
	}
	res := effectproof.ProveUndo(effectproof.UndoTrial{
		At: at, Tool: tool, Example: ex.name, Recovery: *rec, Request: raw,
		Capture: inst.capture(ctx),
		Call:    func() (json.RawMessage, string) { return call(tool, raw) },
		Undo: func(args json.RawMessage) string {
			_, failure := call(undo, args)
			return failure
		},
	})
	switch {
	case res.Failure != "":
		t.Errorf("%s", res.Failure)
		return false
	case !res.Restored:
		t.Errorf("%s", res.Lie.Message)
		return false
	}
	return true
}

// capture returns the function that captures the instance's state, in
// canonical form, for a trial.
func (inst *Instance[E]) capture(ctx context.Context) func() (effectproof.Snapshot, error) {
	return func() (effectproof.Snapshot, error) {
		s, err := inst.State(ctx)
		if err != nil {
			return nil, err
		}
		return canonical(s)
	}
}

// callTool calls the tool called name with args in cs, and returns its
// result, or the text of the error it met (a protocol error or a tool
// error), escaped for a failure message.
func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args json.RawMessage) (*mcp.CallToolResult, string) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	switch {
	case err != nil:
		return nil, printable(err.Error(), maxShownError)
	case res.IsError:
		return nil, printable(resultText(res), maxShownError)
	}
	return res, ""
}

// check reports what is missing from an Instance.
func (inst *Instance[E]) check() error {
	switch {
	case inst.Server == nil && inst.Connect == nil:
		return errors.New("the Instance has no Server")
	case inst.Registry == nil:
		return errors.New("the Instance has no Registry")
	case inst.State == nil:
		return errors.New("the Instance has no State function")
	}
	return nil
}

// maxShownError is the most bytes of an error's text a failure shows.
const maxShownError = effectproof.MaxShownError

// resultText returns the text of a tool result, for an error.
func resultText(res *mcp.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) == 0 {
		return "(a tool error without text)"
	}
	return strings.Join(texts, "; ")
}

func marshalArgs(args any) (json.RawMessage, error) { return effectproof.MarshalArgs(args) }

// resolveSchema resolves the input schema a tool advertises; a tool
// without one has nil.
func resolveSchema(tool *mcp.Tool) (*jsonschema.Resolved, error) {
	if tool == nil || tool.InputSchema == nil {
		return nil, nil
	}
	return effectproof.ResolveSchema(tool.InputSchema)
}

func validateArgs(schema *jsonschema.Resolved, raw json.RawMessage) error {
	return effectproof.ValidateArgs(schema, raw)
}

// A Session is a client's connection to the instance an example runs on.
// [Example.Setup] uses it to make the fixtures the example's call needs
// through the server's own tools, as the example's caller or, with
// [Session.Connect], as another.
type Session struct {
	t      testing.TB
	server *mcp.Server
	dial   func(context.Context) (*mcp.ClientSession, error) // Instance.Connect
	cs     *mcp.ClientSession
}

// Client returns the go-sdk session, for what [Session.CallTool] does not
// do, such as a call whose failure is expected.
func (s *Session) Client() *mcp.ClientSession { return s.cs }

// CallTool calls the tool called name with args, which must marshal to a
// JSON object (nil is {}), and, if out is not nil, decodes the result's
// structured content into out, as json.Unmarshal does. A fixture that is
// not made leaves nothing to verify, so CallTool ends the example with
// t.Fatalf if the call fails, returns a tool error, or has no structured
// content for out.
func (s *Session) CallTool(name string, args, out any) {
	s.t.Helper()
	raw, err := marshalArgs(args)
	if err != nil {
		s.t.Fatalf("mcpeffecttest: making a fixture with tool %q: the arguments: %v", name, err)
	}
	res, err := s.cs.CallTool(s.t.Context(), &mcp.CallToolParams{Name: name, Arguments: raw})
	switch {
	case err != nil:
		s.t.Fatalf("mcpeffecttest: making a fixture with tool %q: %v", name, err)
	case res.IsError:
		s.t.Fatalf("mcpeffecttest: making a fixture with tool %q: it returned a tool error: %s", name, printable(resultText(res), maxShownError))
	case out == nil:
		return
	case res.StructuredContent == nil:
		s.t.Fatalf("mcpeffecttest: making a fixture with tool %q: its result has no structured content to decode", name)
	}
	data, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		s.t.Fatalf("mcpeffecttest: making a fixture with tool %q: decoding its result: %v", name, err)
	}
}

// Connect opens another session on the same instance, whose requests see
// ctx, as [Instance.Caller] and [Example.Caller] do: for a fixture that
// another caller makes, such as a task a person files for an agent to
// work on. The session closes when the example ends.
func (s *Session) Connect(ctx context.Context) *Session {
	s.t.Helper()
	cs := connectTo(s.t, ctx, s.server, s.dial)
	if cs == nil {
		s.t.FailNow()
	}
	s.t.Cleanup(func() { cs.Close() })
	return &Session{t: s.t, server: s.server, dial: s.dial, cs: cs}
}

// connectTo opens a session to server in process, or, without a server,
// with dial (Instance.Connect).
func connectTo(t testing.TB, ctx context.Context, server *mcp.Server, dial func(context.Context) (*mcp.ClientSession, error)) *mcp.ClientSession {
	t.Helper()
	if server != nil || dial == nil {
		return connect(t, ctx, server)
	}
	cs, err := dial(ctx)
	if err != nil {
		t.Errorf("mcpeffecttest: connecting to the server: %v", err)
		return nil
	}
	return cs
}
