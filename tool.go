package mcpeffect

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/mcpeffect/mcpeffect/internal/testhook"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Classification is what [AddTool] and [AddToolHandler] classify a tool
// by: one [Effect], an [*EffectRule] of the common form
// ([EffectByArgument]), or a [*FuncRule] whose function takes In, the
// input of the tool's handler, so that a rule written for another input
// does not compile. For [AddToolHandler], In is [json.RawMessage], the raw
// arguments.
type Classification[In any] interface {
	Effect | *EffectRule | *FuncRule[In]
}

// AddTool classifies t.Name in r by c, sets the tool's annotations from
// that one classification, and adds the tool to s with [mcp.AddTool].
// A title the caller set in t.Annotations is kept; t itself is not changed.
// c is an [Effect], or for a tool whose effect depends on its arguments a
// rule (see [EffectRule]): the tool then advertises the worst case of the
// rule's outcomes, and publishes each outcome in its _meta under
// [OutcomesMetaKey], for audits and people to read; each call has its own
// effect, computed from in, the input that go-sdk has decoded for h, so
// that it is exactly what the handler will act on, and is refused, as
// the middleware refuses, when the caller's scope does not allow it.
//
// The handler runs only when the middleware ([Registry.Middleware],
// [Enforcer.Middleware]) has let the call through: on a server without
// it, every call to the tool is refused with a JSON-RPC error of code
// [CodeNotEnforced] that says how to install it, so that classifying tools without
// enforcing them fails at the first call rather than in production.
// (go-sdk validates the arguments of the typed handler first: a call
// with arguments its schema refuses gets that error instead.) If the
// middleware asks for confirmation ([MiddlewareOptions.Confirm]), the
// handler runs only once a person has accepted the call.
//
// Like [mcp.AddTool] on a bad schema, AddTool panics when the classification
// is refused (see [Registry.Add]; a name already classified the same way
// is accepted), and when t arrives with hints that disagree with it
// (for a rule, its worst case): a hint written twice is the drift this
// package exists to prevent, so the hints are best left out. go-sdk
// cannot tell a readOnlyHint or idempotentHint of false from one left
// out, so only true is checked there. It panics too when t's _meta holds
// [OutcomesMetaKey] (for a rule, with other outcomes than its own), on a
// nil handler, and on a rule that cannot be used (see [EffectByArgument]
// and [EffectByFunc]).
func AddTool[In, Out any, C Classification[In]](s *mcp.Server, r *Registry, t *mcp.Tool, c C, h mcp.ToolHandlerFor[In, Out]) {
	if h == nil {
		panic("mcpeffect: AddTool: nil handler")
	}
	switch c := any(c).(type) {
	case Effect:
		addTyped(s, r, t, c, h)
	case *EffectRule:
		addTypedRule(s, r, t, c, h)
	case *FuncRule[In]:
		addTypedRule(s, r, t, c.rule(), h)
	}
}

func addTyped[In, Out any](s *mcp.Server, r *Registry, t *mcp.Tool, e Effect, h mcp.ToolHandlerFor[In, Out]) {
	tt := r.classify(t, e, nil)
	mcp.AddTool(s, tt, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		info, err := enforced(ctx, tt.Name)
		if err != nil {
			return nil, zero, err
		}
		if res, err := info.admit(ctx, req, tt, e, nil, nil); res != nil || err != nil {
			return res, zero, err
		}
		return h(ctx, req, in)
	})
}

// AddToolHandler is [AddTool] for a low-level [mcp.ToolHandler], added
// with [mcp.Server.AddTool]: the handler unmarshals and validates its own
// arguments. For a rule, the effect of each call comes from its raw
// arguments: read strictly in the common form (see
// [EffectRule.CallEffect]: an argument given twice, or in another case,
// counts as the worst case, since the handler's own decoding might read
// either), or given to the function of a [FuncRule] over
// [json.RawMessage].
func AddToolHandler[C Classification[json.RawMessage]](s *mcp.Server, r *Registry, t *mcp.Tool, c C, h mcp.ToolHandler) {
	if h == nil {
		panic("mcpeffect: AddToolHandler: nil handler")
	}
	switch c := any(c).(type) {
	case Effect:
		addHandler(s, r, t, c, h)
	case *EffectRule:
		addHandlerRule(s, r, t, c, h)
	case *FuncRule[json.RawMessage]:
		addHandlerRule(s, r, t, c.rule(), h)
	}
}

