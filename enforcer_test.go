package mcpeffect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerScope is the header from which the scope function of
// TestEnforcerOneDecision reads the caller's scope.
const headerScope = "X-Test-Scope"

type headerTransport struct {
	scope string
	base  http.RoundTripper
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(headerScope, h.scope)
	return h.base.RoundTrip(req)
}

// TestEnforcerOneDecision configures custom scope names and a custom
// scope function once, in one Enforcer, and holds every way into it to
// the same decision, for every operation and every scope: the
// middleware (called by a real client over Streamable HTTP), the HTTP
// challenge in front of the same server, and Decide, which an adapter for
// another SDK calls. Where the challenge answers, its refusal is the
// middleware's, field for field; it passes on only what it documents (a
// tool the registry does not know).
func TestEnforcerOneDecision(t *testing.T) {
	names := mcpeffect.ScopeNames{ReadOnly: "repo:read", NonDestructive: "repo:write", Full: "repo:admin"}
	var mu sync.Mutex
	var reported []string
	opts := &mcpeffect.MiddlewareOptions{
		ScopeNames: names,
		// The scope comes from a header, read through the request as
		// go-sdk gives it to the middleware, and as the challenge builds
		// it from the HTTP request.
		Scope: func(_ context.Context, req mcp.Request) mcpeffect.Scope {
			extra := req.GetExtra()
			if extra == nil || extra.Header == nil {
				return 0
			}
			s, _ := mcpeffect.ParseScope(extra.Header.Get(headerScope))
			return s
		},
		OnDenied: func(_ context.Context, d *mcpeffect.DeniedError) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, d.Error())
		},
	}
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "one-decision", Version: "v1"}, nil)
	ran := func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	}
	for _, tool := range []struct {
		name   string
		effect mcpeffect.Effect
	}{
		{"get_task", mcpeffect.Read},
		{"search_web", mcpeffect.Read | mcpeffect.OpenWorld},
		{"create_task", mcpeffect.Write},
		{"tag_task", mcpeffect.Idempotent},
		{"delete_task", mcpeffect.Destructive},
	} {
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: tool.name}, tool.effect, ran)
	}
	mcpeffect.AddToolHandler(s, r, &mcp.Tool{Name: "tasks", InputSchema: json.RawMessage(`{"type":"object"}`)},
		mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{"get": mcpeffect.Read, "add": mcpeffect.Write, "delete": mcpeffect.Destructive}),
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	// A tool on the server that the registry does not know.
	s.AddTool(&mcp.Tool{Name: "unclassified", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "x"}}}, nil
	}
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://readme"}, mcpeffect.ReadOnly, read)
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://payroll"}, mcpeffect.Full, read)
	mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "notes://{id}"}, mcpeffect.NonDestructive, read)
	prompt := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "x"}}}}, nil
	}
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "hello"}, mcpeffect.ReadOnly, prompt)
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "audit"}, mcpeffect.Full, prompt)

	e := r.Enforcer(opts)
	s.AddReceivingMiddleware(e.Middleware())
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	plain := httptest.NewServer(streamable)
	defer plain.Close()
	challenged := httptest.NewServer(e.Challenge(nil)(streamable))
	defer challenged.Close()

	type op struct {
		method, name, uri string
		args              map[string]any
	}
	ops := []op{
		{"tools/call", "get_task", "", map[string]any{"id": "1"}},
		{"tools/call", "search_web", "", map[string]any{"id": "1"}},
		{"tools/call", "create_task", "", map[string]any{"id": "1"}},
		{"tools/call", "tag_task", "", map[string]any{"id": "1"}},
		{"tools/call", "delete_task", "", map[string]any{"id": "1"}},
		{"tools/call", "tasks", "", map[string]any{"action": "get"}},
		{"tools/call", "tasks", "", map[string]any{"action": "add"}},
		{"tools/call", "tasks", "", map[string]any{"action": "delete"}},
		{"tools/call", "tasks", "", map[string]any{"action": "purge"}},
		{"tools/call", "unclassified", "", map[string]any{}},
		{"resources/read", "", "notes://readme", nil},
		{"resources/read", "", "notes://payroll", nil},
		{"resources/read", "", "notes://42", nil},
		{"prompts/get", "hello", "", nil},
		{"prompts/get", "audit", "", nil},
	}
	ctx := context.Background()
	for _, scope := range []mcpeffect.Scope{0, mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full} {
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v1"}, nil)
		session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: plain.URL,
			HTTPClient: &http.Client{Transport: headerTransport{scope.String(), http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		for _, o := range ops {
			t.Run(fmt.Sprintf("%s/%s%s%v", scope, o.name, o.uri, o.args["action"]), func(t *testing.T) {
				// The middleware, through a real client.
				var err error
				switch o.method {
				case "tools/call":
					_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: o.name, Arguments: o.args})
				case "resources/read":
					_, err = session.ReadResource(ctx, &mcp.ReadResourceParams{URI: o.uri})
				case "prompts/get":
					_, err = session.GetPrompt(ctx, &mcp.GetPromptParams{Name: o.name})
				}
				mw, mwDenied := mcpeffect.AsDeniedError(err)
				if err != nil && !mwDenied {
					t.Fatalf("middleware: %v", err)
				}

				// Decide, as an adapter for another SDK calls it.
				args, _ := json.Marshal(o.args)
				dec := e.Decide(ctx, mcpeffect.Operation{Method: o.method, Name: o.name, URI: o.uri, Arguments: args},
					mcpeffect.Caller{Scope: scope, Scoped: true})
				if mwDenied != (dec.Denied != nil) || mwDenied && !sameRefusal(mw, dec.Denied) {
					t.Errorf("middleware refused %v (%+v), Decide %+v", mwDenied, mw, dec.Denied)
				}

				// The challenge, in front of the same server.
				params := map[string]any{"name": o.name, "arguments": o.args}
				if o.uri != "" {
					params = map[string]any{"uri": o.uri}
				}
				body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": o.method, "params": params})
				req, _ := http.NewRequest(http.MethodPost, challenged.URL, strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set(headerScope, scope.String())
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden {
					if mwDenied && mw.Classified {
						t.Errorf("the challenge passed on a call that the middleware refuses: %v", mw)
					}
					return
				}
				var answer struct {
					Error struct {
						Data mcpeffect.DeniedError `json:"data"`
					} `json:"error"`
				}
				if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
					t.Fatal(err)
				}
				if !mwDenied || !sameRefusal(&answer.Error.Data, mw) {
					t.Errorf("the challenge refused %+v, the middleware %+v", answer.Error.Data, mw)
				}
				if ch := resp.Header.Get("WWW-Authenticate"); !strings.Contains(ch, `scope="`+names.Name(mw.Required)+`"`) {
					t.Errorf("challenge %s, want the scope %s of the custom names", ch, names.Name(mw.Required))
				}
			})
		}
	}
	// Every refusal reached OnDenied, whichever way in refused it.
	mu.Lock()
	defer mu.Unlock()
	if len(reported) == 0 {
		t.Error("OnDenied saw no refusal")
	}
	for _, msg := range reported {
		if !strings.Contains(msg, "repo:") && !strings.Contains(msg, "no effect classification") {
			t.Errorf("a refusal without the custom scope names: %s", msg)
		}
	}
}

