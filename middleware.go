package mcpeffect

import (
	"context"

	"github.com/mcpeffect/mcpeffect/internal/testhook"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MiddlewareOptions configure an [Enforcer] ([Registry.Enforcer]), and so
// everything made from it: [Registry.Middleware] and
// [Enforcer.Middleware], the handler wrappers of [AddTool] and the
// others, and the HTTP step-up challenge of [Enforcer.Challenge]. A nil
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
	//
	// The HTTP challenge ([Enforcer.Challenge]) calls it too, before the
	// request reaches the server, with the HTTP request's context and a
	// request as go-sdk would give the middleware, without its Session:
	// a *[mcp.CallToolRequest], *[mcp.ReadResourceRequest] or
	// *[mcp.GetPromptRequest] with its Params and Extra (TokenInfo and
	// Header). A function that needs the session should return the zero
	// Scope without one, and then the challenge leaves the request to the
	// middleware.
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
	// resources/read and prompts/get, before the refusal is sent, by
	// whichever way in refused it (the middleware, a handler wrapper of
	// this package where the arguments or the resource decide, the HTTP
	// challenge, an adapter calling [Enforcer.Decide]): for logging or
	// metrics. Log the [DeniedError] whole: its LogValue names its fields.
	// It must not block.
	OnDenied func(context.Context, *DeniedError)

	// Confirm, if non-nil, makes the tools added with [AddTool] and its
	// kin ask a person to confirm the calls it chooses (destructive ones
	// by default) before they run: see [ConfirmOptions], and what it does
	// not protect against.
	Confirm *ConfirmOptions
}

// Middleware returns receiving middleware for an [mcp.Server] that enforces
// r, configured by opts: r.Enforcer(opts).Middleware() (see
// [Registry.Enforcer] and [Enforcer.Middleware]). A server that also
// answers the HTTP step-up challenge makes the [Enforcer] once and takes
// both from it, so that they share one configuration.
//
// Middleware panics if opts.ScopeNames is not valid (see
// [ScopeNames.Validate]), or if opts.Confirm has a Key shorter than 32
// bytes.
func (r *Registry) Middleware(opts *MiddlewareOptions) mcp.Middleware {
	return r.Enforcer(opts).Middleware()
}

// Middleware returns receiving middleware for an [mcp.Server] that
// enforces e's registry: install it with
// [mcp.Server.AddReceivingMiddleware]. It is the authoritative check, and
// the one that cannot be bypassed, since it runs after go-sdk has parsed
// the request, whatever the transport.
//
// On tools/call it refuses, before the tool's handler runs, a call that the
// caller's scope does not allow (see [MiddlewareOptions.Scope]) with a
// JSON-RPC error of code [CodeDenied] whose message names the tool, the
// scope it needs and the scope the caller has. A tool that the registry
// does not classify is refused for every scope. A call it lets through
// reaches the handler with the caller's scope in its context, which
// [CallerScopeFromContext] reads and without which a tool added with
// [AddTool] refuses to run.
//
// It does the same on resources/read and prompts/get, where the scope
// needed is [Registry.ResourceScope] of the URI or [Registry.PromptScope]
// of the prompt: read-only unless the server declared more with
// [AddResource], [AddResourceTemplate] or [AddPrompt]. So the zero
// Scope reads nothing, as it calls nothing. resources/subscribe (and each
// resource of subscriptions/listen, its 2026-07-28 form) needs the scope
// that reads the resource, and completion/complete the scope of the
// prompt or resource template whose arguments it completes: what they
// tell is what those would. With HideDenied, it filters
// the lists of tools, resources, resource templates and prompts. Every
// other method passes through untouched.
//
// For a tool whose effect depends on its arguments (see [EffectRule]), it
// refuses a caller whose scope allows none of the rule's outcomes and lets
// through one whose scope allows some; the wrapper of [AddTool] then
// computes the effect of the call from the arguments as the handler
// receives them, and refuses it with the same error if the scope does
// not allow it. Each is [Enforcer.Decide]'s decision.
func (e *Enforcer) Middleware() mcp.Middleware {
	return e.wrap
}