func addHandler(s *mcp.Server, r *Registry, t *mcp.Tool, e Effect, h mcp.ToolHandler) {
	tt := r.classify(t, e, nil)
	s.AddTool(tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		info, err := enforced(ctx, tt.Name)
		if err != nil {
			return nil, err
		}
		if res, err := info.admit(ctx, req, tt, e, nil, nil); res != nil || err != nil {
			return res, err
		}
		return h(ctx, req)
	})
}

// addTypedRule is AddTool for a tool classified by rule.
func addTypedRule[In, Out any](s *mcp.Server, r *Registry, t *mcp.Tool, rule *EffectRule, h mcp.ToolHandlerFor[In, Out]) {
	effectOf, raw := typedRule[In](rule, t)
	tr := &toolRule{rule: rule, raw: raw}
	if raw {
		tr.schema = resolvedInputSchema(t.Name, t.InputSchema, reflect.TypeFor[In]())
	}
	tt := r.classify(t, 0, tr)
	mcp.AddTool(s, tt, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		info, err := enforced(ctx, tt.Name)
		if err != nil {
			return nil, zero, err
		}
		if res, err := info.admit(ctx, req, tt, 0, rule, func() callOutcome { return effectOf(in) }); res != nil || err != nil {
			return res, zero, err
		}
		return h(ctx, req, in)
	})
}

// addHandlerRule is AddToolHandler for a tool classified by rule.
func addHandlerRule(s *mcp.Server, r *Registry, t *mcp.Tool, rule *EffectRule, h mcp.ToolHandler) {
	checkRule(rule, t)
	if rule.arg == "" && rule.in != reflect.TypeFor[json.RawMessage]() {
		panic(fmt.Sprintf("mcpeffect: AddToolHandler: tool %q: the rule's function takes %s, but a low-level handler's arguments are a json.RawMessage", t.Name, rule.in))
	}
	tt := r.classify(t, 0, &toolRule{rule: rule, raw: true, schema: resolvedInputSchema(t.Name, t.InputSchema, nil)})
	s.AddTool(tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		info, err := enforced(ctx, tt.Name)
		if err != nil {
			return nil, err
		}
		effectOf := func() callOutcome { return rule.outcomeOfRaw(req.Params.Arguments) }
		if res, err := info.admit(ctx, req, tt, 0, rule, effectOf); res != nil || err != nil {
			return res, err
		}
		return h(ctx, req)
	})
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

// typedRule returns the function that computes the outcome of a call of
// the tool t, classified by rule, from the input In of its typed handler.
// It panics if rule cannot be used with In.
//
// raw reports whether the raw arguments of a call give what the handler
// receives (see EffectRule.CallEffect): true only for the common form, with
// an argument decoded as a plain string.
func typedRule[In any](rule *EffectRule, t *mcp.Tool) (effectOf func(In) callOutcome, raw bool) {
	checkRule(rule, t)
	if rule.arg == "" {
		f, ok := rule.fn.(func(In) Effect)
		if !ok {
			panic(fmt.Sprintf("mcpeffect: AddTool: tool %q: the rule's function takes %s, but the handler's input is %s", t.Name, rule.in, reflect.TypeFor[In]()))
		}
		return func(in In) callOutcome {
			e, certain := rule.settleComputed(callSafely(f, in))
			return callOutcome{effect: e, certain: certain}
		}, false
	}
	sel, err := compileSelector(reflect.TypeFor[In](), rule.arg)
	if err != nil {
		panic(fmt.Sprintf("mcpeffect: AddTool: tool %q: the rule's argument %q: %v", t.Name, rule.arg, err))
	}
	return func(in In) callOutcome {
		v, ok := sel.value(reflect.ValueOf(&in), rule.arg)
		if !ok {
			return callOutcome{effect: rule.worst}
		}
		e, declared := rule.byValue[v]
		if !declared {
			return callOutcome{effect: rule.worst, value: v, has: true}
		}
		return callOutcome{effect: e, certain: true, value: v, has: true}
	}, sel.raw
}

// checkRule panics if rule cannot classify the tool t.
func checkRule(rule *EffectRule, t *mcp.Tool) {
	name := ""
	if t != nil {
		name = t.Name
	}
	switch {
	case rule == nil:
		panic(fmt.Sprintf("mcpeffect: tool %q: nil EffectRule", name))
	case rule.err != nil:
		panic(ruleErrorf(ErrInvalidEffect, "mcpeffect: tool %q: %v", name, rule.err))
	}
}

