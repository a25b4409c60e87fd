package exampletest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TasksOverHTTP holds bin, the program of examples/http or of
// examples/mcpgo (the same server on go-sdk and on mcp-go), to what their
// READMEs say, run with a token of each scope: its protected resource
// metadata names the resource and its scopes; a request without a valid
// token gets 401 and where the metadata is; a call that a token's scope
// does not allow gets 403 and the step-up challenge; through go-sdk's
// client, the hints are those of each tool's effect (mcpeffecttest's
// CheckClient), and each token runs what its scope allows and is refused
// the rest;
// and the program refuses to start without a token, or with one token for
// two scopes.
func TasksOverHTTP(t *testing.T, bin string) {
	readToken, writeToken, fullToken := rand.Text(), rand.Text(), rand.Text()
	cmd := exec.Command(bin, "-http", "127.0.0.1:0")
	cmd.Env = append(withoutTokens(), "READ_TOKEN="+readToken, "WRITE_TOKEN="+writeToken, "FULL_TOKEN="+fullToken)
	endpoint := Serve(t, cmd)
	base := strings.TrimSuffix(endpoint, "/mcp")

	resp, err := http.Get(base + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource string   `json:"resource"`
		Scopes   []string `json:"scopes_supported"`
	}
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil || meta.Resource != endpoint || !slices.Equal(meta.Scopes, []string{"tools:read", "tools:write", "tools:destructive"}) {
		t.Errorf("metadata %+v (%v), want the resource %s and its three scopes", meta, err, endpoint)
	}

	post := func(token, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, token := range []string{"", "wrong", readToken[:len(readToken)-1]} {
		resp := post(token, initialize)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+base+`/.well-known/oauth-protected-resource"`) {
			t.Errorf("token %q: %s, WWW-Authenticate %q; want 401 and the metadata's URL", token, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
	}
	for _, tc := range []struct {
		token, tool, scope string
	}{
		// The scope needed beside the token's own (see ChallengeOptions).
		{readToken, "add_task", `scope="tools:read tools:write"`},
		{readToken, "delete_task", `scope="tools:read tools:destructive"`},
		{writeToken, "delete_task", `scope="tools:write tools:destructive"`},
	} {
		resp := post(tc.token, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tc.tool+`","arguments":{"id":"1","title":"x"}}}`)
		challenge := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) || !strings.Contains(challenge, tc.scope) {
			t.Errorf("%s with a token of less: %s, WWW-Authenticate %q; want 403 and the step-up challenge with %s", tc.tool, resp.Status, challenge, tc.scope)
		}
	}

	// call returns the result's structured content as JSON, or else its
	// text, marked if the tool reports an error.
	call := func(token, tool string, args map[string]any) (string, error) {
		t.Helper()
		tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer(token), Timeout: 30 * time.Second}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v1"}, nil).Connect(t.Context(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
		switch {
		case err != nil:
			return "", err
		case res.IsError && len(res.Content) == 1:
			return "error: " + res.Content[0].(*mcp.TextContent).Text, nil
		case res.StructuredContent != nil:
			data, err := json.Marshal(res.StructuredContent)
			return string(data), err
		case len(res.Content) == 1:
			return res.Content[0].(*mcp.TextContent).Text, nil
		}
		return "", nil
	}
	// The hints it advertises are those of the effects the README gives
	// each tool, and below full each scope is refused what it may not
	// call, as mcpeffecttest proves it over HTTP, a token a scope.
	r := mcpeffect.NewRegistry()
	if err := r.AddAll(map[string]mcpeffect.Effect{
		"get_task":    mcpeffect.Read,
		"add_task":    mcpeffect.Write,
		"delete_task": mcpeffect.Destructive | mcpeffect.Idempotent,
	}); err != nil {
		t.Fatal(err)
	}
	tokens := map[mcpeffect.Scope]string{mcpeffect.ReadOnly: readToken, mcpeffect.NonDestructive: writeToken, mcpeffect.Full: fullToken}
	mcpeffecttest.CheckClient(t, func(ctx context.Context) (*mcp.ClientSession, error) {
		scope, ok := mcpeffecttest.SessionScope(ctx)
		if !ok {
			return nil, errors.New("no scope to connect with")
		}
		tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer(tokens[scope]), Timeout: 30 * time.Second}}
		return mcp.NewClient(&mcp.Implementation{Name: "check", Version: "v1"}, nil).Connect(ctx, tr, nil)
	}, r)

	milk := map[string]any{"title": "Buy milk"}
	one := map[string]any{"id": "1"}
	for i, tc := range []struct {
		token, tool string
		args        map[string]any
		want        string // the result, or "refused"
	}{
		{readToken, "add_task", milk, "refused"},
		{writeToken, "add_task", milk, `{"id":"1","title":"Buy milk"}`},
		{readToken, "get_task", one, `{"id":"1","title":"Buy milk"}`},
		{writeToken, "delete_task", one, "refused"},
		{readToken, "get_task", one, `{"id":"1","title":"Buy milk"}`},
		{fullToken, "delete_task", one, "deleted 1"},
		{readToken, "get_task", one, `error: no task "1"`},
	} {
		got, err := call(tc.token, tc.tool, tc.args)
		if tc.want == "refused" {
			if err == nil || !strings.Contains(err.Error(), "Forbidden") {
				t.Errorf("call %d, %s: %q, %v; want it refused with 403", i, tc.tool, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("call %d, %s: %q, %v; want %q", i, tc.tool, got, err, tc.want)
		}
	}

	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, "no tokens: set READ_TOKEN, WRITE_TOKEN or FULL_TOKEN"},
		{[]string{"READ_TOKEN=same", "FULL_TOKEN=same"}, "FULL_TOKEN is the same as another token"},
	} {
		cmd := exec.Command(bin, "-http", "127.0.0.1:0")
		cmd.Env = append(withoutTokens(), tc.env...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("started with %q: %v\n%s; want it to exit saying %q", tc.env, err, out, tc.want)
		}
	}
}

// withoutTokens is the environment without the examples' tokens.
func withoutTokens() []string {
	return slices.DeleteFunc(os.Environ(), func(v string) bool {
		return strings.HasPrefix(v, "READ_TOKEN=") || strings.HasPrefix(v, "WRITE_TOKEN=") || strings.HasPrefix(v, "FULL_TOKEN=")
	})
}

// bearer sends its token with every request.
type bearer string

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(req)
}
