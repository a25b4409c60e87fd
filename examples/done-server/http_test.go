package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func post(t *testing.T, url, secret, host, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

// TestHTTPEdges checks what the HTTP server answers before MCP: bearer
// tokens, the step-up challenge, the metadata, and DNS rebinding.
func TestHTTPEdges(t *testing.T) {
	e := newEnv(t)
	base := e.serveHTTP()
	reader := e.mint("rita", store.Human, mcpeffect.ReadOnly)
	_, expired, err := e.store.MintToken(t.Context(), store.NewToken{Name: "old", Kind: store.Agent, Scope: mcpeffect.Full, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Hour)
	writer := e.mint("alice", store.Human, mcpeffect.Full)
	metadataURL := base + metadataPath
	createTask := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_task","arguments":{"title":"x"}}}`

	for _, c := range []struct {
		name, secret, host, body string
		status                   int
		wwwAuthenticate          []string // parts the header must hold
	}{
		{"no token", "", "", initialize, http.StatusUnauthorized, []string{`resource_metadata="` + metadataURL + `"`}},
		{"unknown token", "done_nothing", "", initialize, http.StatusUnauthorized, []string{`resource_metadata="` + metadataURL + `"`}},
		{"expired token", expired, "", initialize, http.StatusUnauthorized, []string{"resource_metadata="}},
		{"read-only token initializes", reader, "", initialize, http.StatusOK, nil},
		{"read-only token writes", reader, "", createTask, http.StatusForbidden,
			[]string{`error="insufficient_scope"`, `scope="tools:read tools:write"`, `resource_metadata="` + metadataURL + `"`}},
		{"DNS rebinding", reader, "evil.example:80", initialize, http.StatusForbidden, nil},
		{"huge body", writer, "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_task","arguments":{"title":"` +
			strings.Repeat("x", 5<<20) + `"}}}`, http.StatusRequestEntityTooLarge, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := post(t, base+mcpPath, c.secret, c.host, c.body)
			if resp.StatusCode != c.status {
				body, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, c.status, body)
			}
			got := resp.Header.Get("WWW-Authenticate")
			for _, part := range c.wwwAuthenticate {
				if !strings.Contains(got, part) {
					t.Errorf("WWW-Authenticate %q lacks %q", got, part)
				}
			}
		})
	}

	resp, err := http.Get(metadataURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var meta struct {
		Resource        string   `json:"resource"`
		ScopesSupported []string `json:"scopes_supported"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil {
		t.Fatal(err)
	}
	if meta.Resource != base+mcpPath || strings.Join(meta.ScopesSupported, " ") != "tools:read tools:write tools:destructive" {
		t.Errorf("metadata %+v", meta)
	}
}

// TestRevokeTakesEffect revokes a token in use, over HTTP and over a
// stdio-like connection: the next call fails.
func TestRevokeTakesEffect(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			e := newEnv(t)
			secret := e.mint("alice", store.Human, mcpeffect.Full)
			connect := e.connect
			if transport == "http" {
				connect = e.connectHTTP
			}
			cs := connect(secret)
			me := must[whoamiResult](t, cs, "whoami", nil)
			must[store.Token](t, cs, "revoke_token", args{"token_id": me.TokenID})
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami", Arguments: args{}})
			if err == nil {
				t.Fatal("a call with a revoked token succeeded")
			}
			if _, err := e.store.Authenticate(t.Context(), secret); err != store.ErrBadToken {
				t.Errorf("Authenticate with a revoked secret: %v", err)
			}
		})
	}
}
