package main

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/suite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectInMemory opens a session to s in memory, whose connection has
// scope.
func connectInMemory(t *testing.T, s *mcp.Server, scope mcpeffect.Scope) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(mcpeffect.WithConnectionScope(context.Background(), scope), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "readonly-test", Version: "v1"}, suite.ClientOptions).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestReadOnlyToken calls every tool, resource and prompt of the
// conformance server with a read-only token: exactly those whose effect or
// scope needs more, as the registry says, are refused, with a DeniedError
// and before their handler runs; everything else works.
func TestReadOnlyToken(t *testing.T) {
	tokens := map[string][]string{"read-secret": {"tools:read"}, "full-secret": {"tools:destructive"}}
	for _, leg := range []struct {
		name      string
		stateless bool
		inMemory  bool
	}{
		{name: "sessions"},
		{name: "stateless", stateless: true},
		// In memory, with a read-only connection, there is no HTTP
		// challenge: the middleware alone refuses.
		{name: "in memory", inMemory: true},
	} {
		t.Run(leg.name, func(t *testing.T) {
			c := newConformance()
			ts := httptest.NewServer(c.handler(tokens, leg.stateless))
			t.Cleanup(ts.Close)
			url := ts.URL + "/mcp"
			if leg.inMemory {
				suite.ReadOnlyCalls(t, connectInMemory(t, c.server, mcpeffect.ReadOnly), c.reg, "", "", nil)
				suite.FullCalls(t, connectInMemory(t, c.server, mcpeffect.Full))
				return
			}
			suite.ReadOnlyCalls(t, suite.Connect(t, url, "read-secret"), c.reg, url, "read-secret", nil)
			suite.FullCalls(t, suite.Connect(t, url, "full-secret"))
		})
	}
}
