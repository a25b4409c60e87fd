package mcpgo_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
)

// benchServers returns a plain mcp-go server with one trivial tool, and
// the same through the adapter.
func benchServers() (plain, adapted *server.MCPServer) {
	h := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	plain = server.NewMCPServer("plain", "v1")
	plain.AddTool(mcp.NewTool("get_task", mcp.WithString("id")), h)
	r := mcpeffect.NewRegistry()
	adapted = server.NewMCPServer("adapted", "v1", mcpgo.ServerOptions(r, nil)...)
	mcpgo.AddTool(adapted, r, mcp.NewTool("get_task", mcp.WithString("id")), mcpeffect.Read, h)
	return plain, adapted
}

// BenchmarkCallPaired measures mcp-go's handling of one tools/call, as
// a transport hands it over (HandleMessage, the response encoded), on a
// plain server and through the adapter, alternating blocks of calls so
// that both see the same machine; it reports each as ns/call and their
// ratio.
func BenchmarkCallPaired(b *testing.B) {
	for _, args := range []struct{ name, json string }{
		{"small", `{"id":"7"}`},
		{"4KiB", `{"id":"` + string(make([]byte, 0)) + repeat("x", 4096) + `"}`},
	} {
		b.Run(args.name, func(b *testing.B) {
			plain, adapted := benchServers()
			msg := json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":` + args.json + `}}`)
			ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly)
			call := func(s *server.MCPServer) {
				res := s.HandleMessage(ctx, msg)
				if _, err := json.Marshal(res); err != nil {
					b.Fatal(err)
				}
			}
			// Both answer, and the adapter allows the call.
			if out, _ := json.Marshal(adapted.HandleMessage(ctx, msg)); !json.Valid(out) || len(out) == 0 || string(out) == "null" {
				b.Fatalf("adapter: %s", out)
			}
			const block = 200
			var spent [2]time.Duration
			var calls int
			b.ReportAllocs()
			for round := 0; b.Loop(); round++ {
				for k := range 2 {
					which := (k + round) % 2
					s := plain
					if which == 1 {
						s = adapted
					}
					start := time.Now()
					for range block {
						call(s)
					}
					spent[which] += time.Since(start)
				}
				calls += block
			}
			b.ReportMetric(float64(spent[0].Nanoseconds())/float64(calls), "plain-ns/call")
			b.ReportMetric(float64(spent[1].Nanoseconds())/float64(calls), "adapter-ns/call")
			b.ReportMetric(float64(spent[1])/float64(spent[0]), "ratio")
		})
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, n*len(s))
	for range n {
		b = append(b, s...)
	}
	return string(b)
}
