package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/suite"
)

// TestTokens checks that a request without a token the server knows is
// turned away before MCP.
func TestTokens(t *testing.T) {
	ts := httptest.NewServer(newConformance().handler(map[string][]string{"the-secret": {"tools:read"}}, false))
	t.Cleanup(ts.Close)
	for name, header := range map[string]string{
		"no token":             "",
		"a wrong token":        "Bearer not-the-secret",
		"a prefix of it":       "Bearer the-secre",
		"it with more":         "Bearer the-secret2",
		"not a bearer token":   "Basic dGhlLXNlY3JldA==",
		"the token in unicode": "Bearer the-ſecret",
	} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(suite.RPC("tools/list", map[string]any{})))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, resp.StatusCode)
		}
	}
}
