package mcpeffect

import "context"

// What a context carries: the connection's scope, set by the server's
// author, and the decision that admitted a call, set by the way in that
// decided it for the handler.

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
