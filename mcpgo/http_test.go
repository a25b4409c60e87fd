package mcpgo_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTP calls every tool over Streamable HTTP with every token, with
// the challenge and without it: a token runs what its scope allows, and
// is refused the rest before the handler, with mcpeffect's code, message
// and data when the challenge is off, and with the step-up challenge when
// it is on.
func TestHTTP(t *testing.T) {
	scopes := map[string]mcpeffect.Scope{"read-token": mcpeffect.ReadOnly, "write-token": mcpeffect.NonDestructive, "full-token": mcpeffect.Full, "no-scope": 0}
	for _, challenge := range []bool{false, true} {
		opts := &mcpgo.Options{}
		if challenge {
			opts.Challenge = &mcpeffect.ChallengeOptions{ResourceMetadataURL: "https://example.test" + metadataPath}
		}
		ts := newTestServer(t, opts, false)
		hs := serveHTTP(t, ts.s, ts.r, opts)
		for token, scope := range scopes {
			cs := connectHTTP(t, hs.URL+"/mcp", token, nil)
			for _, tool := range testTools {
				before := ts.calls.count(tool.name)
				res, err := callTool(cs, tool.name)
				ran := ts.calls.count(tool.name) - before
				switch {
				case scope.Allows(tool.effect):
					if err != nil || res.IsError || ran != 1 {
						t.Errorf("challenge %t, %s, %s: got %v, %+v, ran %d times; want it run once", challenge, token, tool.name, err, res, ran)
					}
				case ran != 0:
					t.Errorf("challenge %t, %s, %s: the handler of a refused call ran", challenge, token, tool.name)
				case challenge:
					// go-sdk's client reports the 403 of the challenge as
					// an HTTP error that names the status.
					if err == nil || !strings.Contains(err.Error(), "Forbidden") && !strings.Contains(err.Error(), "403") {
						t.Errorf("challenge %t, %s, %s: got %v, want the step-up challenge", challenge, token, tool.name, err)
					}
				default:
					if d := denied(t, err, tool.name); d.Granted != scope || d.Unscoped {
						t.Errorf("challenge %t, %s, %s: refusal %+v", challenge, token, tool.name, d)
					}
				}
			}
		}
	}
}

// TestHTTPChallengeHeaders checks the challenge as the MCP authorization
// specification has it: 403 and WWW-Authenticate with the scope needed.
func TestHTTPChallengeHeaders(t *testing.T) {
	opts := &mcpgo.Options{Challenge: &mcpeffect.ChallengeOptions{ResourceMetadataURL: "https://example.test" + metadataPath}}
	ts := newTestServer(t, opts, false)
	hs := serveHTTP(t, ts.s, ts.r, opts)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","arguments":{"id":"7"}}}`
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer read-token")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	wa := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(wa, `error="insufficient_scope"`) || !strings.Contains(wa, mcpeffect.DefaultFullScope) {
		t.Errorf("status %d, WWW-Authenticate %q, body %s; want 403 with insufficient_scope and %s", resp.StatusCode, wa, got, mcpeffect.DefaultFullScope)
	}
	if n := ts.calls.count("delete_task"); n != 0 {
		t.Errorf("delete_task ran %d times", n)
	}
}

// TestHTTPNoToken checks that a request without a token, or with a token
// the verifier does not know, is refused by go-sdk's bearer check before
// mcp-go sees it.
func TestHTTPNoToken(t *testing.T) {
	ts := newTestServer(t, nil, false)
	hs := serveHTTP(t, ts.s, ts.r, nil)
	for _, token := range []string{"", "forged-token", "read-token\x00"} {
		if _, err := dialHTTP(hs.URL+"/mcp", token, nil); err == nil {
			t.Errorf("token %q: connected", token)
		}
	}
	for _, tool := range testTools {
		if n := ts.calls.count(tool.name); n != 0 {
			t.Errorf("%s ran %d times", tool.name, n)
		}
	}
}

// TestWithoutServerOptions checks that a server built without
// ServerOptions runs none of the tools, resources and prompts added
// through mcpgo, whatever the caller's scope, over HTTP and stdio: each is
// refused with CodeNotEnforced, in words that say how to install the
// check, as on go-sdk without the middleware.
func TestWithoutServerOptions(t *testing.T) {
	ts := newTestServer(t, nil, true)
	hs := serveHTTP(t, ts.s, ts.r, nil)
	sessions := map[string]*sdk.ClientSession{
		"http":  connectHTTP(t, hs.URL+"/mcp", "full-token", nil),
		"stdio": connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), ts.s, nil),
	}
	for via, cs := range sessions {
		for _, tool := range testTools {
			_, err := callTool(cs, tool.name)
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != mcpeffect.CodeNotEnforced || !strings.Contains(je.Message, "mcpgo.ServerOptions") {
				t.Errorf("%s, %s: got %v, want a refusal of code %d naming mcpgo.ServerOptions", via, tool.name, err, mcpeffect.CodeNotEnforced)
			}
		}
		if _, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "notes://payroll"}); err == nil || !strings.Contains(err.Error(), "mcpgo.ServerOptions") {
			t.Errorf("%s, resource read: got %v, want the refusal naming mcpgo.ServerOptions", via, err)
		}
	}
	for _, tool := range testTools {
		if n := ts.calls.count(tool.name); n != 0 {
			t.Errorf("%s ran %d times", tool.name, n)
		}
	}
}

// TestHTTPConnectionScopeCaps checks that a connection scope set by an
// HTTPContextFunc of mcp-go caps the token's scope.
func TestHTTPConnectionScopeCaps(t *testing.T) {
	ts := newTestServer(t, nil, false)
	readOnly := server.WithHTTPContextFunc(func(ctx context.Context, _ *http.Request) context.Context {
		return mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly)
	})
	hs := serveHTTP(t, ts.s, ts.r, nil, readOnly)
	cs := connectHTTP(t, hs.URL+"/mcp", "full-token", nil)
	if _, err := callTool(cs, "get_task"); err != nil {
		t.Errorf("get_task: %v", err)
	}
	_, err := callTool(cs, "create_task")
	if d := denied(t, err, "create_task"); d.Granted != mcpeffect.ReadOnly {
		t.Errorf("refusal %+v, want the scope capped to read-only", d)
	}
}
