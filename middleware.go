package mcpeffect

import (
	"context"

	"github.com/mcpeffect/mcpeffect/internal/testhook"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MiddlewareOptions configure [Registry.Middleware]. A nil
// *MiddlewareOptions is the zero value.
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

	// OnDenied, if non-nil, is called with each refused tools/call,
	// resources/read and prompts/get (by the middleware, or by a handler
	// wrapper of this package where the arguments or the resource decide),
	// before the refusal is sent: for logging or metrics. It must not
	// block.
	OnDenied func(context.Context, *DeniedError)

	// Confirm, if non-nil, makes the tools added with [AddTool] and its
	// kin ask a person to confirm the calls it chooses (destructive ones
	// by default) before they run: see [ConfirmOptions], and what it does
	// not protect against.
	Confirm *ConfirmOptions
}

// Middleware returns receiving middleware for an [mcp.Server] that enforces
// r: install it with [mcp.Server.AddReceivingMiddleware]. It is the
// authoritative check, and the one that cannot be bypassed, since it runs
// after go-sdk has parsed the request, whatever the transport.
//
// On tools/call it refuses, before the tool's handler runs, a call that the
// caller's scope does not allow (see [MiddlewareOptions.Scope]) with a
// JSON-RPC error of code [CodeDenied] whose message names the tool, the
// scope it needs and the scope the caller has. A tool that r does not
// classify is refused for every scope. A call it lets through reaches the
// handler with the caller's scope in its context, which
// [CallerScopeFromContext] reads and without which a tool added with
// [AddTool] refuses to run.
//
// It does the same on resources/read and prompts/get, where the scope
// needed is [Registry.ResourceScope] of the URI or [Registry.PromptScope]
// of the prompt: read-only unless the server declared more with
// [AddResource], [AddResourceTemplate] or [AddPrompt]. So the zero
// Scope reads nothing, as it calls nothing. With HideDenied, it filters
// the lists of tools, resources, resource templates and prompts. Every
// other method passes through untouched.
//
// For a tool whose effect depends on its arguments (see [EffectRule]), it
// refuses a caller whose scope allows none of the rule's outcomes and lets
// through one whose scope allows them all; in between, the wrapper of
// [AddToolWithRule] computes the effect of the call from the arguments as
// the handler receives them, and refuses it with the same error if the
// scope does not allow it.
//
// Middleware panics if opts.ScopeNames is not valid (see
// [ScopeNames.Validate]), or if opts.Confirm has a Key shorter than 32
// bytes.
func (r *Registry) Middleware(opts *MiddlewareOptions) mcp.Middleware {
	m := &middleware{r: r}
	if opts != nil {
		m.opts = *opts
	}
	if err := m.opts.ScopeNames.Validate(); err != nil {
		panic(err)
	}
	if m.opts.Confirm != nil {
		m.confirmer = newConfirmer(m.opts.Confirm)
	}
	for sourced := range m.infos {
		for s := range m.infos[sourced] {
			m.infos[sourced][s] = &callInfo{scope: Scope(s), sourced: sourced == 1, mw: m}
		}
	}
	return m.wrap
}

// middleware is the state of one Registry.Middleware.
type middleware struct {
	r    *Registry
	opts MiddlewareOptions
	// infos[sourced][s] is the callInfo of a call by a caller of scope s.
	infos     [2][Full + 1]*callInfo
	confirmer *confirmer // nil without Confirm
}

// info returns the callInfo of a caller of scope s.
func (m *middleware) info(s Scope, sourced bool) *callInfo {
	i := 0
	if sourced {
		i = 1
	}
	if s <= Full {
		return m.infos[i][s]
	}
	return &callInfo{scope: s, sourced: sourced, mw: m}
}

// denied reports d to OnDenied and returns the error that refuses the call.
func (m *middleware) denied(ctx context.Context, d *DeniedError) error {
	if m.opts.OnDenied != nil {
		m.opts.OnDenied(ctx, d)
	}
	return d.rpcError()
}

