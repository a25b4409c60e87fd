package mcpeffect

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An Enforcer is the one decision of a [Registry], configured once: the
// scope names, where the caller's scope comes from, the refusal hook and
// confirmation, all from one [MiddlewareOptions]. Every way in is a thin
// adapter over one decision, of which [Enforcer.Decide] is the exported
// form: the receiving middleware ([Enforcer.Middleware]), the handler
// wrappers of [AddTool] and the others, the HTTP step-up challenge
// ([Enforcer.Challenge]), and an adapter for another SDK. Each finds the
// caller's scope and the operation its own way, and then refuses with the
// same functions, which build every [DeniedError]; so two of them cannot
// disagree on what a caller may do.
//
// Make one with [Registry.Enforcer] and pass it where it is needed;
// [Registry.Middleware] is the shortcut for a server that needs only the
// middleware. An Enforcer is safe for concurrent use.
type Enforcer struct {
	r    *Registry
	opts MiddlewareOptions
	// infos[sourced][s] is the callInfo of a call by a caller of scope s,
	// made once so that a call allocates none.
	infos     [2][Full + 1]*callInfo
	confirmer *confirmer // nil without Confirm
}

// Enforcer returns the [Enforcer] of r configured by opts; a nil opts is
// the zero value. It panics if opts.ScopeNames is not valid (see
// [ScopeNames.Validate]), or if opts.Confirm has a Key shorter than 32
// bytes.
func (r *Registry) Enforcer(opts *MiddlewareOptions) *Enforcer {
	e := &Enforcer{r: r}
	if opts != nil {
		e.opts = *opts
	}
	if err := e.opts.ScopeNames.Validate(); err != nil {
		panic(err)
	}
	if e.opts.Confirm != nil {
		e.confirmer = newConfirmer(e.opts.Confirm)
	}
	for sourced := range e.infos {
		for s := range e.infos[sourced] {
			e.infos[sourced][s] = &callInfo{scope: Scope(s), sourced: sourced == 1, enf: e}
		}
	}
	return e
}

// Registry returns the registry that e enforces.
func (e *Enforcer) Registry() *Registry { return e.r }

// ScopeNames returns the scope names e maps token scopes with, as a
// server lists them in its protected resource metadata
// ([ScopeNames.Strings]).
func (e *Enforcer) ScopeNames() ScopeNames { return e.opts.ScopeNames }

// An Operation is one request that [Enforcer.Decide] decides, in terms
// that any MCP server can give, whatever its SDK.
type Operation struct {
	// Method is "tools/call", "resources/read", "prompts/get" or
	// "completion/complete". Any other is refused. A subscription to a
	// resource (resources/subscribe, and each resource of the 2026-07-28
	// subscriptions/listen) is decided as a resources/read of it: a
	// subscriber is told what a reader would read.
	Method string
	// Name is the tool called or the prompt got, or for
	// completion/complete the prompt whose arguments are completed.
	Name string
	// URI is the resource read; for completion/complete, the resource
	// template (or resource) whose arguments are completed; for
	// [Enforcer.Visible], the resource template listed when Template is
	// set.
	URI      string
	Template bool
	// Arguments are the raw JSON arguments of a tools/call, as the client
	// sent them. For a tool whose effect depends on its arguments (see
	// [EffectRule]), the effect of the call is computed from them: in the
	// common form read strictly (see [EffectRule.CallEffect]), in the
	// general form decoded into the function's input type with
	// encoding/json. Anything uncertain is the worst case.
	Arguments json.RawMessage
}

// A Caller is who makes an [Operation]: the scope something gave it.
type Caller struct {
	// Scope is the caller's scope, before the connection's cap (see
	// [WithConnectionScope]), which [Enforcer.Decide] applies.
	Scope Scope
	// Scoped reports that something gave the caller Scope: a token, or
	// the Scope function of [MiddlewareOptions]. Left false, the caller
	// has only the scope of its connection, if any, and a refusal says
	// how to give it one (see [DeniedError] Unscoped).
	Scoped bool
}

// TokenCaller returns the caller whose bearer token holds the scope
// strings scopes, mapped by e's [ScopeNames].
func (e *Enforcer) TokenCaller(scopes []string) Caller {
	return Caller{Scope: e.opts.ScopeNames.Scope(scopes), Scoped: true}
}

// RequestCaller returns the caller of a go-sdk request, as the
// middleware finds it: the [MiddlewareOptions] Scope function if set,
// else the scope strings of the request's bearer token
// ([mcp.RequestExtra] TokenInfo), else nothing.
func (e *Enforcer) RequestCaller(ctx context.Context, req mcp.Request) Caller {
	if e.opts.Scope != nil {
		return Caller{Scope: e.opts.Scope(ctx, req), Scoped: true}
	}
	if req != nil {
		if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
			return e.TokenCaller(extra.TokenInfo.Scopes)
		}
	}
	return Caller{}
}

