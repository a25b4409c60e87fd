package mcpgo

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
)

// AddTool classifies t.Name in r with effect e, sets the tool's four hints
// from that one classification, and adds the tool to s with
// [server.MCPServer.AddTool]. The title is kept; t itself, a value, is
// not changed.
//
// A tool made with [mcp.NewTool] arrives with every hint set to the worst
// case, which mcp.NewTool presets, so a hint equal to that preset is
// taken for the preset and replaced. A hint that differs from both the
// preset and the effect's was written by hand and contradicts the
// effect: AddTool panics on it, since a hint written twice is the drift
// that mcpeffect exists to prevent.
//
// The handler runs only for a caller whose scope allows e. Behind the
// middleware of [ServerOptions], which decides first, the wrapper only
// runs it; on a server built without ServerOptions, the wrapper decides
// itself, with the default configuration (the scope of the bearer token,
// by the default scope names, capped by [mcpeffect.WithConnectionScope]),
// and refuses before the handler what that scope does not allow.
//
// AddTool panics when r refuses the classification (see
// [mcpeffect.Registry.Add]; a name already classified with the same
// effect is accepted) and on a nil handler, as [server.MCPServer.AddTool]
// would fail later.
func AddTool(s *server.MCPServer, r *mcpeffect.Registry, t mcp.Tool, e mcpeffect.Effect, h server.ToolHandlerFunc) {
	if h == nil {
		panic("mcpgo: AddTool: nil handler")
	}
	// The hints first: a tool refused for them is not classified either.
	t.Annotations = annotations(t.Name, t.Annotations, e.Hints())
	if err := r.Add(t.Name, e); err != nil {
		if old, _ := r.Effect(t.Name); !errors.Is(err, mcpeffect.ErrAlreadyClassified) || old != e || hasRule(r, t.Name) {
			panic(err)
		}
	}
	s.AddTool(t, enforcedHandler(r, t.Name, h))
}

func hasRule(r *mcpeffect.Registry, name string) bool {
	_, ok := r.Rule(name)
	return ok
}

// enforcedHandler returns h, the handler of tool name, such that it runs
// only when the middleware of ServerOptions let the call through or, on
// a server without it, when the default decision allows it.
func enforcedHandler(r *mcpeffect.Registry, name string, h server.ToolHandlerFunc) server.ToolHandlerFunc {
	enf := r.Enforcer(nil)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !admitted(ctx, name) {
			op := mcpeffect.Operation{Method: methodCallTool, Name: name}
			if hasRule(r, name) {
				op.Arguments = argumentsJSON(req)
			}
			d := enf.Decide(ctx, op, caller(ctx, enf, nil))
			if d.Denied != nil {
				return nil, refuse(ctx, d.Denied)
			}
			ctx = admit(ctx, enf, name, d)
		}
		return h(ctx, req)
	}
}

// annotations returns the annotations of tool name: its title from got,
// and the four hints of want, derived from its effect. It panics on a
// hint of got that is neither the one that mcp.NewTool presets nor
// want's.
func annotations(name string, got mcp.ToolAnnotation, want mcpeffect.Hints) mcp.ToolAnnotation {
	preset := mcp.NewTool(name).Annotations
	out := mcp.ToolAnnotation{
		Title:           got.Title,
		ReadOnlyHint:    mcp.ToBoolPtr(want.ReadOnlyHint),
		DestructiveHint: mcp.ToBoolPtr(want.DestructiveHint),
		IdempotentHint:  mcp.ToBoolPtr(want.IdempotentHint),
		OpenWorldHint:   mcp.ToBoolPtr(want.OpenWorldHint),
	}
	for _, h := range []struct {
		name           string
		got, pre, want *bool
	}{
		{"readOnlyHint", got.ReadOnlyHint, preset.ReadOnlyHint, out.ReadOnlyHint},
		{"destructiveHint", got.DestructiveHint, preset.DestructiveHint, out.DestructiveHint},
		{"idempotentHint", got.IdempotentHint, preset.IdempotentHint, out.IdempotentHint},
		{"openWorldHint", got.OpenWorldHint, preset.OpenWorldHint, out.OpenWorldHint},
	} {
		if h.got != nil && *h.got != *h.pre && *h.got != *h.want {
			panic(fmt.Sprintf("mcpgo: tool %q: %s is set to %t by hand, but its effect gives %t: leave the hints to mcpgo", name, h.name, *h.got, *h.want))
		}
	}
	return out
}

// AddToolWithRule is [AddTool] for a tool whose effect depends on its
// arguments, as rule declares (see [mcpeffect.EffectRule]): the tool
// advertises the hints of the worst case of the rule's outcomes, and each
// call is decided by its own effect, computed from the arguments that its
// handler receives (request.Params.Arguments, in JSON). In the common
// form ([mcpeffect.EffectByArgument]) the argument is read strictly: given
// twice, or in another case, it counts as the worst case, since a
// handler's decoding might read either. In the general form
// ([mcpeffect.EffectByFunc]) the arguments are decoded into the
// function's input with encoding/json, as mcp-go's BindArguments does.
//
// For a rule of the general form, give its EffectRule:
// EffectByFunc(f, outcomes...).EffectRule, whose f takes the arguments
// as the handler would bind them (mcp.CallToolRequest.BindArguments).
//
// It panics where AddTool does, and when rule is nil or cannot be used.
func AddToolWithRule(s *server.MCPServer, r *mcpeffect.Registry, t mcp.Tool, rule *mcpeffect.EffectRule, h server.ToolHandlerFunc) {
	if h == nil {
		panic("mcpgo: AddToolWithRule: nil handler")
	}
	if rule == nil {
		panic(fmt.Sprintf("mcpgo: AddToolWithRule: tool %q: nil rule", t.Name))
	}
	t.Annotations = annotations(t.Name, t.Annotations, rule.Worst().Hints())
	if err := r.AddRule(t.Name, rule); err != nil {
		panic(err)
	}
	s.AddTool(t, enforcedHandler(r, t.Name, h))
}
