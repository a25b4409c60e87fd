// Command e2eserver serves the server of mcpeffect's end-to-end tests
// over stdio, with the connection scope named by $E2E_SCOPE (read-only,
// non-destructive, full or none), and with its data kept in the
// directory $E2E_DATA, if set, where its tools do what their effects say
// (see e2e.NewServerIn). The tests build and run it.
package main

import (
	"context"
	"log"
	"os"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/e2e"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	scope, err := mcpeffect.ParseScope(os.Getenv("E2E_SCOPE"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := mcpeffect.WithConnectionScope(context.Background(), scope)
	s, err := e2e.NewServerIn(os.Getenv("E2E_DATA"))
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