// TestDecideOutcomes holds Decide, the decision an adapter calls, to its
// edges: the connection's cap on the context, a caller nothing gave a
// scope, confirmation, an operation it does not know.
func TestDecideOutcomes(t *testing.T) {
	r := mcpeffect.NewRegistry()
	r.Add("get_task", mcpeffect.Read)
	r.Add("delete_task", mcpeffect.Destructive)
	e := r.Enforcer(&mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{}})
	ctx := context.Background()
	full := mcpeffect.Caller{Scope: mcpeffect.Full, Scoped: true}
	call := func(name string) mcpeffect.Operation {
		return mcpeffect.Operation{Method: "tools/call", Name: name, Arguments: json.RawMessage(`{}`)}
	}
	if d := e.Decide(ctx, call("delete_task"), full); !d.Allowed() || !d.Confirm || d.Effect != mcpeffect.Destructive {
		t.Errorf("full caller, destructive tool: %+v, want allowed once confirmed", d)
	}
	if d := e.Decide(ctx, call("get_task"), full); !d.Allowed() || d.Confirm {
		t.Errorf("full caller, read: %+v, want allowed without confirmation", d)
	} else if s := mcpeffect.CallerScopeFromContext(mcpeffect.WithDecision(ctx, d)); s != mcpeffect.Full {
		t.Errorf("WithDecision of an allowed call carries %s, want full", s)
	}
	capped := mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly)
	if d := e.Decide(capped, call("delete_task"), full); d.Allowed() || d.Denied.Granted != mcpeffect.ReadOnly || d.Scope != mcpeffect.ReadOnly {
		t.Errorf("capped to read-only: %+v, want refused", d)
	}
	d := e.Decide(ctx, call("get_task"), mcpeffect.Caller{})
	if d.Allowed() || !d.Denied.Unscoped {
		t.Errorf("a caller with no scope: %+v, want refused as unscoped", d)
	}
	if s := mcpeffect.CallerScopeFromContext(mcpeffect.WithDecision(ctx, d)); s != 0 {
		t.Errorf("WithDecision of a refused call carries %s, want none", s)
	}
	code, msg, data := d.Denied.JSONRPCError()
	if code != mcpeffect.CodeDenied || msg != d.Denied.Error() || !json.Valid(data) {
		t.Errorf("JSONRPCError = %d, %q, %s", code, msg, data)
	}
	if d := e.Decide(capped, call("get_task"), mcpeffect.Caller{}); !d.Allowed() {
		t.Errorf("no caller scope but a read-only connection: %+v, want allowed", d)
	}
	if d := e.Decide(ctx, mcpeffect.Operation{Method: "tools/delete", Name: "get_task"}, full); d.Allowed() {
		t.Errorf("an unknown method: %+v, want refused", d)
	}
	// A rule of the general form over a typed input: Decide decodes the
	// raw arguments into it, as a server on another SDK would.
	s := mcp.NewServer(&mcp.Implementation{Name: "rules", Version: "v1"}, nil)
	type issue struct {
		Comment string `json:"comment,omitempty"`
		State   string `json:"state,omitempty"`
	}
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "update_issue"}, mcpeffect.EffectByFunc(func(in issue) mcpeffect.Effect {
		if in.State != "" {
			return mcpeffect.Destructive
		}
		return mcpeffect.Write
	}, mcpeffect.Write, mcpeffect.Destructive), func(context.Context, *mcp.CallToolRequest, issue) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	writer := mcpeffect.Caller{Scope: mcpeffect.NonDestructive, Scoped: true}
	for _, c := range []struct {
		args    string
		allowed bool
		effect  mcpeffect.Effect
	}{
		{`{"comment":"looks good"}`, true, mcpeffect.Write},
		{`{"state":"closed"}`, false, mcpeffect.Destructive},
		{`{"state":7}`, false, mcpeffect.Destructive}, // not its input: the worst case
		{`not json`, false, mcpeffect.Destructive},
	} {
		d := e.Decide(ctx, mcpeffect.Operation{Method: "tools/call", Name: "update_issue", Arguments: json.RawMessage(c.args)}, writer)
		if d.Allowed() != c.allowed || d.Effect != c.effect {
			t.Errorf("update_issue %s by a non-destructive caller: %+v, want allowed %t, effect %s", c.args, d, c.allowed, c.effect)
		}
	}
	if q := e.ConfirmQuestion(ctx, &mcpeffect.ConfirmCall{Tool: "delete_task", Effect: mcpeffect.Destructive, Arguments: json.RawMessage(`{"id":"\u202e1"}`)}); !strings.Contains(q, `delete_task`) || strings.ContainsRune(q, '\u202e') {
		t.Errorf("question %q, want the tool named and U+202E escaped", q)
	}
}

