package mcpeffect_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

func TestManifestJSON(t *testing.T) {
	r := mcpeffect.NewRegistry()
	r.Add("delete_task", mcpeffect.Destructive|mcpeffect.Idempotent)
	r.Add("search_context", mcpeffect.Read|mcpeffect.OpenWorld)
	var b bytes.Buffer
	if err := r.Manifest(mcpeffect.ScopeNames{Full: "admin"}).WriteJSON(&b); err != nil {
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
	var m mcpeffect.Manifest
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
	r.Manifest(mcpeffect.ScopeNames{}).WriteMarkdown(os.Stdout)
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
	if err := mcpeffect.NewRegistry().Manifest(mcpeffect.ScopeNames{}).WriteJSON(&b); err != nil || strings.TrimSpace(b.String()) != `{
  "tools": []
}` {
		t.Errorf("empty manifest %q, %v", b.String(), err)
	}
}
