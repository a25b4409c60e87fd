package mcpgo_test

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An mcp-go server with one effect per tool: the annotations are derived
// from it, and so is the check of every call. Over stdio the caller has
// the connection's scope; here read-only, so get_task runs and
// delete_task is refused before its handler, naming the scope it needs.
func Example() {
	r := mcpeffect.NewRegistry()
	s := server.NewMCPServer("tasks", "v1", mcpgo.ServerOptions(r, nil)...)

	mcpgo.AddTool(s, r, mcp.NewTool("get_task", mcp.WithDescription("Get a task."), mcp.WithString("id")),
		mcpeffect.Read, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("task " + req.GetString("id", "")), nil
		})
	mcpgo.AddTool(s, r, mcp.NewTool("delete_task", mcp.WithDescription("Delete a task."), mcp.WithString("id")),
		mcpeffect.Destructive|mcpeffect.Idempotent, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("deleted " + req.GetString("id", "")), nil
		})

	// A real server would call mcpgo.ServeStdio(ctx, s); this example
	// serves it over pipes to a go-sdk client in the same process.
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly)
	cs := exampleClient(ctx, s)
	defer cs.Close()

	for _, name := range []string{"get_task", "delete_task"} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{"id": "7"}})
		if d, ok := mcpeffect.AsDeniedError(err); ok {
			fmt.Printf("%s: refused, needs %s (%s)\n", name, d.Required, d.RequiredScopeName)
			continue
		}
		if err != nil {
			fmt.Println(name, err)
			continue
		}
		fmt.Printf("%s: %s\n", name, res.Content[0].(*sdk.TextContent).Text)
	}
	// Output:
	// get_task: task 7
	// delete_task: refused, needs full (tools:destructive)
}

// exampleClient serves s with mcpgo.Listen over pipes, its requests
// seeing ctx, and connects a go-sdk client to it.
func exampleClient(ctx context.Context, s *server.MCPServer) *sdk.ClientSession {
	stdioSlot <- struct{}{} // one stdio session a process, as the tests
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	go func() {
		defer func() { <-stdioSlot }()
		mcpgo.Listen(ctx, server.NewStdioServer(s), serverIn, serverOut)
		serverOut.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "example", Version: "v1"}, nil).
		Connect(context.Background(), &sdk.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		panic(err)
	}
	return cs
}

// Over Streamable HTTP the caller's scope is its bearer token's: go-sdk's
// auth.RequireBearerToken checks the token, and its TokenInfo reaches
// every handler of mcp-go through the request's context. The same
// Options configure the check of ServerOptions and the step-up
// challenge of Handler.
func ExampleHandler() {
	r := mcpeffect.NewRegistry()
	opts := &mcpgo.Options{
		MiddlewareOptions: mcpeffect.MiddlewareOptions{HideDenied: true},
		Challenge:         &mcpeffect.ChallengeOptions{ResourceMetadataURL: "https://tasks.example/.well-known/oauth-protected-resource/mcp"},
	}
	s := server.NewMCPServer("tasks", "v1", mcpgo.ServerOptions(r, opts)...)
	mcpgo.AddTool(s, r, mcp.NewTool("delete_task", mcp.WithString("id")), mcpeffect.Destructive|mcpeffect.Idempotent,
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("deleted"), nil
		})

	// verify checks a token with the authorization server.
	verify := func(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
		return nil, auth.ErrInvalidToken
	}
	h := mcpgo.Handler(r, opts, server.NewStreamableHTTPServer(s))
	http.Handle("/mcp", auth.RequireBearerToken(verify, nil)(h))
	// http.ListenAndServe("localhost:8080", nil)
}
