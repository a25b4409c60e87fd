package mcpeffect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/e2e"
	"github.com/mcpeffect/mcpeffect/internal/testing/nodetest"
	"github.com/mcpeffect/mcpeffect/resolution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The end-to-end tests run the three things a server gets from this
// package beyond one effect per tool (effects that depend on the
// arguments, confirmation the server insists on, every operation scoped)
// and tool resolution, against the server of package internal/testing/e2e: in
// process over in-memory transports, as a program of its own over stdio
// (testdata/e2eserver, built by the test), and over Streamable HTTP, with
// a go-sdk client and with the TypeScript SDK's client.

// An e2eStep is one operation of a scenario and what must come of it.
type e2eStep struct {
	op   string // call, read, prompt, resolve, listTools
	name string // the tool or prompt, or the URI
	args map[string]any
	// want is "ok", "denied" (a DeniedError), "unconfirmed" (a
	// NotConfirmedError) or "invalid" (invalid params); detail is a part
	// of the refusal's message, or for "ok" of what the result shows.
	want, detail string
	// ran is what the handler records when it runs; asked says that a
	// person is asked to confirm.
	ran   string
	asked bool
}

// An e2eScenario is a caller of a scope, whose client answers
// elicitations with elicit ("": it cannot) and declares tool resolution
// or not, making steps in order.
type e2eScenario struct {
	name       string
	scope      mcpeffect.Scope
	elicit     string
	resolution bool
	steps      []e2eStep
}

var e2eScenarios = []e2eScenario{
	{name: "read-only caller", scope: mcpeffect.ReadOnly, steps: []e2eStep{
		{op: "call", name: "pods", args: map[string]any{"action": "get", "name": "web"}, want: "ok", ran: "pods get"},
		{op: "call", name: "pods", args: map[string]any{"action": "delete", "name": "web"}, want: "denied", detail: `tool "pods" is refused: with action="delete", it needs the full scope`},
		{op: "call", name: "pods", args: map[string]any{"action": "GET"}, want: "denied", detail: `action="GET", which it does not declare, the worst case`},
		{op: "call", name: "update_issue", args: map[string]any{"issue": 1, "comment": "ok"}, want: "denied", detail: `tool "update_issue" is refused: whatever its arguments, it needs at least the non-destructive scope`},
		{op: "read", name: "notes://readme", want: "ok", detail: "readme", ran: "read notes://readme"},
		{op: "read", name: "notes://payroll", want: "denied", detail: `resource "notes://payroll" is refused: it needs the full scope`},
		{op: "read", name: "notes://7", want: "denied", detail: `resource "notes://7" is refused: it needs the non-destructive scope`},
		{op: "prompt", name: "summarize", want: "ok", detail: "summarize", ran: "get summarize"},
		{op: "prompt", name: "audit", want: "denied", detail: `prompt "audit" is refused: it needs the full scope`},
	}},
	{name: "caller without a scope", scope: 0, steps: []e2eStep{
		{op: "read", name: "notes://readme", want: "denied", detail: `resource "notes://readme" is refused: it needs the read-only scope`},
		{op: "prompt", name: "summarize", want: "denied", detail: `prompt "summarize" is refused: it needs the read-only scope`},
		// Over HTTP the challenge reads action="get" and names it; the
		// middleware refuses it whatever the arguments.
		{op: "call", name: "pods", args: map[string]any{"action": "get"}, want: "denied", detail: `the read-only scope ("tools:read"), and the caller has no scope`},
	}},
	{name: "non-destructive caller", scope: mcpeffect.NonDestructive, steps: []e2eStep{
		{op: "call", name: "update_issue", args: map[string]any{"issue": 1, "comment": "looks good"}, want: "ok", ran: "update_issue 1"},
		{op: "call", name: "update_issue", args: map[string]any{"issue": 2, "state": "closed"}, want: "denied", detail: `tool "update_issue" is refused: with these arguments, it needs the full scope`},
		{op: "call", name: "pods", args: map[string]any{"action": "create", "name": "web"}, want: "ok", ran: "pods create"},
		{op: "read", name: "notes://7", want: "ok", detail: "note", ran: "read notes://7"},
	}},
	{name: "person accepts", scope: mcpeffect.Full, elicit: "accept", steps: []e2eStep{
		{op: "call", name: "delete_note", args: map[string]any{"id": "n1"}, want: "ok", ran: "delete_note n1", asked: true},
		{op: "call", name: "pods", args: map[string]any{"action": "delete", "name": "web"}, want: "ok", ran: "pods delete", asked: true},
		{op: "call", name: "pods", args: map[string]any{"action": "get", "name": "web"}, want: "ok", ran: "pods get"},
		{op: "call", name: "update_issue", args: map[string]any{"issue": 3, "state": "closed"}, want: "ok", ran: "update_issue 3", asked: true},
	}},
	{name: "person declines", scope: mcpeffect.Full, elicit: "decline", steps: []e2eStep{
		{op: "call", name: "delete_note", args: map[string]any{"id": "n1"}, want: "unconfirmed", detail: `tool "delete_note" was not run: the person declined it`, asked: true},
		{op: "call", name: "pods", args: map[string]any{"action": "list"}, want: "ok", ran: "pods list"},
	}},
	{name: "person cancels", scope: mcpeffect.Full, elicit: "cancel", steps: []e2eStep{
		{op: "call", name: "delete_note", args: map[string]any{"id": "n1"}, want: "unconfirmed", detail: "dismissed the confirmation without accepting", asked: true},
	}},
	{name: "client without elicitation", scope: mcpeffect.Full, steps: []e2eStep{
		{op: "call", name: "delete_note", args: map[string]any{"id": "n1"}, want: "unconfirmed", detail: "the client cannot ask one"},
		{op: "call", name: "pods", args: map[string]any{"action": "create"}, want: "ok", ran: "pods create"},
	}},
	{name: "tool resolution", scope: mcpeffect.ReadOnly, resolution: true, steps: []e2eStep{
		{op: "listTools", want: "ok", detail: "pods"}, // the tools marked resolvable
		{op: "resolve", name: "pods", args: map[string]any{"action": "get"}, want: "ok", detail: `{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`},
		{op: "resolve", name: "pods", args: map[string]any{"action": "delete", "name": "web"}, want: "ok", detail: `{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}`},
		{op: "resolve", name: "update_issue", args: map[string]any{"issue": 1}, want: "invalid", detail: "not a tool this server resolves"},
	}},
}

