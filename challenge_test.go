package mcpeffect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testTokens are the bearer tokens the test HTTP servers accept, with the
// scope strings each carries.
var testTokens = map[string][]string{
	"read-token":  {"openid", "tools:read"},
	"write-token": {"tools:write"},
	"full-token":  {"tools:destructive"},
	"no-scope":    {"openid"},
}

func verifyTestToken(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	scopes, ok := testTokens[token]
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
}

const metadataPath = "/.well-known/oauth-protected-resource"

// httpServer serves the test tools over Streamable HTTP at /mcp behind
// bearer tokens, with the challenge wrapper when challenge is set.
type httpServer struct {
	*httptest.Server
	calls *calls
}

func newHTTPServer(t testing.TB, challenge bool) *httpServer {
	t.Helper()
	s, r, c := newTestServer(t, nil)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	if challenge {
		h = r.Enforcer(nil).Challenge(&mcpeffect.ChallengeOptions{ResourceMetadataURL: ts.URL + metadataPath})(h)
	}
	h = auth.RequireBearerToken(verifyTestToken, &auth.RequireBearerTokenOptions{ResourceMetadataURL: ts.URL + metadataPath})(h)
	mux.Handle("/mcp", h)
	return &httpServer{ts, c}
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(req)
}

func (s *httpServer) connect(t testing.TB, token string) *mcp.ClientSession {
	t.Helper()
	return connectHTTP(t, s.URL+"/mcp", token, nil)
}

// connectHTTP opens a session to the Streamable HTTP endpoint url with the
// bearer token, with a client of opts.
func connectHTTP(t testing.TB, url, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	transport := &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "v1"}, opts).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestHTTPEveryWriteWithReadToken is a client that tries every tool that
// is not a read with a read-only token, with and without the challenge.
func TestHTTPEveryWriteWithReadToken(t *testing.T) {
	ctx := context.Background()
	for _, challenge := range []bool{false, true} {
		s := newHTTPServer(t, challenge)
		for token, scope := range map[string]mcpeffect.Scope{"read-token": mcpeffect.ReadOnly, "write-token": mcpeffect.NonDestructive, "full-token": mcpeffect.Full, "no-scope": 0} {
			cs := s.connect(t, token)
			for _, tool := range testTools {
				before := s.calls.count(tool.name)
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.name, Arguments: taskArgs{ID: "7"}})
				ran := s.calls.count(tool.name) > before
				if scope.Allows(tool.effect) {
					if err != nil || !ran {
						t.Errorf("challenge %t, %s, %s: err %v, ran %t; want the call to run", challenge, token, tool.name, err, ran)
					}
					continue
				}
				d, ok := mcpeffect.AsDeniedError(err)
				if ran || !ok || d.Tool != tool.name || d.Granted != scope {
					t.Errorf("challenge %t, %s, %s: err %v, ran %t; want a denial without running", challenge, token, tool.name, err, ran)
				}
			}
			// The session survives refusals.
			if err := cs.Ping(ctx, nil); err != nil {
				t.Errorf("challenge %t, %s: ping after refusals: %v", challenge, token, err)
			}
		}
	}
}

