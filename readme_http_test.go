package mcpeffect_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestREADMEHTTPExample holds the README's HTTP server to what it says:
// the block is testdata/readmehttp/main.go, byte for byte, and built and
// run, it serves its protected resource metadata, refuses a request
// without a token (401), answers a call that a read-only token may not
// make with the step-up challenge (403), and runs what each token allows.
func TestREADMEHTTPExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile(filepath.Join("testdata", "readmehttp", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, append(append([]byte("```go\n"), program...), "```"...)) {
		t.Fatal("README.md has no Go block that is testdata/readmehttp/main.go")
	}

	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the example with")
	}
	bin := filepath.Join(t.TempDir(), "readmehttp")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./testdata/readmehttp").CombinedOutput(); err != nil {
		t.Fatalf("building the README's HTTP example: %v\n%s", err, out)
	}
	readToken, fullToken := rand.Text(), rand.Text()
	cmd := exec.Command(bin, "-http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "READ_TOKEN="+readToken, "FULL_TOKEN="+fullToken)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	var endpoint string
	for endpoint == "" && lines.Scan() {
		if _, url, ok := strings.Cut(lines.Text(), "serving MCP at "); ok {
			endpoint = url
		}
	}
	if endpoint == "" {
		t.Fatalf("the server did not say where it serves: %v", lines.Err())
	}
	go io.Copy(io.Discard, stderr)
	base := strings.TrimSuffix(endpoint, "/mcp")

	// The protected resource metadata names the resource and its scopes.
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
	// No token, or a wrong one: 401, and where to read the metadata.
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, token := range []string{"", "wrong"} {
		resp := post(token, initialize)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+base+`/.well-known/oauth-protected-resource"`) {
			t.Errorf("token %q: %s, WWW-Authenticate %q; want 401 and the metadata's URL", token, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
	}
	// A call the read-only token may not make: 403 and the scope needed.
	resp = post(readToken, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_task","arguments":{"id":"7"}}}`)
	challenge := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) || !strings.Contains(challenge, `tools:destructive"`) {
		t.Errorf("delete_task with the read-only token: %s, WWW-Authenticate %q; want the step-up challenge", resp.Status, challenge)
	}

	call := func(token, tool string) (string, error) {
		t.Helper()
		ctx := t.Context()
		tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerTransport(token), Timeout: 30 * time.Second}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "readme", Version: "v1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"id": "7"}})
		if err != nil {
			return "", err
		}
		if res.IsError || len(res.Content) != 1 {
			return "", fmt.Errorf("result %+v", res)
		}
		return res.Content[0].(*mcp.TextContent).Text, nil
	}
	if got, err := call(readToken, "get_task"); err != nil || got != "task 7" {
		t.Errorf("get_task with the read-only token: %q, %v; want the task", got, err)
	}
	if got, err := call(readToken, "delete_task"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("delete_task with the read-only token: %q, %v; want it refused", got, err)
	}
	if got, err := call(fullToken, "delete_task"); err != nil || got != "deleted 7" {
		t.Errorf("delete_task with the full token: %q, %v; want it to run", got, err)
	}
}

// bearerTransport sends its token with every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(req)
}
