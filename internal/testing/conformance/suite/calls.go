//lint:file-ignore SA1019 the client answers sampling, which 2026-07-28 deprecates (SEP-2577) and the servers still use.

package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The calls of every tool, resource and prompt of a conformance server
// (go-sdk's or mcp-go's) through go-sdk's client, with a read-only
// caller and then a full one: the refusals the catalog says, and nothing
// else.

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(req)
}

// clientOptions make a client that can answer the server's questions:
// a person who accepts, a model that answers.
var ClientOptions = &mcp.ClientOptions{
	ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "name": "ada", "ok": true, "context": "a test", "color": "blue"}}, nil
	},
	CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "Paris"}}, nil
	},
}

// Connect opens a session to url with token, as a client of ClientOptions.
func Connect(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "readonly-test", Version: "v1"}, ClientOptions)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// arguments are what the tools that need arguments are called with.
var arguments = map[string]any{
	"test_sampling":            map[string]any{"prompt": "What is the capital of France?"},
	"test_elicitation":         map[string]any{"message": "Who are you?"},
	"json_schema_2020_12_tool": map[string]any{"name": "ada", "contactMethod": "email", "email": "ada@example.com"},
	"test_x_mcp_header":        map[string]any{"region": "eu"},
}

// asksClient are the tools that send a request to the client as they run.
var asksClient = map[string]bool{
	"test_sampling":                     true,
	"test_elicitation":                  true,
	"test_elicitation_sep1034_defaults": true,
	"test_elicitation_sep1330_enums":    true,
}

// refusal checks that err is the refusal of a caller with a read-only token
// that needs need: a JSON-RPC error of code CodeDenied whose data is a
// DeniedError that names what was refused.
func refusal(err error, need mcpeffect.Scope) (*mcpeffect.DeniedError, error) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcpeffect.CodeDenied {
		return nil, fmt.Errorf("error %v, want a JSON-RPC error of code %d", err, mcpeffect.CodeDenied)
	}
	d, ok := mcpeffect.AsDeniedError(err)
	if !ok {
		return nil, fmt.Errorf("error %v holds no DeniedError", err)
	}
	if d.Granted != mcpeffect.ReadOnly || d.Required != need || !d.Classified {
		return nil, fmt.Errorf("refusal %+v: want granted read-only, required %v", d, need)
	}
	return d, nil
}

// challenged checks that the HTTP challenge answers the JSON-RPC request
// body with the step-up challenge for the scope need, before any session:
// the early answer agrees with the check that counts.
func challenged(t *testing.T, url, token, body string, need mcpeffect.Scope) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	want := fmt.Sprintf(`scope="tools:read %s"`, mcpeffect.ScopeNames{}.Name(need))
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || !strings.Contains(got, `error="insufficient_scope"`) || !strings.Contains(got, want) {
		t.Errorf("%s: status %d, WWW-Authenticate %q; want 403 and insufficient_scope with %s", body, resp.StatusCode, got, want)
	}
	var msg struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if err := json.Unmarshal(b, &msg); err != nil || msg.Error == nil || msg.Error.Code != mcpeffect.CodeDenied {
		t.Errorf("%s: challenge body %s, want a JSON-RPC error of code %d", body, b, mcpeffect.CodeDenied)
	}
}

// RPC returns the JSON-RPC request of method with params, id 1.
func RPC(method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return string(b)
}

