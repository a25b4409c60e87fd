package mcpeffect_test

import (
	"context"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

// TestDeclare checks the declarations of an adapter for another SDK:
// what each declares is what the registry and the enforcer then hold,
// and what would change a declaration is refused.
func TestDeclare(t *testing.T) {
	r := mcpeffect.NewRegistry()
	for _, c := range []struct {
		name string
		err  error
	}{
		{"resource", r.DeclareResource("notes://payroll", mcpeffect.Full)},
		{"same resource again", r.DeclareResource("notes://payroll", mcpeffect.Full)},
		{"template", r.DeclareResourceTemplate("notes://{id}", mcpeffect.NonDestructive)},
		{"prompt", r.DeclarePrompt("audit", mcpeffect.Full)},
		{"rule", r.AddRule("pods", mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{"get": mcpeffect.Read, "delete": mcpeffect.Destructive}))},
	} {
		if c.err != nil {
			t.Errorf("%s: %v", c.name, c.err)
		}
	}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"resource with another scope", r.DeclareResource("notes://payroll", mcpeffect.ReadOnly)},
		{"resource with the zero scope", r.DeclareResource("notes://x", 0)},
		{"invalid template", r.DeclareResourceTemplate("notes://{id", mcpeffect.Full)},
		{"template with another scope", r.DeclareResourceTemplate("notes://{id}", mcpeffect.Full)},
		{"prompt with another scope", r.DeclarePrompt("audit", mcpeffect.ReadOnly)},
		{"nil rule", r.AddRule("nil_rule", nil)},
		{"rule of a tool already classified", r.AddRule("pods", mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{"get": mcpeffect.Read}))},
		{"rule of an invalid name", r.AddRule("no spaces", mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{"get": mcpeffect.Read}))},
	} {
		if c.err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	if got := r.ResourceScope("notes://payroll"); got != mcpeffect.Full {
		t.Errorf("notes://payroll needs %s, want full", got)
	}
	if got := r.ResourceScope("notes://7"); got != mcpeffect.NonDestructive {
		t.Errorf("notes://7 needs %s, want non-destructive", got)
	}
	if got := r.PromptScope("audit"); got != mcpeffect.Full {
		t.Errorf("prompt audit needs %s, want full", got)
	}
	enf := r.Enforcer(nil)
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly)
	for args, allowed := range map[string]bool{`{"action":"get"}`: true, `{"action":"delete"}`: false, `{"action":"get","action":"delete"}`: false} {
		d := enf.Decide(ctx, mcpeffect.Operation{Method: "tools/call", Name: "pods", Arguments: []byte(args)}, mcpeffect.Caller{})
		if d.Allowed() != allowed {
			t.Errorf("pods with %s by a read-only caller: allowed %t, want %t", args, d.Allowed(), allowed)
		}
	}
}
