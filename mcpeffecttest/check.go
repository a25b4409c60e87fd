package mcpeffecttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testhook"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Check connects to server in-process, over [mcp.NewInMemoryTransports],
// and fails t on any disagreement between the server and r:
//
//   - a tool on the server that r does not classify;
//   - a tool classified in r that is not on the server;
//   - an advertised annotation, among the four hints, that is missing or
//     differs from the one r derives from the tool's effect (for a tool
//     whose effect depends on its arguments, the worst case of its
//     outcomes).
//
// It then proves each boundary between scopes: it connects with a
// read-only scope (see [mcpeffect.WithConnectionScope]) and calls every
// listed tool that is not a read, then with a non-destructive scope and
// calls every destructive tool, with empty arguments. It fails unless each
// call is refused by the middleware of [mcpeffect.Registry] with a
// [mcpeffect.DeniedError] for that tool: that refusal is made before the
// tool's handler would run, so a passing Check also shows that no handler
// ran. Check never calls a tool that a scope allows, since that would run
// its handler. A server without the middleware, or one that enforces
// read-only and nothing else, fails here, saying so: tools added with
// [mcpeffect.AddTool] refuse to run without the middleware, but those added
// with go-sdk alone run their handlers with empty arguments, so give Check
// a server whose storage the test can throw away.
//
// A tool whose effect depends on its arguments (see [mcpeffect.EffectRule])
// is checked at each boundary for each outcome that the scope does not
// allow, with arguments that select it: those of the calls given for the
// tool, or else, in the common form ([mcpeffect.EffectByArgument]), the
// rule's argument alone, set to the outcome's value; and with an
// argument value that the rule does not declare, whose call counts as the
// worst case. Other arguments that the input schema requires are given
// too, each its const, its first enum value, its default or the zero value
// of its type; where the schema refuses those (a pattern, a minimum
// length), give a [Call] for each outcome, with arguments it accepts.
// In the general form ([mcpeffect.EffectByFunc]) Check cannot
// make arguments for an outcome: without calls given for the tool, it
// checks only that a scope that allows none of the outcomes is refused.
// A call given whose arguments the tool's input schema refuses is
// reported.
//
// Check lists the tools as the server holds them, even when the middleware
// hides them from callers (HideDenied).
func Check(t testing.TB, server *mcp.Server, r *mcpeffect.Registry, calls ...Call) {
	t.Helper()
	check(t, func(ctx context.Context) *mcp.ClientSession { return connect(t, ctx, server) }, r, calls)
}

// CheckClient is [Check] for a server that Check cannot connect to in
// process itself, such as one served over HTTP, or built on another SDK
// (package mcpgo, for mcp-go): connect opens each session that Check
// needs, whose requests must have the scope that [SessionScope] reads
// from ctx. In process, ctx carries that scope itself
// ([mcpeffect.WithConnectionScope]), as a connection given ctx has; over
// HTTP, connect gives the session a bearer token of that scope (see the
// example). Check closes each session it opens.
//
// To list the server's tools as they are, unfiltered by HideDenied, ctx
// carries a mark that this module's middleware and adapters read in
// process. Over HTTP the mark does not reach the server, and the list is
// the full scope's: a server with HideDenied then hides the tools that no
// scope may call, those its registry does not classify, and CheckClient
// cannot report them. Check such a server with HideDenied off, or in
// process.
func CheckClient(t testing.TB, connect func(ctx context.Context) (*mcp.ClientSession, error), r *mcpeffect.Registry, calls ...Call) {
	t.Helper()
	check(t, func(ctx context.Context) *mcp.ClientSession {
		t.Helper()
		cs, err := connect(ctx)
		if err != nil {
			t.Errorf("mcpeffecttest: connecting to the server: %v", err)
			return nil
		}
		return cs
	}, r, calls)
}

