package mcpeffect

import "context"

// The scope of a connection, which the server's author sets on its
// context. (The decision that admitted a call, on its handler's context,
// is the Enforcer's: see WithDecision.)

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