func postJSON(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func callBody(id any, tool string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": map[string]any{}}})
	return string(b)
}

func TestHTTPChallengeResponse(t *testing.T) {
	s := newHTTPServer(t, true)
	resp := postJSON(t, s.URL+"/mcp", "read-token", callBody(42, "delete_task"))
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403", resp.StatusCode)
	}
	want := `Bearer error="insufficient_scope", scope="openid tools:read tools:destructive", resource_metadata="` + s.URL + metadataPath +
		`", error_description="a wider scope is needed to call delete_task"`
	if got := resp.Header.Get("WWW-Authenticate"); got != want {
		t.Errorf("WWW-Authenticate:\n got %s\nwant %s", got, want)
	}
	var body struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Error   struct {
			Code    int                   `json:"code"`
			Message string                `json:"message"`
			Data    mcpeffect.DeniedError `json:"data"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.JSONRPC != "2.0" || body.ID != 42 || body.Error.Code != mcpeffect.CodeDenied ||
		body.Error.Data.Tool != "delete_task" || body.Error.Data.RequiredScopeName != "tools:destructive" ||
		!strings.Contains(body.Error.Message, "needs the full scope") {
		t.Errorf("body %+v", body)
	}
	if s.calls.total() != 0 {
		t.Errorf("a handler ran")
	}
}

// TestHTTPBatchGoesToMiddleware sends a JSON-RPC batch, as a client of
// the 2025-03-26 protocol may, holding an allowed call, two refused ones
// and a notification. The challenge passes it on, and the middleware
// answers each call: the allowed one runs.
func TestHTTPBatchGoesToMiddleware(t *testing.T) {
	s := newHTTPServer(t, true)
	post := func(session, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, s.URL+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer write-token")
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"batcher","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: status %d, session %q", resp.StatusCode, session)
	}
	io.Copy(io.Discard, resp.Body)
	if resp := post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: status %d", resp.StatusCode)
	}

	batch := "[" + callBody(1, "create_task") + "," + callBody("two", "delete_task") + `,{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "," + callBody(3, "rotate_link") + "]"
	resp = post(session, batch)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("batch: status %d (%s), want 200", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	type answer struct {
		ID     json.RawMessage       `json:"id"`
		Result *mcp.CallToolResult   `json:"result"`
		Error  *struct{ Code int64 } `json:"error"`
	}
	got := map[string]answer{}
	for _, raw := range sseData(t, resp) {
		var batch []answer
		if json.Unmarshal(raw, &batch) != nil {
			var one answer
			if err := json.Unmarshal(raw, &one); err != nil {
				t.Fatalf("answer %s: %v", raw, err)
			}
			batch = []answer{one}
		}
		for _, a := range batch {
			got[string(a.ID)] = a
		}
	}
	if a := got["1"]; a.Result == nil || a.Error != nil {
		t.Errorf("create_task in the batch: %+v, want a result", a)
	}
	for _, id := range []string{`"two"`, "3"} {
		if a := got[id]; a.Error == nil || a.Error.Code != mcpeffect.CodeDenied {
			t.Errorf("call %s in the batch: %+v, want a refusal by the middleware", id, a)
		}
	}
	if s.calls.count("create_task") != 1 || s.calls.count("delete_task") != 0 || s.calls.count("rotate_link") != 0 {
		t.Errorf("handlers ran: create_task %d, delete_task %d, rotate_link %d; want 1, 0, 0",
			s.calls.count("create_task"), s.calls.count("delete_task"), s.calls.count("rotate_link"))
	}
}

// sseData returns the data of each event of a text/event-stream response,
// or the body itself if it is JSON.
func sseData(t *testing.T, resp *http.Response) [][]byte {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return [][]byte{body}
	}
	var out [][]byte
	for line := range strings.Lines(string(body)) {
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
			out = append(out, []byte(data))
		}
	}
	return out
}

// TestHTTPChallengePassesOn feeds the wrapper bodies it must not answer,
// and checks that the next handler gets them byte for byte.
func TestHTTPChallengePassesOn(t *testing.T) {
	r := mcpeffect.NewRegistry()
	for _, tool := range testTools {
		if err := r.Add(tool.name, tool.effect); err != nil {
			t.Fatal(err)
		}
	}
	var got []byte
	next := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got, _ = io.ReadAll(req.Body)
		w.WriteHeader(http.StatusTeapot)
	})
	withToken := auth.RequireBearerToken(verifyTestToken, nil)
	small := withToken(r.Enforcer(nil).Challenge(&mcpeffect.ChallengeOptions{MaxBodyBytes: 200})(next))
	ts := httptest.NewServer(small)
	defer ts.Close()
	noAuth := httptest.NewServer(r.Enforcer(nil).Challenge(nil)(next))
	defer noAuth.Close()

	refused := callBody(1, "delete_task")
	tests := []struct {
		name  string
		url   string
		token string
		body  string
	}{
		{"allowed tool", ts.URL, "full-token", refused},
		{"unclassified tool", ts.URL, "read-token", callBody(1, "no_such_tool")},
		{"other method", ts.URL, "read-token", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"not JSON", ts.URL, "read-token", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task"`},
		{"duplicate method", ts.URL, "read-token", `{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping","params":{"name":"delete_task"}}`},
		{"duplicate name", ts.URL, "read-token", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","name":"get_task"}}`},
		{"method not a string", ts.URL, "read-token", "[" + refused + `,{"jsonrpc":"2.0","id":2,"method":{}}]`},
		{"name not a string", ts.URL, "read-token", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`},
		{"no id", ts.URL, "read-token", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"delete_task"}}`},
		{"null id", ts.URL, "read-token", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"delete_task"}}`},
		{"wrong version", ts.URL, "read-token", `{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"delete_task"}}`},
		{"method in other case", ts.URL, "read-token", `{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"delete_task"}}`},
		{"trailing data", ts.URL, "read-token", refused + `{}`},
		{"empty batch", ts.URL, "read-token", `[]`},
		{"batch with a bad member", ts.URL, "read-token", "[" + refused + `,{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","name":"y"}}]`},
		{"batch with a refused call", ts.URL, "read-token", "[" + refused + "]"},
		{"batch of refused calls", ts.URL, "read-token", "[" + refused + "," + callBody(2, "rotate_link") + "]"},
		{"too long", ts.URL, "read-token", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","arguments":{"pad":"` + strings.Repeat("x", 300) + `"}}}`},
		{"no token", noAuth.URL, "", refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			resp := postJSON(t, tt.url, tt.token, tt.body)
			if resp.StatusCode != http.StatusTeapot {
				t.Fatalf("status %d (%s), want the next handler's", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
			if string(got) != tt.body {
				t.Errorf("next handler read %q, want the body unchanged", got)
			}
		})
	}
	// A refused call with a small body is answered early.
	if resp := postJSON(t, ts.URL, "read-token", refused); resp.StatusCode != http.StatusForbidden {
		t.Errorf("refused call: status %d, want 403", resp.StatusCode)
	}
}

func TestHTTPChallengeCustomScope(t *testing.T) {
	r := mcpeffect.NewRegistry()
	r.Add("delete_task", mcpeffect.Destructive)
	names := mcpeffect.ScopeNames{ReadOnly: "done:read", NonDestructive: "done:write", Full: "done:admin"}
	verify := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{Scopes: []string{"done:write", `bad"scope`}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	h := r.Enforcer(&mcpeffect.MiddlewareOptions{ScopeNames: names}).Challenge(nil)(http.NotFoundHandler())
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(h))
	defer ts.Close()
	resp := postJSON(t, ts.URL, "any", callBody(1, "delete_task"))
	want := `Bearer error="insufficient_scope", scope="done:write done:admin", error_description="a wider scope is needed to call delete_task"`
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || got != want {
		t.Errorf("status %d, WWW-Authenticate %s; want 403 and %s", resp.StatusCode, got, want)
	}
}

// TestHTTPChallengeOnDenied checks that each call the challenge refuses
// is reported to OnDenied with the request's
// context, and that the calls it lets through are not.
func TestHTTPChallengeOnDenied(t *testing.T) {
	r := mcpeffect.NewRegistry()
	for _, tool := range testTools {
		r.Add(tool.name, tool.effect)
	}
	type key struct{}
	var denied []string
	h := r.Enforcer(&mcpeffect.MiddlewareOptions{
		Scope: func(context.Context, mcp.Request) mcpeffect.Scope { return mcpeffect.ReadOnly },
		OnDenied: func(ctx context.Context, d *mcpeffect.DeniedError) {
			denied = append(denied, fmt.Sprintf("%s %v %v %v", d.Tool, d.Granted, d.Required, ctx.Value(key{})))
		},
	}).Challenge(nil)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"refused", callBody(1, "delete_task"), []string{"delete_task read-only full caller"}},
		{"allowed", callBody(1, "get_task"), nil},
		// A batch goes on to the middleware, which refuses and reports
		// each call itself.
		{"batch", "[" + callBody(1, "get_task") + "," + callBody(2, "create_task") + "," + callBody(3, "rotate_link") + "]", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			denied = nil
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			h.ServeHTTP(httptest.NewRecorder(), req.WithContext(context.WithValue(req.Context(), key{}, "caller")))
			if !slices.Equal(denied, c.want) {
				t.Errorf("OnDenied saw %q, want %q", denied, c.want)
			}
		})
	}
}