func (e *Enforcer) wrap(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		var d *DeniedError
		var s Scope
		var sourced bool
		switch method {
		case "tools/call":
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Params == nil {
				return next(ctx, method, req)
			}
			s, sourced = granted(ctx, e.RequestCaller(ctx, req))
			// The arguments are left to the wrapper of a tool whose effect
			// depends on them, which decides from what the handler
			// receives (oc nil).
			d = e.toolDenial(e.r.lookup(call.Params.Name), call.Params.Name, s, sourced, nil)
		case "resources/read":
			read, ok := req.(*mcp.ReadResourceRequest)
			if !ok || read.Params == nil {
				return next(ctx, method, req)
			}
			s, sourced = granted(ctx, e.RequestCaller(ctx, req))
			d = e.readDenial(e.r.ResourceScope(read.Params.URI), s, sourced, "", read.Params.URI)
		case "prompts/get":
			get, ok := req.(*mcp.GetPromptRequest)
			if !ok || get.Params == nil {
				return next(ctx, method, req)
			}
			s, sourced = granted(ctx, e.RequestCaller(ctx, req))
			d = e.readDenial(e.r.PromptScope(get.Params.Name), s, sourced, get.Params.Name, "")
		case "resources/subscribe":
			// A subscriber is told of each change to the resource: it
			// needs the scope that reads it.
			sub, ok := req.(*mcp.SubscribeRequest)
			if !ok || sub.Params == nil {
				return next(ctx, method, req)
			}
			s, sourced = granted(ctx, e.RequestCaller(ctx, req))
			d = e.readDenial(e.r.ResourceScope(sub.Params.URI), s, sourced, "", sub.Params.URI)
		case "subscriptions/listen":
			// The 2026-07-28 form of resources/subscribe: every resource
			// it names needs the scope that reads it.
			listen, ok := req.(*mcp.SubscriptionsListenRequest)
			if !ok || listen.Params == nil || listen.Params.Notifications == nil {
				return next(ctx, method, req)
			}
			s, sourced = granted(ctx, e.RequestCaller(ctx, req))
			for _, uri := range listen.Params.Notifications.ResourceSubscriptions {
				if d = e.readDenial(e.r.ResourceScope(uri), s, sourced, "", uri); d != nil {
					break
				}
			}
		case "completion/complete":
			// Completions tell what the arguments of a prompt or a
			// resource template may be: they need the scope that gets it.
			c, ok := req.(*mcp.CompleteRequest)
			if !ok || c.Params == nil || c.Params.Ref == nil {
				return next(ctx, method, req)
			}
			s, sourced = granted(ctx, e.RequestCaller(ctx, req))
			d = e.completionDenial(c.Params.Ref, s, sourced)
		case "tools/list", "resources/list", "resources/templates/list", "prompts/list":
			if !e.opts.HideDenied || testhook.UnfilteredList(ctx) {
				return next(ctx, method, req)
			}
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			s, _ := granted(ctx, e.RequestCaller(ctx, req))
			return e.filterList(res, s), nil
		default:
			return next(ctx, method, req)
		}
		if d != nil {
			return nil, e.denied(ctx, d)
		}
		return next(context.WithValue(ctx, callerScopeKey{}, e.info(s, sourced)), method, req)
	}
}

// filterList returns a copy of res, a listing, holding only what scope s
// may call, read or get ([Enforcer.Visible]), marked cacheable privately.
// The items themselves are shared, not copied: they belong to the server
// and no one changes them.
func (e *Enforcer) filterList(res mcp.Result, s Scope) mcp.Result {
	switch list := res.(type) {
	case *mcp.ListToolsResult:
		out := *list
		out.Tools = allowedOnly(list.Tools, func(t *mcp.Tool) bool { return e.visible(Operation{Method: "tools/call", Name: t.Name}, s) })
		out.CacheScope = "private"
		return &out
	case *mcp.ListResourcesResult:
		out := *list
		out.Resources = allowedOnly(list.Resources, func(r *mcp.Resource) bool { return e.visible(Operation{Method: "resources/read", URI: r.URI}, s) })
		out.CacheScope = "private"
		return &out
	case *mcp.ListResourceTemplatesResult:
		out := *list
		out.ResourceTemplates = allowedOnly(list.ResourceTemplates, func(t *mcp.ResourceTemplate) bool {
			return e.visible(Operation{Method: "resources/read", URI: t.URITemplate, Template: true}, s)
		})
		out.CacheScope = "private"
		return &out
	case *mcp.ListPromptsResult:
		out := *list
		out.Prompts = allowedOnly(list.Prompts, func(p *mcp.Prompt) bool { return e.visible(Operation{Method: "prompts/get", Name: p.Name}, s) })
		out.CacheScope = "private"
		return &out
	}
	return res
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