// ReadOnlyCalls calls every tool, resource and prompt of the server that
// r classifies on cs, the session of a read-only caller: exactly those
// whose effect or scope needs more, as r says and the catalog too, are
// refused, with a DeniedError, as the JSON-RPC error of code CodeDenied;
// everything else works. Where url is not "", each refusal is also asked
// of the HTTP challenge there, with token, which must answer it with the
// step-up challenge. The tools of broken (tool to reason) are allowed but
// cannot work between the server's SDK and go-sdk's client: each call of
// one must fail, and not by a refusal. It returns what was refused.
func ReadOnlyCalls(t *testing.T, cs *mcp.ClientSession, r *mcpeffect.Registry, url, token string, broken map[string]string) []string {
	t.Helper()
	ctx := context.Background()
	// From 2026-07-28, a tool cannot send a request to the client as it
	// runs: the SDK fails the request, and the tool, which ran, says so
	// in its result.
	noRequests := true
	if init := cs.InitializeResult(); init != nil && init.ProtocolVersion < "2026-07-28" {
		noRequests = false
	}
	challenge := func(body string, need mcpeffect.Scope) {
		t.Helper()
		if url != "" {
			challenged(t, url, token, body, need)
		}
	}

	// A client lists the tools first, and so learns which
	// arguments to mirror into headers (SEP-2243).
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var denied []string
	for name, effect := range r.All() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: arguments[name]})
		if reason, ok := broken[name]; ok {
			if _, refused := mcpeffect.AsDeniedError(err); err == nil || refused || !r.Allowed(name, mcpeffect.ReadOnly) {
				t.Errorf("tool %s: %v, want it allowed and failing, as it does (%s)", name, err, reason)
			} else {
				t.Logf("tool %s: %v, as expected (%s)", name, err, reason)
			}
			continue
		}
		if r.Allowed(name, mcpeffect.ReadOnly) {
			if err != nil {
				t.Errorf("tool %s (%v): %v, want it to run", name, effect, err)
			} else if res.IsError != (name == "test_error_handling" || noRequests && asksClient[name]) {
				t.Errorf("tool %s (%v): IsError %t: %s", name, effect, res.IsError, resultText(res))
			} else if noRequests && asksClient[name] && !strings.Contains(resultText(res), " failed: ") {
				t.Errorf("tool %s: %s, want it to say that its request failed", name, resultText(res))
			}
			continue
		}
		denied = append(denied, "tool "+name)
		need, _ := r.Required(name)
		if d, err := refusal(err, need); err != nil {
			t.Errorf("tool %s (%v): %v", name, effect, err)
		} else if d.Tool != name {
			t.Errorf("tool %s: refusal names tool %q", name, d.Tool)
		}
		challenge(RPC("tools/call", map[string]any{"name": name, "arguments": map[string]any{}}), need)
	}
	// A refused trigger did not run: the lists did not change.
	if tools, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	} else if slices.ContainsFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == "transient_tool" }) {
		t.Errorf("transient_tool is listed: the refused test_trigger_tool_change ran")
	}

	resources, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uris := []string{}
	for _, r := range resources.Resources {
		uris = append(uris, r.URI)
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tmpl := range templates.ResourceTemplates {
		uris = append(uris, strings.ReplaceAll(tmpl.URITemplate, "{id}", "7"))
	}
	for _, uri := range uris {
		need := r.ResourceScope(uri)
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if need == mcpeffect.ReadOnly {
			if err != nil {
				t.Errorf("resource %s: %v, want it read", uri, err)
			}
			continue
		}
		denied = append(denied, "resource "+uri)
		if d, err := refusal(err, need); err != nil {
			t.Errorf("resource %s: %v", uri, err)
		} else if d.Resource != uri {
			t.Errorf("resource %s: refusal names resource %q", uri, d.Resource)
		}
		challenge(RPC("resources/read", map[string]any{"uri": uri}), need)
	}

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts.Prompts {
		args := map[string]string{}
		for _, a := range p.Arguments {
			args[a.Name] = "test://static-text"
		}
		need := r.PromptScope(p.Name)
		_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: args})
		if need == mcpeffect.ReadOnly {
			if err != nil {
				t.Errorf("prompt %s: %v, want it got", p.Name, err)
			}
			continue
		}
		denied = append(denied, "prompt "+p.Name)
		if d, err := refusal(err, need); err != nil {
			t.Errorf("prompt %s: %v", p.Name, err)
		} else if d.Prompt != p.Name {
			t.Errorf("prompt %s: refusal names prompt %q", p.Name, d.Prompt)
		}
		challenge(RPC("prompts/get", map[string]any{"name": p.Name, "arguments": args}), need)
	}

	// What the server declares needs more than read-only, and
	// nothing else, was refused.
	slices.Sort(denied)
	want := catalog.ReadOnlyRefused()
	if !slices.Equal(denied, want) {
		t.Errorf("refused %q, want %q", denied, want)
	}
	return denied

}

// FullCalls checks that cs, the session of a full-scope caller, runs
// what a read-only caller was refused.
func FullCalls(t *testing.T, full *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	// The full scope runs what read-only could not.
	for _, name := range []string{"test_trigger_tool_change", "test_trigger_prompt_change"} {
		if _, err := full.CallTool(ctx, &mcp.CallToolParams{Name: name}); err != nil {
			t.Errorf("full scope: %s: %v", name, err)
		}
	}
	if _, err := full.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-binary"}); err != nil {
		t.Errorf("full scope: static-binary: %v", err)
	}
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
