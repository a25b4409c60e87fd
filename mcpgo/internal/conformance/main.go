// Command conformance is the conformance server of mcpeffect's mcp-go
// adapter: the tools, resources and prompts that the official MCP
// conformance suite (@modelcontextprotocol/conformance) expects of a
// server, built on github.com/mark3labs/mcp-go, each classified through
// mcpgo.AddTool, AddResource, AddResourceTemplate and AddPrompt with the
// table that the go-sdk conformance server is built from
// (internal/testing/conformance/catalog), behind mcpgo.ServerOptions and the
// challenge of mcpgo.Handler, over Streamable HTTP with bearer tokens.
//
// Its tests run every server scenario of the suite through it with a
// full-scope token, and check that a read-only token is refused exactly
// the calls whose effect needs more. mcp-go serves the dated protocols
// through sessions and 2026-07-28 statelessly on the same endpoint, each
// request in its own era, so one server serves every protocol.
//
// To run it by hand, on loopback only, from the mcpgo module:
//
//	go run ./internal/conformance -http 127.0.0.1:3002 -token secret=tools:destructive
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
)

func main() {
	tokens := catalog.TokenFlag{}
	addr := flag.String("http", "127.0.0.1:3002", "loopback address to serve Streamable HTTP at, under /mcp")
	flag.Var(tokens, "token", "a bearer token and its scope strings, as SECRET=tools:read (repeatable)")
	flag.Parse()
	if len(tokens) == 0 {
		fmt.Fprintln(os.Stderr, "conformance: give at least one -token SECRET=SCOPE, such as -token secret=tools:destructive")
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		// A test server, with tokens on its command line: never off the
		// machine.
		fmt.Fprintf(os.Stderr, "conformance: -http %q is not a loopback address such as 127.0.0.1:3002\n", *addr)
		os.Exit(2)
	}
	h, stop := newHandler(tokens)
	defer stop()
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("mcp-go conformance server at http://%s/mcp", *addr)
	log.Fatal(srv.ListenAndServe())
}