// FuzzChallenge checks that whatever the body, the wrapper either passes it
// on unchanged or answers 403 with a well-formed challenge, and that it
// answers only a body that is one refused call.
func FuzzChallenge(f *testing.F) {
	for _, s := range []string{
		callBody(1, "delete_task"),
		callBody(1, "get_task"),
		"[" + callBody(1, "get_task") + "," + callBody(2, "create_task") + "]",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/call","params":{"name":"delete_task"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","name":"delete_task"}}`,
		`{"jsonrpc":"2.0","id":{},"method":"tools\/call","params":{"name":"delete\u005ftask"}}`,
		`[[]]`, `{`, "", "null", `"tools/call"`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","arguments":{"a":"` + strings.Repeat("y", 5000) + `"}}}`,
		rpcBody("tools/call", `{"name":"files","arguments":{"action":"delete"}}`),
		rpcBody("tools/call", `{"name":"files","arguments":{"action":"get","\u0041ction":"delete"}}`),
		rpcBody("resources/read", `{"uri":"notes://payroll"}`),
		rpcBody("resources/read", `{"uri":"notes://readme"}`),
		rpcBody("prompts/get", `{"name":"audit_everything"}`),
	} {
		f.Add([]byte(s))
	}
	r := mcpeffect.NewRegistry()
	for _, tool := range testTools {
		r.Add(tool.name, tool.effect)
	}
	// A tool whose effect depends on its arguments, a resource and a
	// prompt that a read-only scope may not read.
	s := mcp.NewServer(&mcp.Implementation{Name: "fuzz", Version: "v1"}, nil)
	mcpeffect.AddToolHandler(s, r, &mcp.Tool{Name: "files", InputSchema: json.RawMessage(`{"type":"object"}`)}, mcpeffect.EffectByArgument("action", resourceEffects), rawHandler)
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://payroll"}, mcpeffect.Full, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil })
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "audit_everything"}, mcpeffect.NonDestructive, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
	var seen []byte
	var reached bool
	h := auth.RequireBearerToken(verifyTestToken, nil)(r.Enforcer(nil).Challenge(&mcpeffect.ChallengeOptions{MaxBodyBytes: 4096})(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		reached = true
		seen, _ = io.ReadAll(req.Body)
	})))
	f.Fuzz(func(t *testing.T, body []byte) {
		seen, reached = nil, false
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer read-token")
		h.ServeHTTP(rec, req)
		if reached {
			if !bytes.Equal(seen, body) {
				t.Fatalf("passed on %q, want %q", seen, body)
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("passed on but answered %d", rec.Code)
			}
			return
		}
		if rec.Code != http.StatusForbidden {
			t.Fatalf("not passed on, status %d", rec.Code)
		}
		if ch := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(ch, `Bearer error="insufficient_scope", scope="openid tools:read `) {
			t.Fatalf("challenge %q", ch)
		}
		// A challenged body is one tools/call, not a batch, of a tool that
		// a read-only scope may not call.
		if len(body) > 4096 || !json.Valid(body) || !refusesSome(r, body) {
			t.Fatalf("challenged a body that holds no refused call: %q", body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("answer is not JSON: %q", rec.Body.Bytes())
		}
	})
}

// refusesSome reports whether body, decoded generously, is one request
// (not a batch) that r refuses to a read-only scope: a tools/call of a
// tool it refuses (for one whose effect depends on its arguments, with
// arguments whose action it refuses), a resources/read or a prompts/get.
func refusesSome(r *mcpeffect.Registry, body []byte) bool {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name      string         `json:"name"`
			URI       string         `json:"uri"`
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	switch m.Method {
	case "resources/read":
		return r.ResourceScope(m.Params.URI) > mcpeffect.ReadOnly
	case "prompts/get":
		return r.PromptScope(m.Params.Name) > mcpeffect.ReadOnly
	case "tools/call":
		if rule, ok := r.Rule(m.Params.Name); ok {
			action, _ := m.Params.Arguments[rule.Argument()].(string)
			e, declared := resourceEffects[action]
			return declared && e != mcpeffect.Read
		}
		_, ok := r.Required(m.Params.Name)
		return ok && !r.Allowed(m.Params.Name, mcpeffect.ReadOnly)
	}
	return false
}
