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

	// HideDenied makes tools/list show only the tools the caller may call.
	// The list is then the caller's own, and is marked cacheable privately.
	// Left false, every tool is listed, so that a host can see what a wider
	// scope would allow and ask for it.
	HideDenied bool

	// ScopeNames maps token scope strings to a Scope, and names the scope
	// string a refused call needs. The zero value is the default names.
	ScopeNames ScopeNames

	// OnDenied, if non-nil, is called with each refused tools/call, before
	// the refusal is sent: for logging or metrics. It must not block.
	OnDenied func(context.Context, *DeniedError)
}

// CodeDenied is the JSON-RPC error code of a tools/call refused by

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
// [AddTool] refuses to run. With HideDenied, it filters tools/list. Every
// other method passes through untouched.
//
// Middleware panics if opts.ScopeNames is not valid (see [ScopeNames.Validate]).
func (r *Registry) Middleware(opts *MiddlewareOptions) mcp.Middleware {
	var o MiddlewareOptions
	if opts != nil {
		o = *opts
	}
	if err := o.ScopeNames.Validate(); err != nil {
		panic(err)
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/call":
				call, ok := req.(*mcp.CallToolRequest)
				if !ok || call.Params == nil {
					break
				}
				name := call.Params.Name
				granted, sourced := o.scope(ctx, req)
				if r.Allowed(name, granted) {
					return next(context.WithValue(ctx, callerScopeKey{}, granted), method, req)
				}
				d := r.denial(name, granted, o.ScopeNames)
				d.Unscoped = !sourced
				if o.OnDenied != nil {
					o.OnDenied(ctx, d)
				}
				return nil, d.rpcError()
			case "tools/list":
				if !o.HideDenied || testhook.UnfilteredList(ctx) {
					break
				}
				res, err := next(ctx, method, req)
				if err != nil {
					return res, err
				}
				list, ok := res.(*mcp.ListToolsResult)
				if !ok {
					return res, err
				}
				s, _ := o.scope(ctx, req)
				return r.filter(list, s), nil
			}
			return next(ctx, method, req)
		}
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

// filter returns a copy of list holding only the tools that s may call.
// The tools themselves are shared, not copied: they belong to the server
// and no one changes them.
func (r *Registry) filter(list *mcp.ListToolsResult, s Scope) *mcp.ListToolsResult {
	out := *list
	out.Tools = make([]*mcp.Tool, 0, len(list.Tools))
	for _, t := range list.Tools {
		if t != nil && r.Allowed(t.Name, s) {
			out.Tools = append(out.Tools, t)
		}
	}
	out.CacheScope = "private"
	return &out
}
