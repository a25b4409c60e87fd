package mcpeffect

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An Enforcer is the one decision of a [Registry], configured once by
// [MiddlewareOptions]: what each operation needs, and whether its caller
// has it. Every way in asks it the same question ([Enforcer.Decide]) and
// answers with what it decided: the receiving middleware of go-sdk
// ([Enforcer.Middleware]), the handler wrappers of [AddTool] and the
// others, the HTTP step-up challenge ([Enforcer.Challenge]), and an
// adapter for another SDK (package mcpgo, for mcp-go). So two of them
// cannot disagree on what a caller may do.
//
// Make one with [Registry.Enforcer] and pass it where it is needed;
// [Registry.Middleware] is the shortcut for a server that needs only the
// middleware. An Enforcer is safe for concurrent use.
type Enforcer struct {
	r         *Registry
	opts      MiddlewareOptions
	confirmer *confirmer   // nil without Confirm
	idem      *idempotency // nil without Idempotency
}

// MiddlewareOptions are the configuration of an [Enforcer]
// ([Registry.Enforcer]), and so of everything made from it: the
// middleware ([Registry.Middleware], [Enforcer.Middleware]), the handler
// wrappers of [AddTool] and the others, the HTTP step-up challenge
// ([Enforcer.Challenge]) and the mcp-go adapter. A nil *MiddlewareOptions
// is the zero value.
type MiddlewareOptions struct {
	// Scope returns the scope of the caller of a request. If nil, the scope
	// comes from the scope strings of the request's bearer token
	// ([mcp.RequestExtra] TokenInfo), mapped by ScopeNames; a request that
	// carries no token (stdio, in memory) has only the scope of its
	// connection, set with [WithConnectionScope], and without one it may
	// call nothing.
	//
	// Whatever Scope returns, a scope set on the connection with
	// WithConnectionScope caps it.
	//
	// The HTTP challenge ([Enforcer.Challenge]) calls it too, before the
	// request reaches the server, with the HTTP request's context and a
	// request as go-sdk would give the middleware, without its Session:
	// a *[mcp.CallToolRequest], *[mcp.ReadResourceRequest] or
	// *[mcp.GetPromptRequest] with its Params and Extra (TokenInfo and
	// Header). A function that needs the session should return the zero
	// Scope without one, and then the challenge leaves the request to the
	// middleware. The mcp-go adapter calls it with a nil request: there,
	// the context is all it has.
	Scope func(context.Context, mcp.Request) Scope

	// HideDenied makes tools/list show only the tools the caller may call
	// (a tool whose effect depends on its arguments, when it may make
	// some of its calls), and resources/list, resources/templates/list
	// and prompts/list only what it may read (see [Registry.ResourceScope]
	// and [Registry.PromptScope]). A list is then the caller's own, and is
	// marked cacheable privately. Left false, everything is listed, so
	// that a host can see what a wider scope would allow and ask for it.
	HideDenied bool

	// ScopeNames maps token scope strings to a Scope, and names the scope
	// string a refused call needs. The zero value is the default names.
	ScopeNames ScopeNames

	// OnDenied, if non-nil, is called with each refused operation, before
	// the refusal is sent, by whichever way in refused it (the
	// middleware, a handler wrapper of this package where the arguments
	// or the resource decide, the HTTP challenge, an adapter calling
	// [Enforcer.Decide]): for logging. Log the [DeniedError] whole: its
	// LogValue names its fields. It must not block.
	OnDenied func(context.Context, *DeniedError)

	// OnDecision, if non-nil, is told of every decision, once it is
	// final, by whichever way in made it: each operation allowed, or
	// refused (Denied says why, and OnDenied sees it too), and each call
	// that needs a person's confirmation twice, when it is asked
	// (Confirm set, Answer empty) and when it is answered (Answer set).
	// The context is the operation's, as its handler gets it: a tracer
	// finds its span there. It is for tracing and metrics (package
	// telemetry turns decisions into OpenTelemetry spans and metrics),
	// and must not block. Left nil, it costs nothing.
	OnDecision func(context.Context, Decision)

	// Confirm, if non-nil, makes the tools added with [AddTool] and its
	// kin ask a person to confirm the calls it chooses (destructive ones
	// by default) before they run: see [ConfirmOptions], and what it does
	// not protect against.
	Confirm *ConfirmOptions

	// Idempotency, if non-nil, makes a call that carries an idempotency
	// key (SEP-3182) run at most once, and a repeat get the answer of the
	// first: see [IdempotencyOptions], and the carriers that the draft's
	// field needs on a go-sdk server.
	Idempotency *IdempotencyOptions
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
	if e.opts.Idempotency != nil {
		e.idem = newIdempotency(e.opts.Idempotency)
	}
	return e
}