// tokenFor returns the e2e server's bearer token of scope s.
func tokenFor(s mcpeffect.Scope) string {
	return map[mcpeffect.Scope]string{0: "no-scope", mcpeffect.ReadOnly: "read-token", mcpeffect.NonDestructive: "write-token", mcpeffect.Full: "full-token"}[s]
}

// e2eDir holds the program that buildE2EServer builds; TestMain removes
// it.
var e2eDir string

// buildE2EServer builds testdata/e2eserver once per test binary.
var buildE2EServer = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "mcpeffect-e2e")
	if err != nil {
		return "", err
	}
	e2eDir = dir
	bin := filepath.Join(dir, "e2eserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/e2eserver").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building testdata/e2eserver: %v\n%s", err, out)
	}
	return bin, nil
})

func e2eBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the server with")
	}
	bin, err := buildE2EServer()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// e2eTransport connects a go-sdk client with opts, speaking protocol, to
// an e2e server as a caller of scope.
type e2eTransport struct {
	name     string
	protocol string
	connect  func(t *testing.T, scope mcpeffect.Scope, opts *mcp.ClientOptions, protocol string) *mcp.ClientSession
}

func goClient(t *testing.T, mt mcp.Transport, opts *mcp.ClientOptions, protocol string, resolves bool) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-go", Version: "v1"}, opts)
	if resolves {
		if err := mcp.AddSendingCustomMethod[*resolution.Params, *resolution.Result](c, resolution.Method); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := c.Connect(context.Background(), mt, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func e2eTransports(t *testing.T) []e2eTransport {
	inMemory := func(t *testing.T, scope mcpeffect.Scope, opts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := e2e.NewServer().Connect(mcpeffect.WithConnectionScope(context.Background(), scope), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		return goClient(t, ct, opts, protocol, opts.Capabilities != nil)
	}
	stdio := func(t *testing.T, scope mcpeffect.Scope, opts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
		cmd := exec.Command(e2eBinary(t))
		cmd.Env = append(os.Environ(), "E2E_SCOPE="+scope.String())
		return goClient(t, &mcp.CommandTransport{Command: cmd}, opts, protocol, opts.Capabilities != nil)
	}
	overHTTP := func(stateless bool) func(t *testing.T, scope mcpeffect.Scope, opts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
		return func(t *testing.T, scope mcpeffect.Scope, opts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
			ts := httptest.NewServer(e2e.NewServer().HTTPHandler(stateless, "http://127.0.0.1/.well-known/oauth-protected-resource"))
			t.Cleanup(ts.Close)
			transport := &mcp.StreamableClientTransport{
				Endpoint:   ts.URL,
				HTTPClient: &http.Client{Transport: bearer{tokenFor(scope), http.DefaultTransport}},
			}
			return goClient(t, transport, opts, protocol, opts.Capabilities != nil)
		}
	}
	return []e2eTransport{
		{"in-memory", modernProtocol, inMemory},
		{"in-memory", legacyProtocol, inMemory},
		{"stdio", modernProtocol, stdio},
		{"stdio", legacyProtocol, stdio},
		// go-sdk serves 2026-07-28 over HTTP only statelessly, where the
		// server asks through input requests, and the protocols before it
		// statefully, where it sends elicitation requests.
		{"http-stateless", modernProtocol, overHTTP(true)},
		{"http", legacyProtocol, overHTTP(false)},
	}
}

// TestEndToEndGoClient runs every scenario with a go-sdk client over every
// transport and protocol.
func TestEndToEndGoClient(t *testing.T) {
	for _, tr := range e2eTransports(t) {
		for _, sc := range e2eScenarios {
			t.Run(tr.name+"/"+tr.protocol+"/"+sc.name, func(t *testing.T) {
				opts := &mcp.ClientOptions{}
				var asked []string
				var mu sync.Mutex
				if sc.elicit != "" {
					opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						defer mu.Unlock()
						asked = append(asked, req.Params.Message)
						return &mcp.ElicitResult{Action: sc.elicit}, nil
					}
				}
				if sc.resolution {
					opts.Capabilities = &mcp.ClientCapabilities{}
					opts.Capabilities.AddExtension(resolution.Extension, nil)
				}
				cs := tr.connect(t, sc.scope, opts, tr.protocol)
				if got := cs.InitializeResult().ProtocolVersion; got != tr.protocol {
					t.Fatalf("the session speaks %s", got)
				}
				var ran []string
				for _, st := range sc.steps {
					mu.Lock()
					before := len(asked)
					mu.Unlock()
					got, err := goStep(cs, st)
					mu.Lock()
					wasAsked := len(asked) > before
					mu.Unlock()
					at := fmt.Sprintf("%s %s %v", st.op, st.name, st.args)
					if wasAsked != st.asked {
						t.Errorf("%s: asked %t, want %t", at, wasAsked, st.asked)
					}
					switch st.want {
					case "ok":
						if err != nil || !strings.Contains(got, st.detail) {
							t.Errorf("%s: %q, %v; want a result showing %q", at, got, err, st.detail)
						}
					case "denied":
						if _, ok := mcpeffect.AsDeniedError(err); !ok || !strings.Contains(err.Error(), st.detail) {
							t.Errorf("%s: %v; want a refusal saying %q", at, err, st.detail)
						}
					case "unconfirmed":
						if _, ok := mcpeffect.AsNotConfirmedError(err); !ok || !strings.Contains(err.Error(), st.detail) {
							t.Errorf("%s: %v; want it not confirmed: %q", at, err, st.detail)
						}
					case "invalid":
						if err == nil || !strings.Contains(err.Error(), st.detail) {
							t.Errorf("%s: %v; want invalid params: %q", at, err, st.detail)
						}
					}
					if st.ran != "" {
						ran = append(ran, st.ran)
					}
				}
				if history := goHistory(t, cs, sc.scope); history != nil && strings.Join(history, "\n") != strings.Join(ran, "\n") {
					t.Errorf("handlers ran %q, want %q", history, ran)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, q := range asked {
					if !strings.HasPrefix(q, "Run ") {
						t.Errorf("the person was asked %q", q)
					}
				}
			})
		}
	}
}

// goStep makes st on cs, and returns what its result shows.
func goStep(cs *mcp.ClientSession, st e2eStep) (string, error) {
	ctx := context.Background()
	switch st.op {
	case "call":
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: st.name, Arguments: st.args})
		if err != nil {
			return "", err
		}
		if res.IsError {
			return "", fmt.Errorf("tool error: %v", res.Content)
		}
		return res.Content[0].(*mcp.TextContent).Text, nil
	case "read":
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: st.name})
		if err != nil {
			return "", err
		}
		return res.Contents[0].Text, nil
	case "prompt":
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: st.name})
		if err != nil {
			return "", err
		}
		return res.Messages[0].Content.(*mcp.TextContent).Text, nil
	case "resolve":
		args, _ := json.Marshal(st.args)
		res, err := mcp.CallCustomMethod[*resolution.Params, *resolution.Result](ctx, cs, resolution.Method,
			&resolution.Params{Name: st.name, Arguments: args})
		if err != nil {
			return "", err
		}
		b, _ := json.Marshal(res.Annotations)
		return string(b), nil
	case "listTools":
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return "", err
		}
		var marked []string
		for _, tool := range res.Tools {
			if resolution.Marked(tool) {
				marked = append(marked, tool.Name)
			}
		}
		return strings.Join(marked, ","), nil
	}
	return "", fmt.Errorf("unknown step %q", st.op)
}

