package mcpgo_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
)

// TestTaskCalls checks the task-augmented tools/call, whose handler
// mcp-go runs after the call is answered, and, for a tool added with
// AddTaskTool, without the tool handler middleware: the call is decided
// before its task is created, and refused as any other.
func TestTaskCalls(t *testing.T) {
	r := mcpeffect.NewRegistry()
	c := &calls{}
	s := server.NewMCPServer("tasks", "v1", append(mcpgo.ServerOptions(r, nil), server.WithTaskCapabilities(true, true, true))...)
	// A task tool, classified, that mcp-go runs without the middleware.
	s.AddTaskTool(mcp.NewTool("export", mcp.WithTaskSupport(mcp.TaskSupportRequired)), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		c.ran("export")
		return &mcp.CreateTaskResult{}, nil
	})
	if err := r.Add("export", mcpeffect.Write|mcpeffect.Idempotent); err != nil {
		t.Fatal(err)
	}
	// A task tool without a classification.
	s.AddTaskTool(mcp.NewTool("purge", mcp.WithTaskSupport(mcp.TaskSupportRequired)), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		c.ran("purge")
		return &mcp.CreateTaskResult{}, nil
	})
	// A tool of mcpgo that may run as a task.
	mcpgo.AddTool(s, r, mcp.NewTool("delete_task", mcp.WithTaskSupport(mcp.TaskSupportOptional)), mcpeffect.Destructive, c.tool("delete_task"))
	url := serveHTTP(t, s, r, nil, server.WithStateLess(true)).URL + "/mcp"

	post := func(token, tool string) (code int, data json.RawMessage, result json.RawMessage) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},"task":{"ttl":60000}}}`
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int             `json:"code"`
				Data json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %s: %v", tool, raw, err)
		}
		if m.Error != nil {
			return m.Error.Code, m.Error.Data, nil
		}
		return 0, nil, m.Result
	}
	for _, c := range []struct {
		token, tool string
		classified  bool
	}{
		{"read-token", "export", true},
		{"full-token", "purge", false},
		{"write-token", "delete_task", true},
	} {
		code, data, _ := post(c.token, c.tool)
		var d mcpeffect.DeniedError
		if code != mcpeffect.CodeDenied || json.Unmarshal(data, &d) != nil || d.Tool != c.tool || d.Classified != c.classified {
			t.Errorf("%s as a task with %s: code %d, data %s; want a refusal", c.tool, c.token, code, data)
		}
	}
	// Allowed, it goes on to its task.
	if code, data, res := post("write-token", "export"); code != 0 || !strings.Contains(string(res), "task") {
		t.Errorf("export as a task with write-token: code %d, data %s, result %s; want its task", code, data, res)
	}
	for _, name := range []string{"purge", "delete_task"} {
		if n := c.count(name); n != 0 {
			t.Errorf("%s ran %d times", name, n)
		}
	}
}