// TestChallengeConnectionCap: the challenge applies the cap of a scope
// set on the request's context with WithConnectionScope, as the
// middleware does, so that a full token on a read-only connection is
// challenged early, and not only refused later.
func TestChallengeConnectionCap(t *testing.T) {
	r := mcpeffect.NewRegistry()
	r.Add("delete_task", mcpeffect.Destructive)
	r.Add("get_task", mcpeffect.Read)
	var reached int
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached++ })
	capped := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			h.ServeHTTP(w, req.WithContext(mcpeffect.WithConnectionScope(req.Context(), mcpeffect.ReadOnly)))
		})
	}
	ts := httptest.NewServer(auth.RequireBearerToken(verifyTestToken, nil)(capped(r.Enforcer(nil).Challenge(nil)(next))))
	defer ts.Close()
	if resp := postJSON(t, ts.URL, "full-token", callBody(1, "delete_task")); resp.StatusCode != http.StatusForbidden || reached != 0 {
		t.Errorf("a full token on a read-only connection, destructive call: status %d, reached %d; want 403", resp.StatusCode, reached)
	}
	if resp := postJSON(t, ts.URL, "full-token", callBody(2, "get_task")); resp.StatusCode == http.StatusForbidden || reached != 1 {
		t.Errorf("a read on the same connection: status %d, reached %d; want it passed on", resp.StatusCode, reached)
	}
}