// The methods that [Enforcer.Decide] decides, as MCP names them.
const (
	methodCallTool      = "tools/call"
	methodReadResource  = "resources/read"
	methodSubscribe     = "resources/subscribe"
	methodListen        = "subscriptions/listen"
	methodGetPrompt     = "prompts/get"
	methodComplete      = "completion/complete"
	methodListTools     = "tools/list"
	methodListResources = "resources/list"
	methodListTemplates = "resources/templates/list"
	methodListPrompts   = "prompts/list"
	methodInitialize    = "initialize"
	methodDiscover      = "server/discover"
	completeRefPrompt   = "ref/prompt"
	completeRefResource = "ref/resource"
)

// An Operation is one request that [Enforcer.Decide] decides, in terms
// that any MCP server can give, whatever its SDK.
type Operation struct {
	// Method is the MCP method: "tools/call", "resources/read",
	// "resources/subscribe", "subscriptions/listen" (of the 2026-07-28
	// protocol), "prompts/get" or "completion/complete". Any other is
	// refused, so that a typo in an adapter fails closed.
	Method string
	// Name is the tool called or the prompt got, or for
	// completion/complete the prompt whose arguments are completed.
	Name string
	// URI is the resource read or subscribed to; for completion/complete,
	// the resource template (or resource) whose arguments are completed;
	// for [Enforcer.Listed], the resource template listed when Template
	// is set.
	URI      string
	Template bool
	// URIs are the resources that a subscriptions/listen subscribes to.
	URIs []string
	// Arguments are the raw JSON arguments of a tools/call, as the
	// tool's handler acts on them. For a tool whose effect depends on its
	// arguments (see [EffectRule]), the effect of the call is computed
	// from them: in the common form read strictly (see
	// [EffectRule.CallEffect]), in the general form decoded into the
	// function's input type with encoding/json. Anything uncertain is the
	// worst case.
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

// requestCaller returns the caller of a go-sdk request: the Scope
// function of the options if set, else the scope strings of the
// request's bearer token, else nothing.
func (e *Enforcer) requestCaller(ctx context.Context, req mcp.Request) Caller {
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

// The scope of a connection is what the server's author sets on its
// context: one of the decision's inputs, which caps every other.

type connectionScopeKey struct{}

// WithConnectionScope returns a copy of ctx that carries scope s as the
// scope of a connection. Given to [mcp.Server.Run] or [mcp.Server.Connect],
// it sets the scope of every request of that connection, as over stdio
// where there is no token:
//
//	server.Run(mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), &mcp.StdioTransport{})
//
// A connection scope caps any other: a request whose token has a wider
// scope gets only s. Without one, a request that carries no token has the
// zero Scope, and may call nothing. [Registry.Middleware] reads it.
func WithConnectionScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, connectionScopeKey{}, s)
}

