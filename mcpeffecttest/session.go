package mcpeffecttest

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
)

// sessionScopeKey carries, on the context of a session that this package
// opens, the scope the session must have (see SessionScope).
type sessionScopeKey struct{}

// withSessionScope returns a copy of ctx on which a session has scope s:
// in process as its connection's scope ([mcpeffect.WithConnectionScope]),
// and for a session opened by the test's own function, through
// [SessionScope].
func withSessionScope(ctx context.Context, s mcpeffect.Scope) context.Context {
	return context.WithValue(mcpeffect.WithConnectionScope(ctx, s), sessionScopeKey{}, s)
}

// SessionScope returns the scope that a session opened with ctx must
// have, and whether ctx says one. ctx is what [CheckClient] gives its
// connect function for each session it opens, and what [Verify] gives
// [Instance].Connect for the sessions of an Instance without a Caller
// (the full scope). In process, ctx itself gives a server's connection
// its scope; where it cannot reach the server, as over HTTP, connect
// gives each session a credential of the scope SessionScope returns,
// such as a bearer token:
//
//	connect := func(ctx context.Context) (*mcp.ClientSession, error) {
//		scope, ok := mcpeffecttest.SessionScope(ctx)
//		if !ok {
//			return nil, errors.New("no scope to connect with")
//		}
//		return dial(ctx, tokens[scope]) // a token of that scope
//	}
//
// A context that a Caller of the test's own made, for [Instance] or
// [Example], says what that Caller put in it, and SessionScope reports
// false for it.
func SessionScope(ctx context.Context) (mcpeffect.Scope, bool) {
	s, ok := ctx.Value(sessionScopeKey{}).(mcpeffect.Scope)
	return s, ok
}
