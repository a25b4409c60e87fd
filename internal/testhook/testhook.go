// Package testhook lets package mcpeffecttest see a server as it is,
// without the filtering a connection's caller would get. Being internal,
// only this module can set it, and only on a connection it makes itself.
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
