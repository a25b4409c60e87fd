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

// TestOutputSchemas holds what replaces go-sdk's check of every result:
// tools/list shows each tool's output schema though go-sdk was given
// none, and under go test a result that breaks its schema (a status
// outside its enumeration) fails the call, which it does not when
// results go unchecked, as when Done serves.
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

	for _, c := range []struct {
		name     string
		validate bool
		want     string // in the error; empty for none
	}{
		{"checked", true, `tool "bad_task": its result breaks its output schema`},
		{"unchecked", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			server := mcp.NewServer(&mcp.Implementation{Name: "outputs", Version: "1"}, nil)
			registry := mcpeffect.NewRegistry()
			tb := toolbox{server: server, registry: registry, check: e.done.check, outputs: map[string]*jsonschema.Schema{}, validate: c.validate}
			addTool(tb, "bad_task", "Bad task", "A task of a status that does not exist.", mcpeffect.Read,
				func(context.Context, noArgs) (store.Task, error) {
					return store.Task{ID: "t", Title: "t", Status: "bogus", Priority: store.PriorityNormal}, nil
				})
			server.AddReceivingMiddleware(listOutputSchemas(tb.outputs), registry.Middleware(nil))
			ct, st := mcp.NewInMemoryTransports()
			if _, err := server.Connect(mcpeffect.WithConnectionScope(t.Context(), mcpeffect.Full), st, nil); err != nil {
				t.Fatal(err)
			}
			client := e.clientConnect(ct)
			res, err := client.CallTool(t.Context(), &mcp.CallToolParams{Name: "bad_task", Arguments: args{}})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(res); res.IsError != (c.want != "") || !strings.Contains(got, c.want) {
				t.Errorf("the call answered (error %t) %s, want an error saying %q", res.IsError, got, c.want)
			}
		})
	}
}
