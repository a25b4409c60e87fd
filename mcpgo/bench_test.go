package mcpgo_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
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

// BenchmarkCall measures one tools/call on a plain mcp-go server and
// through the adapter, each alone, as mcp-go's transports hand it over
// (HandleMessage) and over stdio (mcp-go's StdioServer, and the adapter's
// Listen, over pipes): for profiles (-cpuprofile, -memprofile) and for
// counts of instructions, which, unlike times, a noisy machine does not
// change. The difference of allocs/op and B/op between small and 4KiB
// arguments is what grows with the request.
func BenchmarkCall(b *testing.B) {
	for _, args := range []struct{ name, json string }{
		{"small", `{"id":"7"}`},
		{"4KiB", `{"id":"` + repeat("x", 4096) + `"}`},
	} {
		msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":` + args.json + `}}`
		for _, which := range []string{"plain", "adapter"} {
			b.Run("handle/"+which+"/"+args.name, func(b *testing.B) {
				plain, adapted := benchServers()
				s := plain
				if which == "adapter" {
					s = adapted
				}
				ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly)
				raw := json.RawMessage(msg)
				b.ReportAllocs()
				for b.Loop() {
					out, err := json.Marshal(s.HandleMessage(ctx, raw))
					if err != nil || bytes.Contains(out, []byte(`"error"`)) {
						b.Fatalf("%s: %s", err, out)
					}
				}
			})
			b.Run("stdio/"+which+"/"+args.name, func(b *testing.B) {
				plain, adapted := benchServers()
				ctx, cancel := context.WithCancel(mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly))
				defer cancel()
				inR, inW, err := os.Pipe()
				if err != nil {
					b.Fatal(err)
				}
				outR, outW, err := os.Pipe()
				if err != nil {
					b.Fatal(err)
				}
				done := make(chan error, 1)
				go func() {
					defer outW.Close()
					if which == "adapter" {
						done <- mcpgo.Listen(ctx, server.NewStdioServer(adapted), inR, outW)
					} else {
						done <- server.NewStdioServer(plain).Listen(ctx, inR, outW)
					}
				}()
				responses := bufio.NewReader(outR)
				call := func(id int) {
					if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_task","arguments":%s}}`+"\n", id, args.json); err != nil {
						b.Fatal(err)
					}
					line, err := responses.ReadBytes('\n')
					if err != nil || !bytes.Contains(line, []byte(`"result"`)) {
						b.Fatalf("%v: %s", err, line)
					}
				}
				call(0)
				b.ReportAllocs()
				id := 1
				for b.Loop() {
					call(id)
					id++
				}
				b.StopTimer()
				inW.Close()
				cancel()
				<-done
				inR.Close()
				outR.Close()
			})
		}
	}
}
