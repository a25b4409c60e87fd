package main

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformance is the server under test: an mcp.Server whose every tool,
// resource and prompt is declared through one mcpeffect.Registry.
type conformance struct {
	server *mcp.Server
	reg    *mcpeffect.Registry
	// states signs the requestState of multi-round-trip tools, so that a
	// client cannot forge the state of a round it was not given.
	states *catalog.States

	mu      sync.Mutex
	watched int // how many times the watched resource has changed
}

func newConformance() *conformance {
	c := &conformance{reg: mcpeffect.NewRegistry(), states: catalog.NewStates()}
	c.server = mcp.NewServer(&mcp.Implementation{Name: "mcpeffect-conformance", Version: "v1"}, &mcp.ServerOptions{
		CompletionHandler: complete,
		// Subscriptions are go-sdk's to keep; these only accept them.
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	c.addTools()
	c.addResources()
	c.addPrompts()
	return c
}

// newHandler returns the HTTP handler of a new conformance server that
// accepts the bearer tokens of tokens (secret to scope strings), and a
// function that stops the server's background work.
func newHandler(tokens map[string][]string, stateless bool) (http.Handler, func()) {
	c := newConformance()
	ctx, cancel := context.WithCancel(context.Background())
	go c.changeWatched(ctx, 3*time.Second)
	return c.handler(tokens, stateless), cancel
}

// handler returns the HTTP handler of c, serving /mcp. Call it once: it
// installs c's enforcement.
func (c *conformance) handler(tokens map[string][]string, stateless bool) http.Handler {
	opts := &mcp.StreamableHTTPOptions{Stateless: stateless}
	if !stateless {
		// Sessions keep their streams' events, so that a client whose
		// stream was closed (SEP-1699) resumes it where it stopped.
		opts.EventStore = mcp.NewMemoryEventStore(nil)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return c.server }, opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", enforce(c.server, c.reg, h, catalog.Verifier(tokens)))
	return mux
}

// enforce puts mcpeffect's checks around a server and its HTTP handler:
// the middleware, the check that counts, on the server; the step-up
// challenge, the early answer, on HTTP; and the bearer tokens that give each
// request its scope outside both. It is all the wiring of enforcement, in one
// place.
func enforce(s *mcp.Server, r *mcpeffect.Registry, h http.Handler, verify auth.TokenVerifier) http.Handler {
	e := r.Enforcer(nil) // one configuration for both checks
	s.AddReceivingMiddleware(e.Middleware())
	h = e.Challenge(nil)(h)
	return auth.RequireBearerToken(verify, nil)(h)
}

// complete answers completion/complete with no values: the suite checks
// that the capability answers, and this server has nothing to suggest.
func complete(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
}
