package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/exampletest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdio builds the example and runs it as a host would, a command
// that speaks MCP over its standard input and output, with each scope:
// what the scope allows runs, and what it does not is refused with a
// DeniedError that names the scope needed and the scope given.
func TestStdio(t *testing.T) {
	bin := exampletest.Build(t, ".")
	connect := func(t *testing.T, args ...string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v1"}, nil).
			Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(bin, args...)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}

	t.Run("hints", func(t *testing.T) {
		cs := connect(t)
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		type hints struct{ readOnly, destructive, idempotent, openWorld bool }
		want := map[string]hints{
			"get_task":    {readOnly: true, idempotent: true},
			"add_task":    {},
			"delete_task": {destructive: true, idempotent: true},
		}
		for _, tool := range res.Tools {
			a := tool.Annotations
			if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
				t.Errorf("%s: hints %+v, want all four explicit", tool.Name, a)
				continue
			}
			if got := (hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}); got != want[tool.Name] {
				t.Errorf("%s: hints %+v, want %+v", tool.Name, got, want[tool.Name])
			}
			delete(want, tool.Name)
		}
		if len(want) > 0 {
			t.Errorf("tools not listed: %v", want)
		}
	})

	type call struct {
		tool     string
		args     map[string]any
		text     string          // the result's text, when allowed
		required mcpeffect.Scope // the scope a refusal names, or 0 for allowed
	}
	add := call{tool: "add_task", args: map[string]any{"title": "Buy milk"}, text: `{"id":"1","title":"Buy milk"}`}
	get := call{tool: "get_task", args: map[string]any{"id": "1"}, text: `{"id":"1","title":"Buy milk"}`}
	del := call{tool: "delete_task", args: map[string]any{"id": "1"}, text: "deleted 1"}
	refused := func(c call, need mcpeffect.Scope) call { c.required = need; return c }
	for _, tc := range []struct {
		scope mcpeffect.Scope
		args  []string
		calls []call
	}{
		{mcpeffect.NonDestructive, nil, []call{add, get, refused(del, mcpeffect.Full), get}},
		{mcpeffect.ReadOnly, []string{"-scope", "read-only"}, []call{refused(add, mcpeffect.NonDestructive), refused(del, mcpeffect.Full)}},
		{mcpeffect.Full, []string{"-scope", "full"}, []call{add, del, del}},
	} {
		t.Run(tc.scope.String(), func(t *testing.T) {
			cs := connect(t, tc.args...)
			for i, c := range tc.calls {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				if c.required != 0 {
					d, ok := mcpeffect.AsDeniedError(err)
					if !ok || d.Tool != c.tool || d.Required != c.required || d.Granted != tc.scope {
						t.Errorf("call %d, %s: %v; want a refusal naming %s and %s", i, c.tool, err, c.required, tc.scope)
					}
					continue
				}
				if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != c.text {
					t.Errorf("call %d, %s: %+v, %v; want %s", i, c.tool, res, err, c.text)
				}
			}
		})
	}

	t.Run("bad scope", func(t *testing.T) {
		out, err := exec.Command(bin, "-scope", "everything").CombinedOutput()
		if err == nil || !containsAll(string(out), `invalid value "everything" for flag -scope`, "read-only, non-destructive, full") {
			t.Errorf("-scope everything: %v\n%s; want it refused, naming the scopes", err, out)
		}
	})
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