// connectionScope returns the scope set on ctx with WithConnectionScope, and
// whether there is one.
func connectionScope(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(connectionScopeKey{}).(Scope)
	return s, ok
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
// refused with a [DeniedError], or allowed once a person confirms it. The
// handler of an allowed operation reads it with [DecisionFromContext].
type Decision struct {
	// Operation is what was decided.
	Operation Operation
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
	// Answer is what came of the confirmation, once there is one, as
	// [MiddlewareOptions] OnDecision is told of it: "accept", "unasked"
	// for a call run unconfirmed since the client cannot ask
	// ([ConfirmOptions] RunIfClientCannotAsk), or the Answer of the
	// [NotConfirmedError] that refused it ("decline", "cancel",
	// "unsupported", "failed", "invalid"). Empty before.
	Answer string

	scoped bool // something gave the caller a scope (see Caller.Scoped)
	// pending reports a tools/call allowed for now, whose effect the
	// handler wrapper of AddTool computes from the input the handler
	// receives, which the raw arguments did not give with certainty.
	pending bool
	enf     *Enforcer
	// once is the idempotency of a tools/call with a key, begun by the
	// middleware (see callOnce); nil otherwise.
	once *onceState
}

// Allowed reports whether the operation may go on (once confirmed, if
// Confirm is set).
func (d Decision) Allowed() bool { return d.Denied == nil }

// Decide decides op by caller c: the one decision that every way into an
// [Enforcer] makes. The connection's scope on ctx (see
// [WithConnectionScope]) caps c's. A tool the registry does not classify
// is refused for every scope; a resource or a prompt needs the scope that
// [Registry.ResourceScope] or [Registry.PromptScope] gives, and so do a
// subscription to a resource (a subscriber is told what a reader would
// read) and a completion of the arguments of a prompt or of a resource
// template (it tells what getting them would). A refusal is reported to
// OnDenied, with ctx, before Decide returns. It allocates nothing for an
// allowed call of a tool with one effect.
func (e *Enforcer) Decide(ctx context.Context, op Operation, c Caller) Decision {
	d := e.decide(ctx, op, c, argsHandled)
	e.report(ctx, d)
	return d
}

// argsSeen says what the arguments of an Operation are to the tool's
// handler.
type argsSeen uint8

const (
	// argsHandled: they are what the handler acts on (an adapter's, a
	// low-level handler's).
	argsHandled argsSeen = iota
	// argsWire: they are the request's, and a go-sdk wrapper of this
	// package decodes them for a typed handler; they decide a call only
	// where they give its effect with certainty (see EffectRule.CallEffect),
	// and the wrapper decides the others.
	argsWire
)

// decide is the one switch: what op needs, and whether c has it.
func (e *Enforcer) decide(ctx context.Context, op Operation, c Caller, seen argsSeen) Decision {
	d := Decision{Operation: op, enf: e}
	d.Scope, d.scoped = granted(ctx, c)
	switch op.Method {
	case methodCallTool:
		e.decideCall(&d, seen)
	case methodReadResource, methodSubscribe:
		d.Denied = e.readDenial(e.r.ResourceScope(op.URI), &d, "", op.URI)
	case methodListen:
		for _, uri := range op.URIs {
			if d.Denied = e.readDenial(e.r.ResourceScope(uri), &d, "", uri); d.Denied != nil {
				break
			}
		}
	case methodGetPrompt:
		d.Denied = e.readDenial(e.r.PromptScope(op.Name), &d, op.Name, "")
	case methodComplete:
		if op.URI != "" {
			d.Denied = e.readDenial(max(e.r.templateScope(op.URI), e.r.ResourceScope(op.URI)), &d, "", op.URI)
		} else {
			d.Denied = e.readDenial(e.r.PromptScope(op.Name), &d, op.Name, "")
		}
	default:
		// Not an operation that needs a scope: refused, so that a typo in
		// an adapter fails closed.
		name := op.Name
		if name == "" {
			name = op.Method
		}
		d.Denied = newDeniedError(name, 0, false, d.Scope, e.opts.ScopeNames)
		d.Denied.Unscoped = !d.scoped
	}
	return d
}

// decideCall decides d, a tools/call.
func (e *Enforcer) decideCall(d *Decision, seen argsSeen) {
	name := d.Operation.Name
	ent := e.r.lookup(name)
	d.Effect = ent.effect
	if ent.rule == nil || ent.some&(1<<d.Scope) == 0 {
		// One effect, or a rule none of whose calls the scope allows.
		if ent.callers&(1<<d.Scope) == 0 {
			d.Denied = e.toolDenial(ent, name, d, nil)
			return
		}
		d.Confirm = e.asks(name, d.Effect)
		return
	}
	if seen == argsWire && ent.wrapped && !ent.raw {
		d.pending = true
		return
	}
	oc := ent.rule.outcomeOfRaw(d.Operation.Arguments)
	if seen == argsWire && ent.wrapped && !oc.certain && !oc.has {
		// Missing, given twice or not a string: the handler's input may
		// still hold a value (a default), which its wrapper reads.
		d.pending = true
		return
	}
	e.settleCall(d, ent, oc)
}

// settleCall decides d, a tools/call of the tool that ent classifies by a
// rule, whose arguments have the outcome oc.
func (e *Enforcer) settleCall(d *Decision, ent *entry, oc callOutcome) {
	d.Effect, d.pending = oc.effect, false
	if !d.Scope.atLeast(oc.effect.Required()) {
		d.Denied = e.toolDenial(ent, d.Operation.Name, d, &oc)
		return
	}
	d.Confirm = e.asks(d.Operation.Name, d.Effect)
}

// asks reports whether the options want a person to confirm a call of
// tool, of effect eff.
func (e *Enforcer) asks(tool string, eff Effect) bool {
	return e.confirmer != nil && eff != 0 && e.confirmer.opts.Ask(tool, eff)
}

// settled returns d, a pending decision, decided by oc, the outcome of
// the input the handler receives, and reports it.
func (e *Enforcer) settled(ctx context.Context, d Decision, oc callOutcome) Decision {
	e.settleCall(&d, e.r.lookup(d.Operation.Name), oc)
	e.report(ctx, d)
	return d
}

// Listed reports whether a list shown to caller c keeps op's tool,
// resource, resource template or prompt, as [MiddlewareOptions]
// HideDenied filters them: a tool the caller may call with some
// arguments at least, what it may read or get.
func (e *Enforcer) Listed(ctx context.Context, op Operation, c Caller) bool {
	s, _ := granted(ctx, c)
	return e.listed(op, s)
}

func (e *Enforcer) listed(op Operation, s Scope) bool {
	switch op.Method {
	case methodCallTool:
		return e.r.lookup(op.Name).some&(1<<s) != 0
	case methodReadResource:
		if op.Template {
			return s.atLeast(e.r.templateScope(op.URI))
		}
		return s.atLeast(e.r.ResourceScope(op.URI))
	case methodGetPrompt:
		return s.atLeast(e.r.PromptScope(op.Name))
	}
	return false
}

// toolDenial returns the refusal of d, a call of tool name classified by
// ent. oc is the outcome of its arguments, for a tool with a rule whose
// calls the scope allows some of; nil otherwise.
func (e *Enforcer) toolDenial(ent *entry, name string, d *Decision, oc *callOutcome) *DeniedError {
	need := ent.least
	if oc != nil {
		need = oc.effect.Required()
	}
	denied := newDeniedError(name, need, ent.effect != 0, d.Scope, e.opts.ScopeNames)
	denied.Unscoped = !d.scoped
	denied.DependsOnArguments = ent.rule != nil
	if oc != nil {
		denied.Selected = oc.describe(ent.rule)
	}
	return denied
}

// readDenial returns the refusal of d, a read of a resource or a prompt
// that needs scope need, or nil if d's scope allows it.
func (e *Enforcer) readDenial(need Scope, d *Decision, prompt, uri string) *DeniedError {
	if d.Scope.atLeast(need) {
		return nil
	}
	denied := newDeniedError("", need, true, d.Scope, e.opts.ScopeNames)
	denied.Unscoped = !d.scoped
	denied.Prompt, denied.Resource = prompt, uri
	return denied
}

// report tells the options' hooks of d, a final decision: OnDenied of
// a refusal, OnDecision of any.
func (e *Enforcer) report(ctx context.Context, d Decision) {
	if d.Denied != nil && e.opts.OnDenied != nil {
		e.opts.OnDenied(ctx, d.Denied)
	}
	if e.opts.OnDecision != nil {
		e.opts.OnDecision(ctx, d)
	}
}

// refused reports d, a refusal, and returns the error that refuses the
// operation.
func (e *Enforcer) refused(ctx context.Context, d Decision) error {
	e.report(ctx, d)
	return d.Denied.rpcError()
}

// Answered tells [MiddlewareOptions] OnDecision of the answer to the
// confirmation of d, a call that an adapter for another SDK had a person
// confirm (see [Decision] Answer for the words): the go-sdk wrappers of
// [AddTool] report their own.
func (e *Enforcer) Answered(ctx context.Context, d Decision, answer string) {
	if e.opts.OnDecision != nil && d.Confirm {
		d.Answer = answer
		e.opts.OnDecision(ctx, d)
	}
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
	return wordQuestion(ctx, e.confirmer.opts.Message, call)
}

// A decisionContext is the context of a handler whose call a Decision
// admitted. It is one allocation, where context.WithValue and a
// *Decision would be two.
type decisionContext struct {
	context.Context
	d Decision
}

type decisionKey struct{}

func (c *decisionContext) Value(key any) any {
	if key == (decisionKey{}) {
		return &c.d
	}
	return c.Context.Value(key)
}

// WithDecision returns a copy of ctx that carries d, an allowed
// decision of an [Enforcer], for the handler of the operation it
// admitted: [DecisionFromContext] and [CallerScopeFromContext] read it,
// and the handler wrappers of [AddTool] and the others run only with it.
// The go-sdk middleware gives it to every handler it lets through; an
// adapter for another SDK gives it to each handler of an operation that
// [Enforcer.Decide] allowed. For a decision that refused, or that no
// Enforcer made, it returns ctx unchanged.
func WithDecision(ctx context.Context, d Decision) context.Context {
	if d.Denied != nil || d.enf == nil {
		return ctx
	}
	return &decisionContext{ctx, d}
}

// DecisionFromContext returns the decision that admitted the call (a
// tools/call, or a resources/read or prompts/get of a handler added with
// [AddResource], [AddResourceTemplate] or [AddPrompt]) whose handler
// received ctx, and true; outside such a call, the zero Decision and
// false. Its Effect is the effect of this very call, computed from its
// arguments for a tool whose effect depends on them, and its Scope the
// caller's: a handler that bounds what it does by either reads them here
// rather than computing them a second time.
func DecisionFromContext(ctx context.Context) (Decision, bool) {
	if d := decisionOn(ctx); d != nil {
		return *d, true
	}
	return Decision{}, false
}

// decisionOn returns the decision on ctx, or nil.
func decisionOn(ctx context.Context) *Decision {
	d, _ := ctx.Value(decisionKey{}).(*Decision)
	return d
}

// CallerScopeFromContext returns the scope of the caller of the call
// whose handler received ctx, exactly as the decision that admitted it
// computed it (see [DecisionFromContext]): the scope of its token capped
// by the connection's (see [WithConnectionScope]). A handler uses it to
// bound what the caller may create or grant, such as a token of its own.
// Outside a call that an [Enforcer] admitted, it returns the zero Scope,
// which allows nothing.
func CallerScopeFromContext(ctx context.Context) Scope {
	if d := decisionOn(ctx); d != nil {
		return d.Scope
	}
	return 0
}

// admitCall decides, in the wrapper of the handler of tool t, whether the
// call req runs, from the decision that the middleware put on ctx: as it
// is, or for a tool whose effect depends on its arguments, finished with
// outcome, the outcome of the input the handler receives; and then
// confirmed by a person if the options ask for it. It returns the
// handler's context, with the final decision on it, or what to answer
// instead: the error that refuses the call, or a result asking the client
// for input.
func admitCall(ctx context.Context, req *mcp.CallToolRequest, t *mcp.Tool, outcome func() callOutcome) (context.Context, *mcp.CallToolResult, error) {
	on := decisionOn(ctx)
	if on == nil {
		return ctx, nil, notEnforced(fmt.Sprintf("tool %q", t.Name), "run")
	}
	d, e, changed := *on, on.enf, false
	st := on.once
	if d.Operation.Method != methodCallTool || d.Operation.Name != t.Name {
		st = nil // the key is the call's that the middleware saw
		// A handler run from another's, with its context: this call is
		// decided afresh, for the same caller.
		op := Operation{Method: methodCallTool, Name: t.Name}
		if req.Params != nil {
			op.Arguments = req.Params.Arguments
		}
		if d = e.decide(ctx, op, Caller{Scope: d.Scope, Scoped: d.scoped}, argsWire); d.Denied != nil {
			return ctx, nil, e.refused(ctx, d)
		}
		if !d.pending {
			e.report(ctx, d)
		}
		changed = true
	}
	if d.pending {
		if outcome == nil {
			// Only a tool with a rule is left pending.
			return ctx, nil, notEnforced(fmt.Sprintf("tool %q", t.Name), "run")
		}
		if d = e.settled(ctx, d, outcome()); d.Denied != nil {
			return ctx, nil, d.Denied.rpcError()
		}
		changed = true
		if st != nil {
			// Its effect known, the call with a key begins.
			if err := e.beginPending(ctx, st, d); err != nil {
				return ctx, nil, err
			}
		}
	}
	if d.Confirm {
		res, answer, err := e.confirmer.confirm(ctx, req, t, d.Effect, d.Scope)
		if answer != "" {
			e.Answered(ctx, d, answer)
		}
		if res != nil || err != nil {
			return ctx, res, err
		}
	}
	if st != nil {
		st.started = true
	}
	if changed {
		ctx = &decisionContext{ctx, d}
	}
	return ctx, nil, nil
}

// admitRead decides, in the wrapper of the handler of a resource,
// resource template or prompt (what, not done without a decision), that
// needs scope need, whether the caller that the decision on ctx admitted
// may read it: the middleware decided by the URI, and the wrapper knows
// which resource or template go-sdk chose.
func admitRead(ctx context.Context, what, done string, need Scope, prompt, uri string) error {
	d := decisionOn(ctx)
	if d == nil {
		return notEnforced(what, done)
	}
	if denied := d.enf.readDenial(need, d, prompt, uri); denied != nil {
		refusal := *d
		refusal.Denied = denied
		return d.enf.refused(ctx, refusal)
	}
	return nil
}