// goHistory returns what ran on the server of cs, or nil if the caller's
// scope may not ask (the zero scope, whose scenario runs nothing).
func goHistory(t *testing.T, cs *mcp.ClientSession, scope mcpeffect.Scope) []string {
	t.Helper()
	if scope == 0 {
		return nil
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "history", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if text == "" {
		return []string{}
	}
	return strings.Split(text, "\n")
}

// tsReport is what client.mjs reports of one operation.
type tsReport struct {
	Op      string          `json:"op"`
	Outcome string          `json:"outcome"`
	Name    string          `json:"name"`
	Code    any             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
	Text    string          `json:"text"`
	Asked   []string        `json:"asked"`
}

// nodeClient returns the node command and the directory of client.mjs,
// having installed the client's packages, or skips t where it cannot
// (unless MCPEFFECT_REQUIRE_NODE says it must run): see nodetest.
func nodeClient(t *testing.T) (node, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs node")
	}
	dir = filepath.Join("testdata", "tsclient")
	return nodetest.Packages(t, dir, "node_modules/@modelcontextprotocol/sdk"), dir
}

// TestEndToEndTypeScriptClient runs every scenario with the TypeScript
// SDK's client (1.32.2, which speaks the protocols before 2026-07-28),
// over stdio to the server's own program and over Streamable HTTP behind
// bearer tokens and the challenge.
func TestEndToEndTypeScriptClient(t *testing.T) {
	node, dir := nodeClient(t)
	bin := e2eBinary(t)
	for _, transport := range []string{"stdio", "http"} {
		for _, sc := range e2eScenarios {
			t.Run(transport+"/"+sc.name, func(t *testing.T) {
				config := map[string]any{"elicit": sc.elicit, "resolution": sc.resolution}
				if sc.elicit == "" {
					delete(config, "elicit")
				}
				if transport == "stdio" {
					config["command"] = bin
					config["env"] = map[string]string{"E2E_SCOPE": sc.scope.String()}
				} else {
					ts := httptest.NewServer(e2e.NewServer().HTTPHandler(false, "http://127.0.0.1/.well-known/oauth-protected-resource"))
					t.Cleanup(ts.Close)
					config["url"] = ts.URL
					config["token"] = tokenFor(sc.scope)
				}
				var ops []map[string]any
				for _, st := range sc.steps {
					op := map[string]any{"op": st.op, "arguments": st.args}
					if st.op == "read" {
						op["uri"] = st.name
					} else {
						op["name"] = st.name
					}
					ops = append(ops, op)
				}
				if sc.scope != 0 {
					ops = append(ops, map[string]any{"op": "call", "name": "history", "arguments": map[string]any{}})
				}
				config["ops"] = ops
				raw, _ := json.Marshal(config)
				out, err := exec.Command(node, filepath.Join(dir, "client.mjs"), string(raw)).Output()
				if err != nil {
					t.Fatalf("node client: %v", err)
				}
				var reports []tsReport
				if err := json.Unmarshal(out, &reports); err != nil || len(reports) != len(ops) {
					t.Fatalf("node client printed %s (%v), want %d reports", out, err, len(ops))
				}
				var ran []string
				for i, st := range sc.steps {
					r := reports[i]
					at := fmt.Sprintf("%s %s %v", st.op, st.name, st.args)
					if (len(r.Asked) > 0) != st.asked {
						t.Errorf("%s: asked %q, want asked %t", at, r.Asked, st.asked)
					}
					if msg := tsErrorCheck(r, st); msg != "" {
						t.Errorf("%s: %s (report %+v)", at, msg, r)
					}
					if st.ran != "" {
						ran = append(ran, st.ran)
					}
				}
				if sc.scope != 0 {
					if h := reports[len(reports)-1]; h.Outcome != "result" || h.Text != strings.Join(ran, "\n") {
						t.Errorf("handlers ran %q, want %q", h.Text, ran)
					}
				}
			})
		}
	}
}

