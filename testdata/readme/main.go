package main

import (
	"context"
	"log"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type task struct {
	ID string `json:"id" jsonschema:"the task"`
}

func getTask(ctx context.Context, req *mcp.CallToolRequest, in task) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "task " + in.ID}}}, nil, nil
}

func deleteTask(ctx context.Context, req *mcp.CallToolRequest, in task) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted " + in.ID}}}, nil, nil
}

func main() {
	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)

	// One classification per tool: the annotations are derived from it...
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "get_task", Description: "Get a task."}, mcpeffect.Read, getTask)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_task", Description: "Delete a task."}, mcpeffect.Destructive|mcpeffect.Idempotent, deleteTask)

	// ...and so is the check of every call, made by the middleware.
	server.AddReceivingMiddleware(r.Middleware(nil))

	// Over stdio there is no token: the caller has the connection's scope.
	// Read-only: get_task runs, delete_task is refused.
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly)
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
