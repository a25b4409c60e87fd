// Command server is the conformance server of mcpeffect: it offers the
// tools, resources and prompts that the official MCP conformance suite
// (@modelcontextprotocol/conformance) expects of a server, each classified
// with mcpeffect, behind the middleware and the challenge of one
// [mcpeffect.Enforcer], over Streamable HTTP with bearer tokens.
//
// Its tests run every server scenario of the suite through it with a
// full-scope token, and check that a read-only token is refused exactly the
// calls whose effect needs more. It lives under internal/, not testdata/,
// so that go vet, staticcheck and the race detector see it as they see the
// library: it is the program that proves the library, and is held to the
// same standard. The suite itself, an npm package, is pinned in
// testdata/conformance.
//
// To run it by hand, on loopback only:
//
//	go run ./internal/conformance/server -http 127.0.0.1:3001 -token secret=tools:destructive
//
// -stateless serves the 2026-07-28 protocol's stateless clients; without
// it, sessions serve the dated protocols through 2025-11-25.
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
	addr := flag.String("http", "127.0.0.1:3001", "loopback address to serve Streamable HTTP at, under /mcp")
	stateless := flag.Bool("stateless", false, "serve stateless Streamable HTTP (the 2026-07-28 protocol) instead of sessions")
	flag.Var(tokens, "token", "a bearer token and its scope strings, as SECRET=tools:read (repeatable)")
	flag.Parse()
	if len(tokens) == 0 {
		fmt.Fprintln(os.Stderr, "server: give at least one -token SECRET=SCOPE, such as -token secret=tools:destructive")
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		// A test server, with tokens on its command line: never off the
		// machine.
		fmt.Fprintf(os.Stderr, "server: -http %q is not a loopback address such as 127.0.0.1:3001\n", *addr)
		os.Exit(2)
	}
	h, stop := newHandler(tokens, *stateless)
	defer stop()
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("conformance server at http://%s/mcp (stateless %t)", *addr, *stateless)
	log.Fatal(srv.ListenAndServe())
}
