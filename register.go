package mcpeffect

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Registration: what a go-sdk server adds through this package, each
// classified (a tool) or scoped (a resource, a prompt) in the registry
// and wrapped, so that its handler runs only once the decision that the
// middleware put on its context admits it.

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
		ctx, res, err := admitCall(ctx, req, tt, nil)
		if res != nil || err != nil {
			var zero Out
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
		ctx, res, err := admitCall(ctx, req, tt, nil)
		if res != nil || err != nil {
			return res, err
		}
		return h(ctx, req)
	})
}

// addTypedRule is AddTool for a tool classified by rule.
func addTypedRule[In, Out any](s *mcp.Server, r *Registry, t *mcp.Tool, rule *EffectRule, h mcp.ToolHandlerFor[In, Out]) {
	effectOf, raw := typedRule[In](rule, t)
	tr := &toolRule{rule: rule, raw: raw, wrapped: true}
	if raw {
		tr.schema = resolvedInputSchema(t.Name, t.InputSchema, reflect.TypeFor[In]())
	}
	tt := r.classify(t, 0, tr)
	mcp.AddTool(s, tt, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		ctx, res, err := admitCall(ctx, req, tt, func() callOutcome { return effectOf(in) })
		if res != nil || err != nil {
			var zero Out
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
	tt := r.classify(t, 0, &toolRule{rule: rule, raw: true, wrapped: true, schema: resolvedInputSchema(t.Name, t.InputSchema, nil)})
	s.AddTool(tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, res, err := admitCall(ctx, req, tt, func() callOutcome { return rule.outcomeOfRaw(req.Params.Arguments) })
		if res != nil || err != nil {
			return res, err
		}
		return h(ctx, req)
	})
}

// AddResource declares that reading res needs scope need, and adds it to
// s with [mcp.Server.AddResource]. Like a tool added with [AddTool], the
// handler runs only behind [Registry.Middleware], which refuses a caller
// whose scope is narrower; it checks again that the caller's scope allows
// need, since it knows which resource is read.
//
// It panics if res or h is nil, if need is not ReadOnly, NonDestructive or
// Full, if the URI is already declared with another scope, and where
// go-sdk panics (an invalid URI).
func AddResource(s *mcp.Server, r *Registry, res *mcp.Resource, need Scope, h mcp.ResourceHandler) {
	if res == nil || h == nil {
		panic("mcpeffect: AddResource: nil resource or handler")
	}
	if err := r.DeclareResource(res.URI, need); err != nil {
		panic(err)
	}
	s.AddResource(res, resourceHandler(fmt.Sprintf("resource %q", res.URI), need, h))
}

// AddResourceTemplate is [AddResource] for a resource template: reading a
// URI that it matches needs scope need, unless a resource declared for
// that URI itself, or a template before it, says otherwise (see
// [Registry.ResourceScope]). It panics where AddResource does, and on a
// template that is not valid.
func AddResourceTemplate(s *mcp.Server, r *Registry, t *mcp.ResourceTemplate, need Scope, h mcp.ResourceHandler) {
	if t == nil || h == nil {
		panic("mcpeffect: AddResourceTemplate: nil template or handler")
	}
	if err := r.DeclareResourceTemplate(t.URITemplate, need); err != nil {
		panic(err)
	}
	s.AddResourceTemplate(t, resourceHandler(fmt.Sprintf("resource template %q", t.URITemplate), need, h))
}

// resourceHandler wraps h, the handler of the resource or template that
// what names, so that it runs only for a caller whose scope allows need.
func resourceHandler(what string, need Scope, h mcp.ResourceHandler) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if err := admitRead(ctx, what, "read", need, "", req.Params.URI); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}

// AddPrompt declares that getting prompt p needs scope need, and adds it
// to s with [mcp.Server.AddPrompt], as [AddResource] does for a resource.
// It panics if p or h is nil, if need is not ReadOnly, NonDestructive or
// Full, or if the prompt is already declared with another scope.
func AddPrompt(s *mcp.Server, r *Registry, p *mcp.Prompt, need Scope, h mcp.PromptHandler) {
	if p == nil || h == nil {
		panic("mcpeffect: AddPrompt: nil prompt or handler")
	}
	if err := r.DeclarePrompt(p.Name, need); err != nil {
		panic(err)
	}
	name := p.Name
	s.AddPrompt(p, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if err := admitRead(ctx, fmt.Sprintf("prompt %q", name), "given", need, name, ""); err != nil {
			return nil, err
		}
		return h(ctx, req)
	})
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
	} else if err := r.addWrapped(t.Name, e); err != nil {
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
