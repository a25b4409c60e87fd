// Command gosdkserver serves one trivial tool, echo, over stdio with
// go-sdk: the servers of go-sdk that percall measures. -variant chooses
// how the tool is added:
//
//   - plain: mcp.AddTool, typed input and output, as go-sdk teaches it;
//   - mcpeffect: the same tool through mcpeffect.AddTool, the server
//     behind mcpeffect's middleware, the connection read-only;
//   - untyped: Server.AddTool with a handler of the raw request, which
//     go-sdk neither validates nor checks against an output schema (the
//     option go-sdk offers a server that wants a cheaper call);
//   - noschema: mcp.AddTool with typed input and an output of type any,
//     so that go-sdk infers no output schema and checks no result.
//
// Each returns the same result on the wire: the output {"text": ...} as
// structured content and, as go-sdk writes it, as text.
//
// With -cpuprofile FILE, it writes its CPU profile there when its input
// ends.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"os"
	"runtime/pprof"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Text string `json:"text"`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
	return nil, echoOut(in), nil
}

func main() {
	variant := flag.String("variant", "plain", "how the tool is added: plain, mcpeffect, untyped or noschema")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this `file`")
	flag.Parse()

	s := mcp.NewServer(&mcp.Implementation{Name: "percall-gosdk", Version: "v1"}, nil)
	tool := &mcp.Tool{Name: "echo", Description: "Return the text."}
	ctx := context.Background()
	switch *variant {
	case "plain":
		mcp.AddTool(s, tool, echo)
	case "mcpeffect":
		r := mcpeffect.NewRegistry()
		mcpeffect.AddTool(s, r, tool, mcpeffect.Read, echo)
		s.AddReceivingMiddleware(r.Middleware(nil))
		ctx = mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly)
	case "untyped":
		tool.InputSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
		s.AddTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in echoIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			text, err := json.Marshal(echoOut(in))
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
				StructuredContent: echoOut(in),
			}, nil
		})
	case "noschema":
		mcp.AddTool(s, tool, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return nil, echoOut(in), nil
		})
	default:
		log.Fatalf("gosdkserver: unknown -variant %q: plain, mcpeffect, untyped or noschema", *variant)
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
	if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}
