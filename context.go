package mcpeffect

import "context"

// The scopes a context carries: the connection's, set by the server's
// author, and the caller's, set by [Registry.Middleware] for the handler.
type (
	connectionScopeKey struct{}
	callerScopeKey     struct{}
)

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

// CallerScopeFromContext returns the scope of the caller of the request
// (a tools/call, or a resources/read or prompts/get of a handler added with
// [AddResource], [AddResourceTemplate] or [AddPrompt]) whose handler
// received ctx: the scope of its token capped by the
// connection's (see [WithConnectionScope]), exactly as [Registry.Middleware]
// computed it to let the call through. A handler uses it to bound what the
// caller may create or grant, such as a token of its own, without
// computing the scope a second time. Outside a call that the middleware let
// through, it returns the zero Scope, which allows nothing.
func CallerScopeFromContext(ctx context.Context) Scope {
	if info := callerInfo(ctx); info != nil {
		return info.scope
	}
	return 0
}

// A callInfo is what Registry.Middleware tells the handler wrappers of
// AddTool and the others about a call it let through. The middleware
// makes one per scope when it is created, so that a call allocates none.
type callInfo struct {
	scope Scope
	// sourced is false when nothing gave the caller a scope (see
	// DeniedError.Unscoped).
	sourced bool
	enf     *Enforcer
}

// callerInfo returns what Registry.Middleware set on ctx for the handler,
// or nil if the middleware did not run.
func callerInfo(ctx context.Context) *callInfo {
	info, _ := ctx.Value(callerScopeKey{}).(*callInfo)
	return info
}
