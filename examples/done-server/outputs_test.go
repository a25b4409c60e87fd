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
	addTool(toolbox{server: server, registry: registry, check: e.done.check}, "bad_task", "Bad task", "A task of a status that does not exist.", mcpeffect.Read,
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
