package mcpgo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAnnotations checks that a tool made with mcp.NewTool, which presets
// every hint to the worst case, is listed with its effect's four hints,
// all explicit, and keeps its title.
func TestAnnotations(t *testing.T) {
	ts := newTestServer(t, nil, false)
	cs := connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), ts.s, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		listed[tool.Name] = tool
	}
	for _, tool := range testTools {
		got := listed[tool.name]
		if got == nil || got.Annotations == nil {
			t.Fatalf("tool %s: listed %+v, without annotations", tool.name, got)
		}
		a, want := got.Annotations, tool.effect.Annotations()
		if a.ReadOnlyHint != want.ReadOnlyHint || a.IdempotentHint != want.IdempotentHint ||
			a.DestructiveHint == nil || *a.DestructiveHint != *want.DestructiveHint ||
			a.OpenWorldHint == nil || *a.OpenWorldHint != *want.OpenWorldHint {
			t.Errorf("tool %s, %s: listed hints %s, want %s", tool.name, tool.effect, hints(a), hints(want))
		}
		if a.Title != "Title of "+tool.name {
			t.Errorf("tool %s: title %q, want it kept", tool.name, a.Title)
		}
	}
	// The tool added with mcp-go alone keeps mcp.NewTool's worst case.
	if a := listed["unclassified_tool"].Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("unclassified_tool: hints %s, want the worst case", hints(a))
	}
}

func hints(a *sdk.ToolAnnotations) string {
	if a == nil {
		return "none"
	}
	b := func(p *bool) string {
		if p == nil {
			return "unset"
		}
		if *p {
			return "true"
		}
		return "false"
	}
	return "readOnly=" + b(&a.ReadOnlyHint) + " destructive=" + b(a.DestructiveHint) + " idempotent=" + b(&a.IdempotentHint) + " openWorld=" + b(a.OpenWorldHint)
}

// TestAddToolHandWrittenHint checks that a hint written by hand that
// contradicts the effect is refused at registration, and one that agrees
// is accepted.
func TestAddToolHandWrittenHint(t *testing.T) {
	s := server.NewMCPServer("t", "v1")
	r := mcpeffect.NewRegistry()
	h := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }
	mcpgo.AddTool(s, r, mcp.NewTool("get", mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false)), mcpeffect.Read, h)
	for _, c := range []struct {
		name string
		tool mcp.Tool
		e    mcpeffect.Effect
	}{
		{"read-only write", mcp.NewTool("w1", mcp.WithReadOnlyHintAnnotation(true)), mcpeffect.Write},
		{"non-destructive delete", mcp.NewTool("d1", mcp.WithDestructiveHintAnnotation(false)), mcpeffect.Destructive},
		{"closed world fetch", mcp.NewTool("f1", mcp.WithOpenWorldHintAnnotation(false)), mcpeffect.Read | mcpeffect.OpenWorld},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("AddTool accepted a hint written by hand that contradicts %s", c.e)
				}
			}()
			mcpgo.AddTool(s, r, c.tool, c.e, h)
		})
	}
	// A tool refused for its hints is not classified either.
	if _, ok := r.Effect("w1"); ok {
		t.Error("w1, refused, is classified")
	}
	// The same classification twice is accepted; another is not.
	mcpgo.AddTool(s, r, mcp.NewTool("get"), mcpeffect.Read, h)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AddTool accepted a second, other classification of get")
			}
		}()
		mcpgo.AddTool(s, r, mcp.NewTool("get"), mcpeffect.Write, h)
	}()
}

