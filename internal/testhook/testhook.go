// Package testhook lets package mcpeffecttest see a server as it is,
// without the filtering a connection's caller would get, and recognize
// what the root package tells a server without its middleware. Being
// internal, only this module can set it, and only on a connection it
// makes itself.
package testhook

import "context"

type unfilteredKey struct{}

// WithUnfilteredList returns a copy of ctx under which tools/list is not
// filtered by the middleware's HideDenied.
func WithUnfilteredList(ctx context.Context) context.Context {
	return context.WithValue(ctx, unfilteredKey{}, true)
}

// UnfilteredList reports whether ctx was made by WithUnfilteredList.
func UnfilteredList(ctx context.Context) bool {
	v, _ := ctx.Value(unfilteredKey{}).(bool)
	return v
}

// NoMiddleware is the words with which a tool added by mcpeffect.AddTool
// refuses a call that the mcpeffect middleware did not let through.
const NoMiddleware = "the server has no mcpeffect middleware"
