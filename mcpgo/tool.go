package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
)

// AddTool classifies t.Name in r by c, sets the tool's four hints from
// that one classification, and adds the tool to s with
// [server.MCPServer.AddTool]. The title is kept; t itself, a value, is
// not changed.
//
// c is an [mcpeffect.Effect], or for a tool whose effect depends on its
// arguments a rule (see [mcpeffect.EffectRule]): the tool then
// advertises the hints of the worst case of the rule's outcomes, and each
// call is decided by its own effect, computed from the arguments that its
// handler receives (request.Params.Arguments, in JSON). In the common
// form ([mcpeffect.EffectByArgument]) the argument is read strictly:
// given twice, or in another case, it counts as the worst case, since a
// handler's decoding might read either. A rule of the general form
// ([mcpeffect.EffectByFunc]) takes the raw arguments, a
// [json.RawMessage], as the go-sdk integration's low-level handlers do: a
// function of another input does not compile.
//
// A tool made with [mcp.NewTool] arrives with every hint set to the worst
// case, which mcp.NewTool presets, so a hint equal to that preset is
// taken for the preset and replaced. A hint that differs from both the
// preset and the effect's was written by hand and contradicts the
// effect: AddTool panics on it, since a hint written twice is the drift
// that mcpeffect exists to prevent.
//
// The handler runs only when the middleware of [ServerOptions], which
// decides every call with the server's configuration, let its call
// through. On a server built without ServerOptions, every call is
// refused with an error of code [mcpeffect.CodeNotEnforced] that says
// how to install them: classifying tools without enforcing them fails at
// the first call rather than in production.
//
// AddTool panics when r refuses the classification (see
// [mcpeffect.Registry.Add]; a name already classified the same way is
// accepted), on a rule that cannot be used, and on a nil handler, as
// [server.MCPServer.AddTool] would fail later.
func AddTool[C mcpeffect.Classification[json.RawMessage]](s *server.MCPServer, r *mcpeffect.Registry, t mcp.Tool, c C, h server.ToolHandlerFunc) {
	if h == nil {
		panic("mcpgo: AddTool: nil handler")
	}
	switch c := any(c).(type) {
	case mcpeffect.Effect:
		// The hints first: a tool refused for them is not classified
		// either.
		t.Annotations = annotations(t.Name, t.Annotations, c.Hints())
		if err := r.Add(t.Name, c); err != nil {
			if old, _ := r.Effect(t.Name); !errors.Is(err, mcpeffect.ErrAlreadyClassified) || old != c || hasRule(r, t.Name) {
				panic(err)
			}
		}
	case *mcpeffect.EffectRule:
		classifyRule(r, &t, c)
	case *mcpeffect.FuncRule[json.RawMessage]:
		var rule *mcpeffect.EffectRule
		if c != nil {
			rule = c.EffectRule
		}
		classifyRule(r, &t, rule)
	}
	name := t.Name
	s.AddTool(t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !admitted(ctx, methodCallTool, name) {
			return nil, notEnforced(ctx, fmt.Sprintf("tool %q", name), "run")
		}
		return h(ctx, req)
	})
}

// classifyRule classifies t in r by rule, and sets its hints from the
// rule's worst case. It panics on a rule that cannot be used.
func classifyRule(r *mcpeffect.Registry, t *mcp.Tool, rule *mcpeffect.EffectRule) {
	if rule == nil {
		panic(fmt.Sprintf("mcpgo: AddTool: tool %q: nil rule", t.Name))
	}
	t.Annotations = annotations(t.Name, t.Annotations, rule.Worst().Hints())
	if err := r.AddRule(t.Name, rule); err != nil {
		panic(err)
	}
}

func hasRule(r *mcpeffect.Registry, name string) bool {
	_, ok := r.Rule(name)
	return ok
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

// notEnforced returns the error of a handler (what: `tool "x"`) that no
// middleware of ServerOptions let through, recorded as refuse records a
// refusal: nothing checked the caller's scope, so nothing is done.
func notEnforced(ctx context.Context, what, done string) error {
	r := &refusal{wire: rpcError{Code: mcpeffect.CodeNotEnforced, Message: fmt.Sprintf(
		"mcpgo: %s was not %s: the server was not built with mcpgo.ServerOptions, so nothing checked the caller's scope; "+
			"pass mcpgo.ServerOptions(registry, opts) to server.NewMCPServer", what, done)}}
	record(ctx, r)
	return r
}