// check is Check with the sessions that open opens, nil where it failed.
func check(t testing.TB, open func(context.Context) *mcp.ClientSession, r *mcpeffect.Registry, calls []Call) {
	t.Helper()
	ctx := context.Background()

	listed := listToolsWith(t, testhook.WithUnfilteredList(withSessionScope(ctx, mcpeffect.Full)), open)
	if listed == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		tool := listed[name]
		e, ok := r.Effect(name)
		if !ok {
			t.Errorf("tool %q is on the server but has no effect classification: no scope may call it", name)
			continue
		}
		for _, d := range annotationDiffs(tool.Annotations, r.Annotations(name)) {
			t.Errorf("tool %q, classified %s: %s", name, e, d)
		}
	}
	for name, e := range r.All() {
		if _, ok := listed[name]; !ok {
			t.Errorf("tool %q is classified %s but is not on the server", name, e)
		}
	}
	byTool := planCalls(t, r, listed, calls)

	for _, scope := range []mcpeffect.Scope{mcpeffect.ReadOnly, mcpeffect.NonDestructive} {
		checkRefusals(t, open, r, scope, listed, byTool)
	}
}

// A Call is a call of a tool whose effect depends on its arguments, for
// [Check] to prove that each scope that may not make it is refused.
type Call struct {
	// Tool is the tool to call.
	Tool string
	// Args are the call's arguments: anything that marshals to a JSON
	// object. Nil is {}.
	Args any
	// Effect is the effect of the call. In the common form it may be left
	// zero: the rule gives it from Args. In the general form it is
	// required, since only the handler's decoded input gives it.
	Effect mcpeffect.Effect
}

// A plannedCall is a Call ready to make: its arguments in JSON, its
// effect known, and how to name it in failures.
type plannedCall struct {
	args   json.RawMessage
	effect mcpeffect.Effect
	what   string
	// probe marks the call with an undeclared value, which go-sdk's
	// schema validation may refuse before the middleware as well.
	probe bool
}