// enforced returns what Registry.Middleware set on ctx for a call that it
// let through. Otherwise it returns the error that refuses to run the
// tool: a server that classifies its tools but never installed the
// middleware would advertise hints and enforce nothing, so it fails
// closed, at its first call, with a message that says how to install it.
func enforced(ctx context.Context, tool string) (*callInfo, error) {
	if info := callerInfo(ctx); info != nil {
		return info, nil
	}
	return nil, notEnforced(fmt.Sprintf("tool %q", tool), "run")
}

// CodeNotEnforced is the JSON-RPC error code with which a tool, resource
// or prompt added with [AddTool] and the others refuses a request that no
// middleware of this package let through: the server classifies what it
// serves but enforces nothing, so nothing runs, and the message says how
// to install the middleware. It is in the range JSON-RPC leaves to
// servers, beside [CodeDenied].
const CodeNotEnforced = -32052

// notEnforced returns the error of a handler that the middleware did not
// let through: what (`tool "x"`) was not done (run, read).
func notEnforced(what, done string) error {
	return &jsonrpc.Error{
		Code: CodeNotEnforced,
		Message: fmt.Sprintf("mcpeffect: %s was not %s: %s, so nothing checked the caller's scope; "+
			"install it with server.AddReceivingMiddleware(registry.Middleware(opts))", what, done, testhook.NoMiddleware),
	}
}

// admit decides, in the wrapper of the handler of tool t, whether the call req
// runs. For a tool with a rule, it computes the effect of the call with
// outcome and refuses it if the caller's scope does not allow it;
// otherwise e is the tool's effect. It then has a person confirm the call
// if the middleware asks for it. It returns nil, nil when the handler may
// run; otherwise the error to return, or a result asking the client for
// input.
func (info *callInfo) admit(ctx context.Context, req *mcp.CallToolRequest, t *mcp.Tool, e Effect, rule *EffectRule, outcome func() callOutcome) (*mcp.CallToolResult, error) {
	enf := info.enf
	c := enf.confirmer
	if rule != nil {
		e = rule.worst
		if c != nil || !info.scope.Permits(e) {
			oc := outcome()
			e = oc.effect
			if d := enf.toolDenial(enf.r.lookup(t.Name), t.Name, info.scope, info.sourced, &oc); d != nil {
				return nil, enf.denied(ctx, d)
			}
		}
	}
	if c != nil && c.opts.Ask(t.Name, e) {
		return c.confirm(ctx, info, req, t, e)
	}
	return nil, nil
}

// classify adds t to r with effect e, or with tr's rule if tr is not
// nil, and returns a copy of t annotated from it, and with a rule's
// outcomes published in its _meta. It panics where AddTool documents.
func (r *Registry) classify(t *mcp.Tool, e Effect, tr *toolRule) *mcp.Tool {
	if t == nil {
		panic("mcpeffect: AddTool: nil tool")
	}
	var rule *EffectRule
	if tr != nil {
		rule = tr.rule
		e = rule.worst
	}
	// The name and the effect first: the hints an invalid effect derives
	// would make the conflict below meaningless.
	if err := validateEntry(t.Name, e); err != nil {
		panic(err)
	}
	want := e.Hints()
	var title string
	if t.Annotations != nil {
		if err := conflict(t.Annotations, want); err != nil {
			what := "classified " + e.String()
			if rule != nil {
				what = "classified by its arguments, with the worst case " + e.String()
			}
			panic(fmt.Sprintf("mcpeffect: AddTool: tool %q is %s, but %v", t.Name, what, err))
		}
		title = t.Annotations.Title
	}
	meta, err := withPublishedOutcomes(t, rule)
	if err != nil {
		panic(err)
	}
	if rule != nil {
		if err := r.addRule(t.Name, tr); err != nil {
			panic(err)
		}
	} else if err := r.Add(t.Name, e); err != nil {
		if ent := r.lookup(t.Name); ent.rule != nil || ent.effect != e {
			panic(err)
		}
	}
	tt := *t
	tt.Annotations = want.Annotations()
	tt.Annotations.Title = title
	tt.Meta = meta
	return &tt
}
