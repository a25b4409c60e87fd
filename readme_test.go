package mcpeffect_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestREADMEExample holds the README's first example to what it says: the
// program in its first Go block is testdata/readme/main.go, byte for byte,
// and built and run as a stdio server, it serves get_task and refuses
// delete_task, as a read-only connection must.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile(filepath.Join("testdata", "readme", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := bytes.Cut(readme, []byte("```go\n"))
	if ok {
		block, _, ok = bytes.Cut(block, []byte("```"))
	}
	if !ok || !bytes.Equal(block, program) {
		t.Fatalf("the first Go block of README.md is not testdata/readme/main.go:\n%s", block)
	}

	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the example with")
	}
	bin := filepath.Join(t.TempDir(), "readme")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./testdata/readme").CombinedOutput(); err != nil {
		t.Fatalf("building the README's example: %v\n%s", err, out)
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "readme", Version: "v1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	hints := map[string]*mcp.ToolAnnotations{}
	for _, tool := range tools.Tools {
		hints[tool.Name] = tool.Annotations
	}
	if a := hints["get_task"]; a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
		t.Errorf("get_task advertises %+v, want read-only", a)
	}
	if a := hints["delete_task"]; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint || !a.IdempotentHint {
		t.Errorf("delete_task advertises %+v, want destructive and idempotent", a)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_task", Arguments: map[string]any{"id": "7"}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "task 7" {
		t.Errorf("get_task: %+v, %v; want the task", res, err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_task", Arguments: map[string]any{"id": "7"}})
	if d, ok := mcpeffect.AsDeniedError(err); !ok || d.Tool != "delete_task" || d.Granted != mcpeffect.ReadOnly || d.Required != mcpeffect.Full {
		t.Errorf("delete_task: %v, want a refusal for a read-only caller", err)
	}
}
