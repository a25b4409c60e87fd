// Command e2eserver serves the server of mcpeffect's end-to-end tests
// over stdio, with the connection scope named by $E2E_SCOPE (read-only,
// non-destructive, full or none). The tests build and run it.
package main

import (
	"context"
	"log"
	"os"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/e2e"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	scope, err := mcpeffect.ParseScope(os.Getenv("E2E_SCOPE"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := mcpeffect.WithConnectionScope(context.Background(), scope)
	if err := e2e.NewServer().Run(ctx, &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
