// Package hook gives the packages of this module that serve a registry
// beside go-sdk (package resolution) what package mcpeffect keeps of a
// tool and does not export: whether the raw arguments of its calls give
// their effect, and the input schema that validates them. Package
// mcpeffect sets the functions when it is initialized, before any
// package that imports it runs; being internal, nothing outside this
// module can call or replace them.
package hook

import "encoding/json"

// Resolve returns, for the tool called name in registry r (a
// *mcpeffect.Registry), whether the raw arguments of its calls give
// their effect (resolvable); if so, the effect of a call with args and
// the tool's worst case, as mcpeffect.Effect values, or the error with
// which the tool's input schema refuses args.
var Resolve func(r any, name string, args json.RawMessage) (effect, worst uint8, resolvable bool, err error)

// Resolvable reports whether Resolve resolves the calls of the tool
// called name in registry r.
var Resolvable func(r any, name string) bool
