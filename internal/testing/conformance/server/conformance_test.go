package main

import (
	"net/http/httptest"
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/suite"
)

// runSuite runs the suite's server scenarios of spec against a new
// conformance server, with a token of scope: through sessions for the
// dated protocols, stateless for 2026-07-28.
func runSuite(t *testing.T, node, entry, spec, scope string) (map[string][]suite.Check, string, error) {
	t.Helper()
	h, stop := newHandler(map[string][]string{"the-secret": {scope}}, spec >= "2026-07-28")
	t.Cleanup(stop)
	// httptest listens on 127.0.0.1: the DNS rebinding scenario needs a
	// loopback server.
	ts := httptest.NewServer(suite.WithToken("the-secret", h))
	t.Cleanup(ts.Close)
	return suite.Run(t, node, entry, ts.URL+"/mcp", spec)
}

// TestConformance runs every server scenario of the conformance suite, for
// each protocol it tests, against the conformance server with a full-scope
// token, and asserts that each passes, as the suite's own results say.
func TestConformance(t *testing.T) {
	node, entry := suite.Find(t)
	for _, spec := range suite.Specs {
		t.Run(spec, func(t *testing.T) {
			scenarios := suite.Scenarios(t, node, entry, spec)
			results, output, runErr := runSuite(t, node, entry, spec, "tools:destructive")
			if suite.AllPass(t, spec, scenarios, results, output, runErr, suite.Exceptions{}) {
				t.Logf("%s: all %d scenarios passed", spec, len(scenarios))
			}
		})
	}
}

// TestConformanceReadOnly runs the suite again with a read-only token: the
// scenarios that fail are exactly those that call what needs more than
// read-only, and each of their failures is mcpeffect's refusal.
func TestConformanceReadOnly(t *testing.T) {
	node, entry := suite.Find(t)
	for _, spec := range suite.Specs {
		t.Run(spec, func(t *testing.T) {
			results, output, _ := runSuite(t, node, entry, spec, "tools:read")
			suite.ReadOnly(t, results, output, suite.ReadOnlyFailing[spec])
		})
	}
}

// TestCatalog holds the server to the catalog that the mcp-go conformance
// server is built from too: the same tools, resources and prompts, each
// classified the same way, and after the triggers ran, the transient ones.
func TestCatalog(t *testing.T) {
	c := newConformance()
	if err := catalog.Check(c.reg, false); err != nil {
		t.Fatal(err)
	}
	c.addTransientTool(t.Context(), nil, nil)
	c.addTransientPrompt(t.Context(), nil, nil)
	if err := catalog.Check(c.reg, true); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Check(newConformance().reg, true); err == nil {
		t.Error("Check(transient) accepts a registry without the transient tool and prompt")
	}
}