// planCalls returns the calls to make for each tool with a rule, and
// reports the calls given that cannot be made.
func planCalls(t testing.TB, r *mcpeffect.Registry, listed map[string]*mcp.Tool, calls []Call) map[string][]plannedCall {
	t.Helper()
	byTool := map[string][]plannedCall{}
	covered := map[string]map[string]bool{} // tool, value
	for i, c := range calls {
		rule, ok := r.Rule(c.Tool)
		_, onServer := listed[c.Tool]
		if !ok || !onServer {
			t.Errorf("call %d is of tool %q, which is not a tool of the server whose effect depends on its arguments", i, c.Tool)
			continue
		}
		raw, err := marshalArgs(c.Args)
		if err != nil {
			t.Errorf("call %d of tool %q: the arguments: %v", i, c.Tool, err)
			continue
		}
		e, certain := rule.CallEffect(raw)
		switch {
		case c.Effect == 0 && !certain:
			t.Errorf("call %d of tool %q: its arguments %s do not give the effect with certainty (see EffectRule.CallEffect); give it in Call.Effect", i, c.Tool, shown(string(raw)))
			continue
		case c.Effect == 0:
		case certain && c.Effect != e:
			t.Errorf("call %d of tool %q: the call says %s, but the rule gives %s for its arguments %s", i, c.Tool, c.Effect, e, shown(string(raw)))
			continue
		default:
			e = c.Effect
		}
		byTool[c.Tool] = append(byTool[c.Tool], plannedCall{args: raw, effect: e, what: "with arguments " + shown(string(raw))})
		if arg := rule.Argument(); arg != "" {
			var m map[string]any
			if json.Unmarshal(raw, &m) == nil {
				if v, ok := m[arg].(string); ok {
					if covered[c.Tool] == nil {
						covered[c.Tool] = map[string]bool{}
					}
					covered[c.Tool][v] = true
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		rule, ok := r.Rule(name)
		if !ok || rule.Argument() == "" {
			continue
		}
		arg := rule.Argument()
		others := requiredArgs(listed[name].InputSchema, arg)
		// args returns the arguments that set arg to value, and says
		// what they are: the value alone, or with the others.
		args := func(value, alone, with string) (json.RawMessage, string) {
			m := maps.Clone(others)
			if m == nil {
				m = map[string]any{}
			}
			m[arg] = value
			raw, _ := json.Marshal(m)
			if len(others) == 0 {
				return raw, fmt.Sprintf("with %s=%q%s", arg, value, alone)
			}
			return raw, fmt.Sprintf("with %s=%q%s and the other arguments its schema requires, %s", arg, value, with, shown(string(raw)))
		}
		for _, o := range rule.Outcomes() {
			if covered[name][o.Value] {
				continue
			}
			raw, what := args(o.Value, " alone", "")
			byTool[name] = append(byTool[name], plannedCall{args: raw, effect: o.Effect, what: what})
		}
		raw, what := args(undeclaredValue, ", which it does not declare", ", which it does not declare,")
		byTool[name] = append(byTool[name], plannedCall{args: raw, effect: rule.Worst(), what: what, probe: true})
		// Without the argument, the raw arguments leave the outcome to
		// the tool's wrapper, which reads the handler's input: a server
		// without it would run the call.
		without := maps.Clone(others)
		if without == nil {
			without = map[string]any{}
		}
		raw, _ = json.Marshal(without)
		byTool[name] = append(byTool[name], plannedCall{args: raw, effect: rule.Worst(), what: fmt.Sprintf("without %s, %s", arg, shown(string(raw))), probe: true})
	}
	return byTool
}

// requiredArgs returns a value for each property that the input schema
// requires, but arg: its const, its first enum value, its default, or
// else the zero value of its type (null where null is allowed). A schema
// whose constraints those do not meet (a pattern, a minimum length)
// refuses them: then the calls must be given, with arguments it accepts.
func requiredArgs(schema any, arg string) map[string]any {
	data, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type    any             `json:"type"`
			Const   json.RawMessage `json:"const"`
			Enum    []any           `json:"enum"`
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	out := map[string]any{}
	for _, name := range s.Required {
		if name == arg {
			continue
		}
		p := s.Properties[name]
		switch {
		case len(p.Const) > 0:
			out[name] = p.Const
		case len(p.Enum) > 0:
			out[name] = p.Enum[0]
		case len(p.Default) > 0:
			out[name] = p.Default
		default:
			types, _ := p.Type.([]any)
			if t, ok := p.Type.(string); ok {
				types = []any{t}
			}
			if slices.Contains(types, any("null")) {
				out[name] = nil
				continue
			}
			if len(types) == 0 {
				out[name] = nil
				continue
			}
			switch types[0] {
			case "string":
				out[name] = ""
			case "integer", "number":
				out[name] = 0
			case "boolean":
				out[name] = false
			case "array":
				out[name] = []any{}
			case "object":
				out[name] = map[string]any{}
			default:
				out[name] = nil
			}
		}
	}
	return out
}

// undeclaredValue is the value of a rule's argument that Check sends to
// prove that an undeclared value counts as the worst case.
const undeclaredValue = "mcpeffecttest: no such value"

// checkRefusals connects to server with scope and calls every listed tool
// that scope may not call, each of which must be refused by the middleware;
// for a tool whose effect depends on its arguments, each planned call that
// scope may not make.
func checkRefusals(t testing.TB, open func(context.Context) *mcp.ClientSession, r *mcpeffect.Registry, scope mcpeffect.Scope, listed map[string]*mcp.Tool, byTool map[string][]plannedCall) {
	t.Helper()
	ctx := context.Background()
	cs := open(withSessionScope(ctx, scope))
	if cs == nil {
		return
	}
	defer cs.Close()
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		rule, byArgs := r.Rule(name)
		if !byArgs {
			if r.Allowed(name, scope) {
				continue // calling it would run its handler
			}
			checkRefused(t, cs, listed[name], scope, json.RawMessage("{}"), "", false)
			continue
		}
		if !slices.ContainsFunc(rule.Outcomes(), func(o mcpeffect.Outcome) bool { return scope.Allows(o.Effect) }) {
			// No outcome allowed: refused whatever the arguments.
			checkRefused(t, cs, listed[name], scope, json.RawMessage("{}"), "whatever its arguments", false)
			continue
		}
		for _, c := range byTool[name] {
			if scope.Allows(c.effect) {
				continue
			}
			checkRefused(t, cs, listed[name], scope, c.args, c.what, c.probe)
		}
	}
}

// checkRefused calls tool with args, on a session of scope, and fails t
// unless the middleware (or the tool's wrapper) refuses it. what says
// which call it is, for a tool whose effect depends on its arguments;
// probe accepts a refusal by the tool's input schema too.
func checkRefused(t testing.TB, cs *mcp.ClientSession, tool *mcp.Tool, scope mcpeffect.Scope, args json.RawMessage, what string, probe bool) {
	t.Helper()
	name := tool.Name
	at := fmt.Sprintf("tool %q with a %s scope", name, scope)
	if what != "" {
		at = fmt.Sprintf("tool %q %s, with a %s scope", name, what, scope)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	// A result marked as an error, for arguments that the tool's input
	// schema refuses, is go-sdk's refusal of them before any handler: it
	// is told apart by the schema, as this package reads it, not by the
	// words of go-sdk's message.
	schemaRefused := false
	if err == nil && res.IsError {
		if schema, serr := resolveSchema(tool); serr == nil && validateArgs(schema, args) != nil {
			schemaRefused = true
		}
	}
	d, denied := mcpeffect.AsDeniedError(err)
	var rpcErr *jsonrpc.Error
	switch {
	case denied && d.Tool == name:
		// Refused before the handler, as it must be.
	case denied:
		t.Errorf("%s: refused, but the refusal names tool %q", at, d.Tool)
	case errors.As(err, &rpcErr) && rpcErr.Code == mcpeffect.CodeNotEnforced:
		t.Errorf("%s: the server has no mcpeffect middleware: the call was refused by mcpeffect.AddTool, which runs no handler without it, not by the middleware that checks the caller's scope; "+
			"install it with server.AddReceivingMiddleware(registry.Middleware(opts))", at)
	case err != nil:
		t.Errorf("%s: want a refusal by the mcpeffect middleware, got another error, so its handler may have run: %v", at, err)
	case schemaRefused && probe:
		// The schema refuses the undeclared value: the handler did not
		// run either.
	case schemaRefused && what != "":
		t.Errorf("%s: go-sdk's schema validation refused the arguments (%s) before the effect of the call was checked: "+
			"give Check a Call of the tool with arguments that its input schema accepts", at, resultText(res))
	case schemaRefused:
		// go-sdk validates the arguments of a typed handler before
		// calling it, and after the middleware would have refused.
		t.Errorf("%s: want a refusal by the mcpeffect middleware, but go-sdk's schema validation refused the empty arguments (%s): "+
			"the handler did not run, but nothing checked the caller's scope first, so the server has no mcpeffect middleware, or one whose registry lets this scope call it",
			at, resultText(res))
	default:
		t.Errorf("%s: want a refusal, but the call returned a result (isError %t): its handler ran", at, res.IsError)
	}
}

// connect opens an in-process session to server, whose requests see ctx.
func connect(t testing.TB, ctx context.Context, server *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Errorf("mcpeffecttest: connecting to the server: %v", err)
		return nil
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpeffecttest", Version: "v1"}, nil)
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Errorf("mcpeffecttest: connecting a client: %v", err)
		return nil
	}
	return cs
}

// listToolsWith returns every tool of the server that open connects to,
// by name, following pagination.
func listToolsWith(t testing.TB, ctx context.Context, open func(context.Context) *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	cs := open(ctx)
	if cs == nil {
		return nil
	}
	defer cs.Close()
	tools := make(map[string]*mcp.Tool)
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Errorf("mcpeffecttest: listing tools: %v", err)
			return nil
		}
		if _, dup := tools[tool.Name]; dup {
			t.Errorf("tool %q is listed twice", tool.Name)
		}
		tools[tool.Name] = tool
	}
	return tools
}

