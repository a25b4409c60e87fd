package audit

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func noop(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}
