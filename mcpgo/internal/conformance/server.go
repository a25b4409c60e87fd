package main

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// conformance is the server under test: an mcp-go server whose every
// tool, resource and prompt is declared through one mcpeffect.Registry.
type conformance struct {
	server *server.MCPServer
	reg    *mcpeffect.Registry
	// opts configure the enforcement once, for ServerOptions and Handler.
	opts *mcpgo.Options
	// states signs the requestState of multi-round-trip tools, so that a
	// client cannot forge the state of a round it was not given.
	states *catalog.States

	mu      sync.Mutex
	watched int // how many times the watched resource has changed
}

func newConformance() *conformance {
	c := &conformance{
		reg:    mcpeffect.NewRegistry(),
		opts:   &mcpgo.Options{Challenge: &mcpeffect.ChallengeOptions{}},
		states: catalog.NewStates(),
	}
	opts := append([]server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		// mcp-go's default completion providers answer with no values:
		// the suite checks that the capability answers, and this server
		// has nothing to suggest.
		server.WithCompletions(),
		server.WithLogging(),
		server.WithElicitation(),
	}, mcpgo.ServerOptions(c.reg, c.opts)...)
	c.server = server.NewMCPServer("mcpeffect-conformance-mcpgo", "v1", opts...)
	c.server.EnableSampling()
	c.addTools()
	c.addInputRequiredTools()
	c.addResources()
	c.addPrompts()
	return c
}

// newHandler returns the HTTP handler of a new conformance server that
// accepts the bearer tokens of tokens (secret to scope strings), and a
// function that stops the server's background work.
func newHandler(tokens map[string][]string) (http.Handler, func()) {
	c := newConformance()
	ctx, cancel := context.WithCancel(context.Background())
	go c.changeWatched(ctx, 3*time.Second)
	return c.handler(tokens), cancel
}

// handler returns the HTTP handler of c, serving /mcp: mcp-go's Streamable
// HTTP server, with sessions for the dated protocols and an event store
// so that a client whose stream was cut resumes it, behind the challenge
// and the refusals' rewriting of mcpgo.Handler, behind the bearer tokens
// that give each request its scope.
func (c *conformance) handler(tokens map[string][]string) http.Handler {
	h := server.NewStreamableHTTPServer(c.server,
		server.WithStateful(true),
		server.WithEventStore(server.NewInMemoryEventStore()))
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.RequireBearerToken(catalog.Verifier(tokens), nil)(mcpgo.Handler(c.reg, c.opts, h)))
	return mux
}

// capabilities returns what the client of the request on ctx declared it
// can do: on 2026-07-28, in the request itself; before, at initialize.
func capabilities(ctx context.Context) mcp.ClientCapabilities {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientCapabilities != nil {
			return *info.ClientCapabilities
		}
		return mcp.ClientCapabilities{}
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}