// granted returns the scope of caller c capped by the connection's scope
// on ctx, and whether anything gave it one.
func granted(ctx context.Context, c Caller) (Scope, bool) {
	s, have := c.Scope, c.Scoped
	if !have {
		s = 0
	}
	capScope, capped := connectionScope(ctx)
	if capped && (!have || capScope < s) {
		s = capScope
	}
	return s, have || capped
}

// A Decision is what [Enforcer.Decide] made of an [Operation]: allowed,
// refused with a [DeniedError], or allowed once a person confirms it.
type Decision struct {
	// Scope is the caller's scope, capped by its connection's, as the
	// handler of an allowed operation should see it.
	Scope Scope
	// Effect is the effect of a tools/call: the tool's, or for a tool
	// whose effect depends on its arguments, that of this call (the
	// worst case where they leave it uncertain). Zero otherwise.
	Effect Effect
	// Denied, if not nil, refuses the operation: send it to the caller
	// as the JSON-RPC error of [DeniedError.JSONRPCError]. The
	// enforcer's OnDenied has already seen it.
	Denied *DeniedError
	// Confirm reports an allowed tools/call that the enforcer's
	// [ConfirmOptions] want a person to confirm before it runs (the
	// "ask" outcome): see [Enforcer.ConfirmQuestion].
	Confirm bool

	scoped bool // something gave the caller a scope (see Caller.Scoped)
}

// Allowed reports whether the operation may go on (once confirmed, if
// Confirm is set).
func (d Decision) Allowed() bool { return d.Denied == nil }

// Decide decides op by caller c: the one decision that every way into an
// [Enforcer] makes. The connection's scope on ctx (see
// [WithConnectionScope]) caps c's. A tool the registry does not classify
// is refused for every scope; a resource or a prompt needs the scope that
// [Registry.ResourceScope] or [Registry.PromptScope] gives. A refusal is
// reported to OnDenied, with ctx, before Decide returns. It allocates
// nothing for an allowed call of a tool with one effect.
func (e *Enforcer) Decide(ctx context.Context, op Operation, c Caller) Decision {
	s, sourced := granted(ctx, c)
	d := Decision{Scope: s, scoped: sourced}
	switch op.Method {
	case "tools/call":
		ent := e.r.lookup(op.Name)
		var oc *callOutcome
		d.Effect = ent.effect
		if ent.rule != nil {
			o := ent.rule.outcomeOfRaw(op.Arguments)
			oc, d.Effect = &o, o.effect
		}
		d.Denied = e.toolDenial(ent, op.Name, s, sourced, oc)
		if d.Denied == nil && e.confirmer != nil && ent.effect != 0 {
			d.Confirm = e.confirmer.opts.Ask(op.Name, d.Effect)
		}
	case "resources/read":
		d.Denied = e.readDenial(e.r.ResourceScope(op.URI), s, sourced, "", op.URI)
	case "prompts/get":
		d.Denied = e.readDenial(e.r.PromptScope(op.Name), s, sourced, op.Name, "")
	case "completion/complete":
		d.Denied = e.completeDenial(op.Name, op.URI, s, sourced)
	default:
		// Not an operation that needs a scope: refused, so that a typo in
		// an adapter fails closed.
		d.Denied = &DeniedError{Tool: op.Name, Granted: s, Unscoped: !sourced}
		if op.Name == "" {
			d.Denied.Tool = op.Method
		}
	}
	if d.Denied != nil {
		e.reportDenied(ctx, d.Denied)
	}
	return d
}

// CallerContext returns a copy of ctx that carries the caller's scope of
// d, an allowed decision, as the middleware hands it to a handler:
// [CallerScopeFromContext] reads it, and the handler wrappers of
// [AddTool] and the others run only with it. An adapter for another SDK
// passes it to the handler of an operation it let through. For a
// decision that refused, it returns ctx unchanged.
func (e *Enforcer) CallerContext(ctx context.Context, d Decision) context.Context {
	if d.Denied != nil {
		return ctx
	}
	return context.WithValue(ctx, callerScopeKey{}, e.info(d.Scope, d.scoped))
}

// Visible reports whether a list shown to caller c keeps op's tool,
// resource, resource template or prompt, as [MiddlewareOptions]
// HideDenied filters them: a tool the caller may call with some
// arguments at least, what it may read or get.
func (e *Enforcer) Visible(ctx context.Context, op Operation, c Caller) bool {
	s, _ := granted(ctx, c)
	return e.visible(op, s)
}

func (e *Enforcer) visible(op Operation, s Scope) bool {
	switch op.Method {
	case "tools/call":
		return e.r.lookup(op.Name).some&(1<<s) != 0
	case "resources/read":
		if op.Template {
			return s.allows(e.r.templateScope(op.URI))
		}
		return s.allows(e.r.ResourceScope(op.URI))
	case "prompts/get":
		return s.allows(e.r.PromptScope(op.Name))
	}
	return false
}

