package mcpeffect

import "context"

type scopeKey struct{}

// WithScope returns a copy of ctx that carries scope s. Given to
// [mcp.Server.Run] or [mcp.Server.Connect], it sets the scope of every
// request of that connection, as over stdio where there is no token:
//
//	server.Run(mcpeffect.WithScope(ctx, mcpeffect.ReadOnly), &mcp.StdioTransport{})
//
// A connection scope caps any other: a request whose token has a wider
// scope gets only s. [Registry.Middleware] reads it.
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns the scope set on ctx with [WithScope], and whether
// there is one.
func ScopeFrom(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(scopeKey{}).(Scope)
	return s, ok
}

type callerScopeKey struct{}

// CallerScopeFromContext returns the scope of the caller of the tools/call
// request whose handler received ctx: the scope of its token capped by the
// connection's (see [WithScope]), exactly as [Registry.Middleware] computed
// it to let the call through. A handler uses it to bound what the caller
// may create or grant, such as a token of its own, without computing the
// scope a second time. Outside a call that the middleware let through, it
// returns the zero Scope, which allows nothing.
func CallerScopeFromContext(ctx context.Context) Scope {
	s, _ := ctx.Value(callerScopeKey{}).(Scope)
	return s
}
