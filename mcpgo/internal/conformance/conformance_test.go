package main

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/suite"
)

// runSuite runs the suite's server scenarios of spec against a new mcp-go
// conformance server, with a token of scope.
func runSuite(t *testing.T, node, entry, spec, scope string) (map[string][]suite.Check, string, error) {
	t.Helper()
	h, stop := newHandler(map[string][]string{"the-secret": {scope}})
	t.Cleanup(stop)
	// httptest listens on 127.0.0.1: the DNS rebinding scenario needs a
	// loopback server.
	ts := httptest.NewServer(suite.WithToken("the-secret", h))
	t.Cleanup(ts.Close)
	return suite.Run(t, node, entry, ts.URL+"/mcp", spec)
}

// exceptions are the scenarios and checks that mcp-go v1.2.1 cannot
// pass, for each protocol, with the reason (see suite.Exceptions).
// mcpgo/README.md cites the mcp-go code of each.
var exceptions = map[string]suite.Exceptions{
	"2025-11-25": {
		Unsupported: map[string]string{
			"server-sse-polling": "mcp-go gives a handler no way to close its SSE stream mid-call, and sends neither a priming event nor a retry field (SEP-1699): " +
				"it answers the call with JSON, and the suite finds nothing to test",
		},
		Intermittent: map[string]string{
			"tools-call-with-progress/tools-call-with-progress": lostNotification,
			"tools-call-with-logging/tools-call-with-logging":   lostNotification,
		},
	},
	"2026-07-28": {
		Unsupported: map[string]string{
			"server-stateless/sep-2575-server-rejects-undeclared-capability": "mcp-go sends every error of a tool handler as an internal error (-32603), " +
				"so a tool cannot answer -32021 for a client capability the request did not declare",
			"server-stateless/sep-2575-missing-capability-http-400": "the same: without -32021 there is no status 400 to check",
		},
		Intermittent: map[string]string{
			"tools-call-with-progress/tools-call-with-progress": lostNotification,
		},
	},
}

// lostNotification is why the checks of notifications sent while a call
// runs fail at times: mcp-go's Streamable HTTP server loses one now and
// then. On 2026-07-28, the forwarder of handlePost (server/streamable_http.go)
// drops a notification it took off the session's channel as the call
// ended: its "case <-done" branch keeps one only in an event store, which
// that protocol does not use. mcp-go's own conformance baseline
// (conformance/server/expected-failures.yml in v1.2.1) lists these
// scenarios as intermittent, and they fail as often without mcpgo.Handler
// in front.
const lostNotification = "mcp-go drops, at times, a notification sent as the call ends"

// TestConformance runs every server scenario of the conformance suite, for
// each protocol it tests, against the mcp-go conformance server with a
// full-scope token: each passes, but for those mcp-go cannot pass.
func TestConformance(t *testing.T) {
	node, entry := suite.Find(t)
	for _, spec := range suite.Specs {
		t.Run(spec, func(t *testing.T) {
			scenarios := suite.Scenarios(t, node, entry, spec)
			results, output, runErr := runSuite(t, node, entry, spec, "tools:destructive")
			if suite.AllPass(t, spec, scenarios, results, output, runErr, exceptions[spec]) {
				t.Logf("%s: all %d scenarios passed, but for the %d checks or scenarios that mcp-go cannot pass", spec, len(scenarios), len(exceptions[spec].Unsupported))
			}
		})
	}
}

// TestCatalog holds the server to the catalog that the go-sdk conformance
// server is built from too: the same tools, resources and prompts, each
// classified the same way, and after the triggers ran, the transient ones.
func TestCatalog(t *testing.T) {
	c := newConformance()
	if err := catalog.Check(c.reg, false); err != nil {
		t.Fatal(err)
	}
	c.addTransientTool(t.Context(), mcp.CallToolRequest{})
	c.addTransientPrompt(t.Context(), mcp.CallToolRequest{})
	if err := catalog.Check(c.reg, true); err != nil {
		t.Fatal(err)
	}
}

// TestConformanceReadOnly runs the suite again with a read-only token: the
// scenarios that fail are exactly those that the go-sdk conformance server
// fails with it, those that call what needs more than read-only, and each
// of their failures is mcpeffect's refusal, code and message as the go-sdk
// integration sends it.
func TestConformanceReadOnly(t *testing.T) {
	node, entry := suite.Find(t)
	for _, spec := range suite.Specs {
		t.Run(spec, func(t *testing.T) {
			results, output, _ := runSuite(t, node, entry, spec, "tools:read")
			// What mcp-go cannot pass with a full token, it cannot pass
			// with a read-only one either: those checks are not refusals.
			x := exceptions[spec]
			for _, m := range []map[string]string{x.Unsupported, x.Intermittent} {
				for key := range m {
					name, id, _ := strings.Cut(key, "/")
					results[name] = slices.DeleteFunc(results[name], func(c suite.Check) bool { return id == "" || c.ID == id })
				}
			}
			suite.ReadOnly(t, results, output, suite.ReadOnlyFailing[spec])
		})
	}
}