// TestDecideCompletion holds Decide's completion/complete to the scope of
// what it completes, as the middleware decides it: a prompt's, or the
// wider of a resource template's and a resource's.
func TestDecideCompletion(t *testing.T) {
	r := mcpeffect.NewRegistry()
	if err := r.DeclarePrompt("secret_prompt", mcpeffect.Full); err != nil {
		t.Fatal(err)
	}
	if err := r.DeclareResourceTemplate("test://secret/{id}", mcpeffect.NonDestructive); err != nil {
		t.Fatal(err)
	}
	e := r.Enforcer(nil)
	for _, tt := range []struct {
		name       string
		op         mcpeffect.Operation
		need       mcpeffect.Scope
		prompt, rs string
	}{
		{"a prompt that needs full", mcpeffect.Operation{Method: "completion/complete", Name: "secret_prompt"}, mcpeffect.Full, "secret_prompt", ""},
		{"a prompt declared by no one", mcpeffect.Operation{Method: "completion/complete", Name: "other"}, mcpeffect.ReadOnly, "other", ""},
		{"a template that needs non-destructive", mcpeffect.Operation{Method: "completion/complete", URI: "test://secret/{id}"}, mcpeffect.NonDestructive, "", "test://secret/{id}"},
		{"a resource declared by no one", mcpeffect.Operation{Method: "completion/complete", URI: "test://plain"}, mcpeffect.ReadOnly, "", "test://plain"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for s := mcpeffect.Scope(0); s <= mcpeffect.Full; s++ {
				d := e.Decide(context.Background(), tt.op, mcpeffect.Caller{Scope: s, Scoped: true})
				if want := s >= tt.need; d.Allowed() != want {
					t.Errorf("scope %v: allowed %t, want %t", s, d.Allowed(), want)
				} else if !want && (d.Denied.Required != tt.need || d.Denied.Prompt != tt.prompt || d.Denied.Resource != tt.rs) {
					t.Errorf("scope %v: refusal %+v, want it to name %q %q and need %v", s, d.Denied, tt.prompt, tt.rs, tt.need)
				}
			}
		})
	}
}