// tsErrorCheck returns what is wrong with r as the outcome of st, or "".
func tsErrorCheck(r tsReport, st e2eStep) string {
	// A challenge's message holds the JSON-RPC error as JSON, its quotes
	// escaped.
	message := strings.ReplaceAll(r.Message, `\"`, `"`)
	code := fmt.Sprint(r.Code)
	switch st.want {
	case "ok":
		if r.Outcome != "result" {
			return "want a result"
		}
		shows := r.Text
		switch st.op {
		case "resolve":
			var res resolution.Result
			if err := json.Unmarshal(r.Data, &res); err != nil || res.ResultType != "complete" || res.Name != st.name {
				return fmt.Sprintf("not a resolution of %s: %v", st.name, err)
			}
			b, _ := json.Marshal(res.Annotations)
			shows = string(b)
		case "listTools":
			var tools []*mcp.Tool
			if err := json.Unmarshal(r.Data, &tools); err != nil {
				return err.Error()
			}
			var marked []string
			for _, tool := range tools {
				if resolution.Marked(tool) {
					marked = append(marked, tool.Name)
				}
			}
			shows = strings.Join(marked, ",")
		}
		if !strings.Contains(shows, st.detail) {
			return fmt.Sprintf("the result shows %q, want %q", shows, st.detail)
		}
	case "denied":
		// Over HTTP the challenge answers with 403 where it is certain;
		// otherwise the middleware with the JSON-RPC error.
		if r.Outcome != "error" || (code != "-32050" && code != "403") || !strings.Contains(message, st.detail) {
			return fmt.Sprintf("want a refusal (-32050 or 403) saying %q", st.detail)
		}
	case "unconfirmed":
		if r.Outcome != "error" || code != "-32051" || !strings.Contains(message, st.detail) {
			return fmt.Sprintf("want it not confirmed (-32051): %q", st.detail)
		}
	case "invalid":
		if r.Outcome != "error" || code != "-32602" || !strings.Contains(message, st.detail) {
			return fmt.Sprintf("want invalid params (-32602): %q", st.detail)
		}
	}
	return ""
}