// TestInProcess runs every tool with every scope, in process: a scope
// runs what it allows, and is refused the rest before the handler, with
// mcpeffect's code, message and data.
func TestInProcess(t *testing.T) {
	ts := newTestServer(t, nil, false)
	for _, scope := range []mcpeffect.Scope{0, mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full} {
		t.Run(scope.String(), func(t *testing.T) {
			cs := connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), scope), ts.s, nil)
			for _, tool := range testTools {
				before := ts.calls.count(tool.name)
				res, err := callTool(cs, tool.name)
				ran := ts.calls.count(tool.name) - before
				if scope.Allows(tool.effect) {
					if err != nil || res.IsError || ran != 1 {
						t.Errorf("%s scope, %s: got %v, %+v, ran %d times; want it run once", scope, tool.name, err, res, ran)
					}
					continue
				}
				if ran != 0 {
					t.Errorf("%s scope, %s: the handler ran", scope, tool.name)
				}
				d := denied(t, err, tool.name)
				need, _ := ts.r.Required(tool.name)
				if !d.Classified || d.Required != need || d.Granted != scope || d.RequiredScopeName != (mcpeffect.ScopeNames{}).Name(need) {
					t.Errorf("%s scope, %s: refusal %+v", scope, tool.name, d)
				}
				if !strings.Contains(err.Error(), d.Error()) {
					t.Errorf("%s scope, %s: the message %q is not the DeniedError's %q", scope, tool.name, err, d.Error())
				}
			}
			if scope == 0 {
				return
			}
			// No scope calls a tool that has no classification.
			_, err := callTool(cs, "unclassified_tool")
			if d := denied(t, err, "unclassified_tool"); d.Classified {
				t.Errorf("%s scope: unclassified_tool refused as classified: %+v", scope, d)
			}
			if n := ts.calls.count("unclassified_tool"); n != 0 {
				t.Errorf("unclassified_tool ran %d times", n)
			}
		})
	}
}

// TestNoScopeSaysHow checks that a connection given no scope is refused
// even a read: by the code and data of a refusal that says nothing gave
// the caller a scope (Unscoped), whose message tells how to give one in
// words true of mcp-go too, naming no function of go-sdk's.
func TestNoScopeSaysHow(t *testing.T) {
	ts := newTestServer(t, nil, false)
	cs, closeFn, err := dialStdio(context.Background(), ts.s, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = callTool(cs, "get_task")
	closeFn()
	d := denied(t, err, "get_task")
	if !d.Unscoped || d.Granted != 0 || d.Required != mcpeffect.ReadOnly {
		t.Errorf("refusal %+v, want unscoped, needing read-only", d)
	}
	if n := ts.calls.count("get_task"); n != 0 {
		t.Errorf("get_task ran %d times", n)
	}
	if !strings.Contains(d.Error(), "mcpeffect.WithConnectionScope") {
		t.Errorf("the refusal %q does not say how to give a scope", d)
	}
	for _, goSDK := range []string{"Server.Run", "Server.Connect"} {
		if strings.Contains(d.Error(), goSDK) {
			t.Errorf("the refusal %q names go-sdk's %s, which an mcp-go server does not have", d, goSDK)
		}
	}
}

// TestCallerScopeFromContext checks that a handler of mcp-go sees the
// decision that admitted its call through mcpeffect.DecisionFromContext
// and CallerScopeFromContext: the caller's scope, and the call's own
// effect, for a tool whose effect depends on its arguments.
func TestCallerScopeFromContext(t *testing.T) {
	r := mcpeffect.NewRegistry()
	s := server.NewMCPServer("t", "v1", mcpgo.ServerOptions(r, nil)...)
	mcpgo.AddTool(s, r, mcp.NewTool("whoami", mcp.WithString("action")), mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
		"get": mcpeffect.Read, "tag": mcpeffect.Write | mcpeffect.Idempotent,
	}), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		d, ok := mcpeffect.DecisionFromContext(ctx)
		return mcp.NewToolResultText(fmt.Sprint(mcpeffect.CallerScopeFromContext(ctx), " ", d.Effect, " ", ok)), nil
	})
	cs := connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.NonDestructive), s, nil)
	for action, want := range map[string]string{"get": "non-destructive read true", "tag": "non-destructive write|idempotent true"} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{"action": action}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*sdk.TextContent).Text; got != want {
			t.Errorf("action %s: the handler sees %q, want %q", action, got, want)
		}
	}
	if got := mcpeffect.CallerScopeFromContext(context.Background()); got != 0 {
		t.Errorf("outside a call: %s", got)
	}
}
