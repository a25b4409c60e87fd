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

// CallerScopeFromContext returns the scope of the caller of the tools/call
// request whose handler received ctx: the scope of its token capped by the
// connection's (see [WithConnectionScope]), exactly as [Registry.Middleware]
// computed it to let the call through. A handler uses it to bound what the
// caller may create or grant, such as a token of its own, without
// computing the scope a second time. Outside a call that the middleware let
// through, it returns the zero Scope, which allows nothing.
func CallerScopeFromContext(ctx context.Context) Scope {
	s, _ := callerScope(ctx)
	return s
}

// callerScope returns the scope Registry.Middleware set on ctx for the
// handler, and whether it set one: false means that the middleware did
// not run.
func callerScope(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(callerScopeKey{}).(Scope)
	return s, ok
}