func (m *middleware) wrap(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/call":
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Params == nil {
				break
			}
			name := call.Params.Name
			granted, sourced := m.opts.scope(ctx, req)
			ent := m.r.table()[name]
			// some is callers for a tool with one effect. For a tool whose
			// effect depends on its arguments, a scope that may make some
			// of its calls but not all is left to its wrapper, which
			// decides from the arguments as the handler receives them.
			if ent.some&(1<<granted) != 0 {
				return next(context.WithValue(ctx, callerScopeKey{}, m.info(granted, sourced)), method, req)
			}
			d := newDeniedError(name, ent.least, ent.effect != 0, granted, m.opts.ScopeNames)
			d.Unscoped = !sourced
			d.DependsOnArguments = ent.rule != nil
			return nil, m.denied(ctx, d)
		case "resources/read":
			read, ok := req.(*mcp.ReadResourceRequest)
			if !ok || read.Params == nil {
				break
			}
			granted, sourced := m.opts.scope(ctx, req)
			need := m.r.ResourceScope(read.Params.URI)
			if granted.allows(need) {
				return next(context.WithValue(ctx, callerScopeKey{}, m.info(granted, sourced)), method, req)
			}
			d := m.info(granted, sourced).denial(need)
			d.Resource = read.Params.URI
			return nil, m.denied(ctx, d)
		case "prompts/get":
			get, ok := req.(*mcp.GetPromptRequest)
			if !ok || get.Params == nil {
				break
			}
			granted, sourced := m.opts.scope(ctx, req)
			need := m.r.PromptScope(get.Params.Name)
			if granted.allows(need) {
				return next(context.WithValue(ctx, callerScopeKey{}, m.info(granted, sourced)), method, req)
			}
			d := m.info(granted, sourced).denial(need)
			d.Prompt = get.Params.Name
			return nil, m.denied(ctx, d)
		case "tools/list", "resources/list", "resources/templates/list", "prompts/list":
			if !m.opts.HideDenied || testhook.UnfilteredList(ctx) {
				break
			}
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			s, _ := m.opts.scope(ctx, req)
			switch list := res.(type) {
			case *mcp.ListToolsResult:
				return m.r.filter(list, s), nil
			case *mcp.ListResourcesResult:
				return m.r.filterResources(list, s), nil
			case *mcp.ListResourceTemplatesResult:
				return m.r.filterTemplates(list, s), nil
			case *mcp.ListPromptsResult:
				return m.r.filterPrompts(list, s), nil
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// scope returns the scope of the caller of req, and whether anything gave
// it one: o.Scope, a token or the connection.
func (o *MiddlewareOptions) scope(ctx context.Context, req mcp.Request) (Scope, bool) {
	var s Scope
	have := false
	if o.Scope != nil {
		s, have = o.Scope(ctx, req), true
	} else if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		s, have = o.ScopeNames.Scope(extra.TokenInfo.Scopes), true
	}
	c, capped := connectionScope(ctx)
	if capped && (!have || c < s) {
		s = c
	}
	return s, have || capped
}

// filter returns a copy of list holding only the tools that s may call,
// with some arguments at least. The tools themselves are shared, not
// copied: they belong to the server and no one changes them.
func (r *Registry) filter(list *mcp.ListToolsResult, s Scope) *mcp.ListToolsResult {
	out := *list
	tools := r.table()
	out.Tools = allowedOnly(list.Tools, func(t *mcp.Tool) bool { return tools[t.Name].some&(1<<s) != 0 })
	out.CacheScope = "private"
	return &out
}

// allowedOnly returns a new slice of the items of a listing that are not
// nil and that allowed keeps, in their order. The items are shared, not
// copied: they belong to the server and no one changes them.
func allowedOnly[T any](items []*T, allowed func(*T) bool) []*T {
	out := make([]*T, 0, len(items))
	for _, it := range items {
		if it != nil && allowed(it) {
			out = append(out, it)
		}
	}
	return out
}
