// Command mcpgoserver serves one trivial tool, echo, over stdio with
// mcp-go: the servers of mcp-go that percall (internal/testing/percall
// of the root module) measures. -variant chooses how:
//
//   - plain: server.MCPServer.AddTool, served with server.ServeStdio;
//   - mcpeffect: the same tool through the adapter, mcpgo.ServerOptions
//     and mcpgo.AddTool, served with mcpgo.ServeStdio, the connection
//     read-only.
//
// Both return the result that go-sdk's typed tool of gosdkserver
// returns: the output {"text": ...} as structured content and as text.
//
// With -cpuprofile FILE, it writes its CPU profile there when its input
// ends.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"runtime/pprof"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
)

type echoOut struct {
	Text string `json:"text"`
}

func echo(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultStructuredOnly(echoOut{Text: req.GetString("text", "")}), nil
}

func main() {
	variant := flag.String("variant", "plain", "how the tool is added: plain or mcpeffect")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this `file`")
	flag.Parse()

	tool := mcp.NewTool("echo", mcp.WithDescription("Return the text."), mcp.WithString("text"))
	var serve func() error
	switch *variant {
	case "plain":
		s := server.NewMCPServer("percall-mcpgo", "v1")
		s.AddTool(tool, echo)
		serve = func() error { return server.ServeStdio(s) }
	case "mcpeffect":
		r := mcpeffect.NewRegistry()
		s := server.NewMCPServer("percall-mcpgo", "v1", mcpgo.ServerOptions(r, nil)...)
		mcpgo.AddTool(s, r, tool, mcpeffect.Read, echo)
		ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly)
		serve = func() error { return mcpgo.ServeStdio(ctx, s) }
	default:
		log.Fatalf("mcpgoserver: unknown -variant %q: plain or mcpeffect", *variant)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				log.Print(err)
			}
		}()
	}
	if err := serve(); err != nil {
		log.Print(err)
	}
}
