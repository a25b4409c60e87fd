package manifest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/manifest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestManifestJSON(t *testing.T) {
	r := mcpeffect.NewRegistry()
	r.Add("delete_task", mcpeffect.Destructive|mcpeffect.Idempotent)
	r.Add("search_context", mcpeffect.Read|mcpeffect.OpenWorld)
	var b bytes.Buffer
	if err := manifest.Of(r, mcpeffect.ScopeNames{Full: "admin"}).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	want := `{
  "tools": [
    {
      "name": "delete_task",
      "effect": "write|destructive|idempotent",
      "readOnlyHint": false,
      "destructiveHint": true,
      "idempotentHint": true,
      "openWorldHint": false,
      "required": "full",
      "requiredScopeName": "admin"
    },
    {
      "name": "search_context",
      "effect": "read|openworld",
      "readOnlyHint": true,
      "destructiveHint": false,
      "idempotentHint": true,
      "openWorldHint": true,
      "required": "read-only",
      "requiredScopeName": "tools:read"
    }
  ]
}
`
	if b.String() != want {
		t.Errorf("WriteJSON:\n%s\nwant:\n%s", b.String(), want)
	}
	// It reads back, effects and scopes included.
	var m manifest.Manifest
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if got := m.Tools[0]; got.Effect != mcpeffect.Destructive|mcpeffect.Idempotent || got.Required != mcpeffect.Full {
		t.Errorf("read back %+v", got)
	}
}

func ExampleManifest_WriteMarkdown() {
	r := mcpeffect.NewRegistry()
	r.Add("get_task", mcpeffect.Read)
	r.Add("create_task", mcpeffect.Write)
	r.Add("update_task", mcpeffect.Destructive|mcpeffect.Idempotent)
	r.Add("save_context", mcpeffect.Write|mcpeffect.OpenWorld)
	manifest.Of(r, mcpeffect.ScopeNames{}).WriteMarkdown(os.Stdout)
	// Output:
	// | tool | effect | readOnlyHint | destructiveHint | idempotentHint | openWorldHint | scope |
	// | --- | --- | --- | --- | --- | --- | --- |
	// | `create_task` | write | false | false | false | false | `tools:write` |
	// | `get_task` | read | true | false | true | false | `tools:read` |
	// | `save_context` | write\|openworld | false | false | false | true | `tools:write` |
	// | `update_task` | write\|destructive\|idempotent | false | true | true | false | `tools:destructive` |
}

func TestManifestEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := manifest.Of(mcpeffect.NewRegistry(), mcpeffect.ScopeNames{}).WriteJSON(&b); err != nil || strings.TrimSpace(b.String()) != `{
  "tools": []
}` {
		t.Errorf("empty manifest %q, %v", b.String(), err)
	}
}

// The manifest shows each outcome of a tool whose effect depends on its
// arguments, under the worst case it advertises, and the scopes of the
// resources and prompts declared with one.
func ExampleManifest_WriteMarkdown_outcomes() {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "cluster", Version: "v1"}, nil)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods"}, mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
		"get":    mcpeffect.Read,
		"delete": mcpeffect.Destructive | mcpeffect.Idempotent,
	}), pods)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "update_issue"}, mcpeffect.EffectByFunc(func(in issueUpdate) mcpeffect.Effect {
		return mcpeffect.Write
	}, mcpeffect.Write, mcpeffect.Destructive), func(context.Context, *mcp.CallToolRequest, issueUpdate) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	})
	read := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil }
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "cluster://secrets"}, mcpeffect.Full, read)
	mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "cluster://pods/{name}"}, mcpeffect.ReadOnly, read)
	manifest.Of(r, mcpeffect.ScopeNames{}).WriteMarkdown(os.Stdout)
	// Output:
	// | tool | effect | readOnlyHint | destructiveHint | idempotentHint | openWorldHint | scope |
	// | --- | --- | --- | --- | --- | --- | --- |
	// | `pods` | write\|destructive\|idempotent (worst case) | false | true | true | false | `tools:destructive` |
	// | `pods` with `action` = `delete` | write\|destructive\|idempotent | false | true | true | false | `tools:destructive` |
	// | `pods` with `action` = `get` | read | true | false | true | false | `tools:read` |
	// | `update_issue` | write\|destructive (worst case) | false | true | false | false | `tools:destructive` |
	// | `update_issue` computed from its arguments | write | false | false | false | false | `tools:write` |
	// | `update_issue` computed from its arguments | write\|destructive | false | true | false | false | `tools:destructive` |
	//
	// | resource or prompt | scope |
	// | --- | --- |
	// | resource template `cluster://pods/{name}` | `tools:read` |
	// | resource `cluster://secrets` | `tools:destructive` |
}

func TestManifestOutcomesJSON(t *testing.T) {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "cluster", Version: "v1"}, nil)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods"}, mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
		"get": mcpeffect.Read, "delete": mcpeffect.Destructive,
	}), pods)
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "audit"}, mcpeffect.NonDestructive, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
	var b bytes.Buffer
	if err := manifest.Of(r, mcpeffect.ScopeNames{}).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var m manifest.Manifest
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	pods := m.Tools[0]
	if pods.Effect != mcpeffect.Destructive || pods.Argument != "action" || len(pods.Outcomes) != 2 ||
		pods.Outcomes[1] != (manifest.Outcome{Value: "get", Derived: manifest.Derived{Effect: mcpeffect.Read, Hints: mcpeffect.Hints{ReadOnlyHint: true, IdempotentHint: true}, Required: mcpeffect.ReadOnly, RequiredScopeName: "tools:read"}}) {
		t.Errorf("pods: %+v", pods)
	}
	if len(m.Prompts) != 1 || m.Prompts[0] != (manifest.Scoped{Name: "audit", Required: mcpeffect.NonDestructive, RequiredScopeName: "tools:write"}) || m.Resources != nil {
		t.Errorf("prompts %+v, resources %+v", m.Prompts, m.Resources)
	}
}

type podArgs struct {
	Action string `json:"action"`
	Name   string `json:"name,omitempty"`
}

func pods(context.Context, *mcp.CallToolRequest, podArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}

type issueUpdate struct {
	Issue int    `json:"issue"`
	State string `json:"state,omitempty"`
}
