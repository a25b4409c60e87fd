package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOutputSchemas: tools/list shows each tool's output schema, and a
// result that breaks its schema (a status outside its enumeration) fails
// the call, as go-sdk checks every result before it is sent.
func TestOutputSchemas(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.mint("alice", store.Human, mcpeffect.ReadOnly))
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(js, &s); err != nil || s.Type != "object" || len(s.Properties) == 0 {
			t.Errorf("%s: output schema %s (%v)", tool.Name, js, err)
		}
	}

	server := mcp.NewServer(&mcp.Implementation{Name: "outputs", Version: "1"}, nil)
	registry := mcpeffect.NewRegistry()
	addTool(toolbox{server: server, registry: registry, check: e.done.check, schemas: e.done.schemas}, "bad_task", "Bad task", "A task of a status that does not exist.", mcpeffect.Read,
		func(context.Context, noArgs) (store.Task, error) {
			return store.Task{ID: "t", Title: "t", Status: "bogus", Priority: store.PriorityNormal}, nil
		})
	server.AddReceivingMiddleware(registry.Middleware(nil))
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(mcpeffect.WithConnectionScope(t.Context(), mcpeffect.Full), st, nil); err != nil {
		t.Fatal(err)
	}
	_, err := e.clientConnect(ct).CallTool(t.Context(), &mcp.CallToolParams{Name: "bad_task", Arguments: args{}})
	if err == nil || !strings.Contains(err.Error(), "validating tool output") {
		t.Errorf("a result that breaks its schema: err = %v, want it refused by go-sdk's check", err)
	}
}

// TestSchemasReadByEveryClient: no schema of Done gives "type" as a list
// (["null", "array"] is what jsonschema-go infers for a Go slice), which
// many clients cannot read and the MCP Inspector warns about; and a
// result with nil slices, which Go marshals as null, still passes
// go-sdk's check of its schema, since addTool sends them as [].
func TestSchemasReadByEveryClient(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.mint("alice", store.Human, mcpeffect.ReadOnly))
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		for what, schema := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			js, _ := json.Marshal(schema)
			if strings.Contains(string(js), `"type":[`) || strings.Contains(string(js), `"null"`) {
				t.Errorf("%s: its %s schema gives a type as a list: %s", tool.Name, what, js)
			}
		}
	}

	server := mcp.NewServer(&mcp.Implementation{Name: "outputs", Version: "1"}, nil)
	registry := mcpeffect.NewRegistry()
	addTool(toolbox{server: server, registry: registry, check: e.done.check, schemas: e.done.schemas}, "empty_page", "Empty page", "A page of nothing, its slices nil.", mcpeffect.Read,
		func(context.Context, noArgs) (store.TaskDetail, error) {
			return store.TaskDetail{Task: store.Task{ID: "t", Title: "t", Status: store.StatusOpen, Priority: store.PriorityNormal}}, nil
		})
	server.AddReceivingMiddleware(registry.Middleware(nil))
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(mcpeffect.WithConnectionScope(t.Context(), mcpeffect.Full), st, nil); err != nil {
		t.Fatal(err)
	}
	res, err := e.clientConnect(ct).CallTool(t.Context(), &mcp.CallToolParams{Name: "empty_page", Arguments: args{}})
	if err != nil || res.IsError {
		t.Fatalf("a result with nil slices: %v %+v", err, res)
	}
	if js, _ := json.Marshal(res.StructuredContent); strings.Contains(string(js), "null") {
		t.Errorf("the result holds null: %s", js)
	}
}