// annotationDiffs describes each hint of got that is missing or differs
// from want, whose hints are all explicit.
func annotationDiffs(got, want *mcp.ToolAnnotations) []string {
	if got == nil {
		return []string{"the server advertises no annotations; hosts will assume the worst"}
	}
	var diffs []string
	if got.ReadOnlyHint != want.ReadOnlyHint {
		diffs = append(diffs, fmt.Sprintf("readOnlyHint is %t, want %t", got.ReadOnlyHint, want.ReadOnlyHint))
	}
	if got.IdempotentHint != want.IdempotentHint {
		diffs = append(diffs, fmt.Sprintf("idempotentHint is %t, want %t", got.IdempotentHint, want.IdempotentHint))
	}
	for _, h := range []struct {
		name      string
		got, want *bool
	}{
		{"destructiveHint", got.DestructiveHint, want.DestructiveHint},
		{"openWorldHint", got.OpenWorldHint, want.OpenWorldHint},
	} {
		switch {
		case h.got == nil:
			diffs = append(diffs, fmt.Sprintf("%s is missing (hosts assume true), want %t", h.name, *h.want))
		case *h.got != *h.want:
			diffs = append(diffs, fmt.Sprintf("%s is %t, want %t", h.name, *h.got, *h.want))
		}
	}
	return diffs
}