// toolDenial returns the refusal of a call of tool name, classified by
// ent, by a caller of scope s, or nil if s allows it. oc is the outcome
// of the call for a tool with a rule, when its arguments are known; with
// oc nil, a scope that may make some of the tool's calls is let through,
// for the wrapper to decide from the arguments as the handler receives
// them.
func (e *Enforcer) toolDenial(ent *entry, name string, s Scope, sourced bool, oc *callOutcome) *DeniedError {
	switch {
	case ent.rule == nil && ent.callers&(1<<s) != 0:
		return nil
	case ent.rule != nil && oc == nil && ent.some&(1<<s) != 0:
		return nil
	case ent.rule != nil && oc != nil && ent.some&(1<<s) != 0 && s.allows(oc.effect.Required()):
		return nil
	}
	need := ent.least
	if oc != nil && ent.some&(1<<s) != 0 {
		need = oc.effect.Required()
	}
	d := newDeniedError(name, need, ent.effect != 0, s, e.opts.ScopeNames)
	d.Unscoped = !sourced
	d.DependsOnArguments = ent.rule != nil
	if oc != nil && ent.some&(1<<s) != 0 {
		d.Selected = oc.describe(ent.rule)
	}
	return d
}

// readDenial returns the refusal of a read of a resource or a prompt that
// needs scope need, by a caller of scope s, or nil if s allows it.
func (e *Enforcer) readDenial(need, s Scope, sourced bool, prompt, uri string) *DeniedError {
	if s.allows(need) {
		return nil
	}
	d := newDeniedError("", need, true, s, e.opts.ScopeNames)
	d.Unscoped = !sourced
	d.Prompt, d.Resource = prompt, uri
	return d
}

// completionDenial returns the refusal of completion/complete of the
// arguments of ref by a caller of scope s, or nil: ref needs the scope of
// the prompt it names, or of the resource template (or resource) whose
// URI it gives, the wider of the two where both match. A reference of
// another type goes to go-sdk, which refuses it.
func (e *Enforcer) completionDenial(ref *mcp.CompleteReference, s Scope, sourced bool) *DeniedError {
	switch ref.Type {
	case "ref/prompt":
		return e.completeDenial(ref.Name, "", s, sourced)
	case "ref/resource":
		return e.completeDenial("", ref.URI, s, sourced)
	}
	return nil
}

// completeDenial returns the refusal of a completion of the arguments of
// the prompt name or, when uri is set, of the resource template (or
// resource) of uri, the wider of the two where both match.
func (e *Enforcer) completeDenial(name, uri string, s Scope, sourced bool) *DeniedError {
	if uri != "" {
		return e.readDenial(max(e.r.templateScope(uri), e.r.ResourceScope(uri)), s, sourced, "", uri)
	}
	return e.readDenial(e.r.PromptScope(name), s, sourced, name, "")
}

// reportDenied gives d to OnDenied.
func (e *Enforcer) reportDenied(ctx context.Context, d *DeniedError) {
	if e.opts.OnDenied != nil {
		e.opts.OnDenied(ctx, d)
	}
}

// denied reports d to OnDenied and returns the error that refuses the call.
func (e *Enforcer) denied(ctx context.Context, d *DeniedError) error {
	e.reportDenied(ctx, d)
	return d.rpcError()
}

// info returns the callInfo of a caller of scope s.
func (e *Enforcer) info(s Scope, sourced bool) *callInfo {
	i := 0
	if sourced {
		i = 1
	}
	if s <= Full {
		return e.infos[i][s]
	}
	return &callInfo{scope: s, sourced: sourced, enf: e}
}

// ConfirmQuestion returns the question to put to a person about call,
// a tools/call that [Enforcer.Decide] said needs confirmation, as the
// wrappers of [AddTool] ask it: from the [ConfirmOptions] Message if it
// words one, else naming the tool, its effect and its arguments, with
// control and format characters written as escapes. call.Request may be
// nil (for a server not built on go-sdk). An adapter that runs the
// handler only on the person's explicit accept, and otherwise returns
// the error of a [NotConfirmedError], keeps the guarantee of
// [ConfirmOptions]. It returns "" for an enforcer without Confirm.
func (e *Enforcer) ConfirmQuestion(ctx context.Context, call *ConfirmCall) string {
	if e.confirmer == nil || call == nil {
		return ""
	}
	return e.confirmer.message(ctx, call)
}

// RunsUnconfirmed reports whether a call that needs confirmation runs
// without it when the client cannot ask a person ([ConfirmOptions]
// ProceedWithoutElicitation).
func (e *Enforcer) RunsUnconfirmed() bool {
	return e.confirmer != nil && e.confirmer.opts.ProceedWithoutElicitation
}
