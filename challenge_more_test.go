package mcpeffect_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveHTTP serves s over Streamable HTTP at the returned URL, behind the
// bearer tokens of verify and the challenge of r's enforcer configured by
// opts, as its middleware is.
func serveHTTP(t testing.TB, s *mcp.Server, r *mcpeffect.Registry, opts *mcpeffect.MiddlewareOptions, verify auth.TokenVerifier, stateless bool) string {
	t.Helper()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	h = r.Enforcer(opts).Challenge(&mcpeffect.ChallengeOptions{ResourceMetadataURL: ts.URL + metadataPath})(h)
	h = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: ts.URL + metadataPath})(h)
	mux.Handle("/mcp", h)
	return ts.URL + "/mcp"
}

// rpcBody returns a JSON-RPC request, with params given as JSON.
func rpcBody(method, params string) string {
	return `{"jsonrpc":"2.0","id":9,"method":"` + method + `","params":` + params + `}`
}

// TestHTTPChallengeEveryOperation: the challenge answers a refused
// resources/read and prompts/get as it does a tools/call, and a call
// whose effect depends on its arguments where the raw arguments give it
// with certainty; everything else goes on to the middleware.
func TestHTTPChallengeEveryOperation(t *testing.T) {
	s, r, _ := newScopedServer(t, nil)
	rs, rr, _ := newRuleServer(t, nil)
	url := serveHTTP(t, s, r, nil, verifyTestToken, false)
	ruleURL := serveHTTP(t, rs, rr, nil, verifyTestToken, false)
	const metadata = `resource_metadata="`
	for _, tt := range []struct {
		name, url, token, body string
		// challenge is the scope parameter of the 403, or "" when the
		// request must go on to the server.
		challenge, description string
		denial                 mcpeffect.DeniedError
	}{
		{"resource needing full", url, "read-token", rpcBody("resources/read", `{"uri":"notes://payroll"}`),
			"openid tools:read tools:destructive", "a wider scope is needed to read resource notes://payroll",
			mcpeffect.DeniedError{Resource: "notes://payroll", Classified: true, Required: mcpeffect.Full, RequiredScopeName: "tools:destructive", Granted: mcpeffect.ReadOnly}},
		{"resource through a template", url, "read-token", rpcBody("resources/read", `{"uri":"notes://42"}`),
			"openid tools:read tools:write", "a wider scope is needed to read resource notes://42",
			mcpeffect.DeniedError{Resource: "notes://42", Classified: true, Required: mcpeffect.NonDestructive, RequiredScopeName: "tools:write", Granted: mcpeffect.ReadOnly}},
		{"any resource without a scope", url, "no-scope", rpcBody("resources/read", `{"uri":"plain://status"}`),
			"openid tools:read", "a wider scope is needed to read resource plain://status",
			mcpeffect.DeniedError{Resource: "plain://status", Classified: true, Required: mcpeffect.ReadOnly, RequiredScopeName: "tools:read"}},
		{"prompt needing full", url, "write-token", rpcBody("prompts/get", `{"name":"audit_everything"}`),
			"tools:write tools:destructive", "a wider scope is needed to get prompt audit_everything",
			mcpeffect.DeniedError{Prompt: "audit_everything", Classified: true, Required: mcpeffect.Full, RequiredScopeName: "tools:destructive", Granted: mcpeffect.NonDestructive}},
		{"a resource it may read", url, "read-token", rpcBody("resources/read", `{"uri":"notes://readme"}`), "", "", mcpeffect.DeniedError{}},
		{"a prompt it may get", url, "read-token", rpcBody("prompts/get", `{"name":"hello"}`), "", "", mcpeffect.DeniedError{}},
		{"uri given twice", url, "read-token", rpcBody("resources/read", `{"uri":"notes://readme","uri":"notes://payroll"}`), "", "", mcpeffect.DeniedError{}},
		{"uri not a string", url, "read-token", rpcBody("resources/read", `{"uri":7}`), "", "", mcpeffect.DeniedError{}},
		{"a destructive action", ruleURL, "read-token", rpcBody("tools/call", `{"name":"resources","arguments":{"action":"delete"}}`),
			"openid tools:read tools:destructive", "a wider scope is needed to call resources",
			mcpeffect.DeniedError{Tool: "resources", Classified: true, Required: mcpeffect.Full, RequiredScopeName: "tools:destructive", Granted: mcpeffect.ReadOnly, DependsOnArguments: true, Selected: `action="delete"`}},
		{"a write action", ruleURL, "read-token", rpcBody("tools/call", `{"name":"files","arguments":{"action":"create"}}`),
			"openid tools:read tools:write", "a wider scope is needed to call files",
			mcpeffect.DeniedError{Tool: "files", Classified: true, Required: mcpeffect.NonDestructive, RequiredScopeName: "tools:write", Granted: mcpeffect.ReadOnly, DependsOnArguments: true, Selected: `action="create"`}},
		{"a read action", ruleURL, "read-token", rpcBody("tools/call", `{"name":"resources","arguments":{"action":"get"}}`), "", "", mcpeffect.DeniedError{}},
		{"action in two cases", ruleURL, "read-token", rpcBody("tools/call", `{"name":"docs","arguments":{"action":"get","Action":"delete"}}`), "", "", mcpeffect.DeniedError{}},
		{"arguments twice", ruleURL, "read-token", rpcBody("tools/call", `{"name":"resources","arguments":{"action":"delete"},"arguments":{"action":"get"}}`), "", "", mcpeffect.DeniedError{}},
		// An action read strictly that the rule does not declare is what
		// the handler receives: the worst case, with certainty.
		{"an undeclared action", ruleURL, "read-token", rpcBody("tools/call", `{"name":"resources","arguments":{"action":"purge"}}`),
			"openid tools:read tools:destructive", "a wider scope is needed to call resources",
			mcpeffect.DeniedError{Tool: "resources", Classified: true, Required: mcpeffect.Full, RequiredScopeName: "tools:destructive", Granted: mcpeffect.ReadOnly, DependsOnArguments: true, Selected: `action="purge", which it does not declare, the worst case`}},
		{"a missing action", ruleURL, "read-token", rpcBody("tools/call", `{"name":"docs","arguments":{}}`), "", "", mcpeffect.DeniedError{}},
		// A function of the decoded input: only the wrapper can compute
		// the call's effect, unless no outcome is allowed at all, which
		// the middleware would refuse as well, whatever the arguments.
		{"a function of the decoded input, some outcome allowed", ruleURL, "write-token", rpcBody("tools/call", `{"name":"update_issue","arguments":{"state":"closed"}}`), "", "", mcpeffect.DeniedError{}},
		{"a function of the decoded input, no outcome allowed", ruleURL, "read-token", rpcBody("tools/call", `{"name":"update_issue","arguments":{"state":"closed"}}`),
			"openid tools:read tools:write", "a wider scope is needed to call update_issue",
			mcpeffect.DeniedError{Tool: "update_issue", Classified: true, Required: mcpeffect.NonDestructive, RequiredScopeName: "tools:write", Granted: mcpeffect.ReadOnly, DependsOnArguments: true}},
		// The worst case is allowed: nothing to compute.
		{"full scope", ruleURL, "full-token", rpcBody("tools/call", `{"name":"resources","arguments":{"action":"purge"}}`), "", "", mcpeffect.DeniedError{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := postJSON(t, tt.url, tt.token, tt.body)
			if tt.challenge == "" {
				if resp.StatusCode == http.StatusForbidden {
					t.Fatalf("challenged (%s), want the request passed on", resp.Header.Get("WWW-Authenticate"))
				}
				return
			}
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("status %d, want 403", resp.StatusCode)
			}
			ch := resp.Header.Get("WWW-Authenticate")
			if !strings.Contains(ch, `error="insufficient_scope", scope="`+tt.challenge+`", `+metadata) ||
				!strings.HasSuffix(ch, `error_description="`+tt.description+`"`) {
				t.Errorf("WWW-Authenticate: %s", ch)
			}
			var body struct {
				Error struct {
					Code int                   `json:"code"`
					Data mcpeffect.DeniedError `json:"data"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			checkEnvelope(t, &body.Error.Data)
			if body.Error.Code != mcpeffect.CodeDenied || withoutEnvelope(body.Error.Data) != tt.denial {
				t.Errorf("body %+v, want %+v", body.Error, tt.denial)
			}
		})
	}
}

// TestScopeHierarchyCustomNames: scope strings of one's own are levels
// too, the broader granting the narrower, for every operation: a token
// holding only the broadest may read, call and get what the narrowest
// allows; one holding the narrowest is challenged for the broadest alone,
// one scope string being all an operation needs.
func TestScopeHierarchyCustomNames(t *testing.T) {
	names := mcpeffect.ScopeNames{ReadOnly: "repo:read", NonDestructive: "repo:write", Full: "repo:admin"}
	tokens := map[string][]string{"admin": {"repo:admin"}, "reader": {"repo:read"}, "writer": {"profile", "repo:write"}}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		scopes, ok := tokens[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
	}
	s, r, c := newScopedServer(t, &mcpeffect.MiddlewareOptions{ScopeNames: names})
	url := serveHTTP(t, s, r, &mcpeffect.MiddlewareOptions{ScopeNames: names}, verify, false)
	ctx := context.Background()

	admin := (&httpServer{Server: &httptest.Server{URL: strings.TrimSuffix(url, "/mcp")}}).connect(t, "admin")
	if _, err := admin.CallTool(ctx, &mcp.CallToolParams{Name: "get_task", Arguments: taskArgs{ID: "1"}}); err != nil || c.count("get_task") != 1 {
		t.Errorf("admin calls a read: %v", err)
	}
	if _, err := admin.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://readme"}); err != nil {
		t.Errorf("admin reads a read-only resource: %v", err)
	}
	if _, err := admin.GetPrompt(ctx, &mcp.GetPromptParams{Name: "hello"}); err != nil {
		t.Errorf("admin gets a read-only prompt: %v", err)
	}
	if _, err := admin.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://payroll"}); err != nil {
		t.Errorf("admin reads a full resource: %v", err)
	}

	for _, tt := range []struct {
		token, body, scope string
	}{
		{"reader", callBody(1, "delete_task"), "repo:read repo:admin"},
		{"reader", rpcBody("resources/read", `{"uri":"notes://42"}`), "repo:read repo:write"},
		{"writer", rpcBody("prompts/get", `{"name":"audit_everything"}`), "profile repo:write repo:admin"},
	} {
		resp := postJSON(t, url, tt.token, tt.body)
		if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || !strings.Contains(ch, `scope="`+tt.scope+`"`) {
			t.Errorf("%s %s: status %d, %s; want scope %q", tt.token, tt.body, resp.StatusCode, ch, tt.scope)
		}
	}
}
