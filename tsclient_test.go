package mcpeffect_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/nodetest"
)

// TestTypeScriptClient checks that the TypeScript SDK's client, as hosts
// built on it run, shows a refusal as an error that says why, with the
// challenge and without it. It needs node; it installs the client's
// packages from their lock file.
func TestTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node")
	}
	dir := filepath.Join("testdata", "tsclient")
	node := nodetest.Packages(t, dir, "node_modules/@modelcontextprotocol/sdk")
	type report struct {
		Outcome string `json:"outcome"`
		Name    string `json:"name"`
		Code    any    `json:"code"`
		Message string `json:"message"`
	}
	call := func(url, token, tool string) report {
		t.Helper()
		out, err := exec.Command(node, filepath.Join(dir, "client.mjs"), url, token, tool).Output()
		if err != nil {
			t.Fatalf("node client: %v", err)
		}
		var r report
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("node client printed %q: %v", out, err)
		}
		return r
	}
	for _, challenge := range []bool{false, true} {
		s := newHTTPServer(t, challenge)
		url := s.URL + "/mcp"
		if r := call(url, "write-token", "create_task"); r.Outcome != "result" {
			t.Errorf("challenge %t: allowed call: %+v", challenge, r)
		}
		r := call(url, "read-token", "delete_task")
		if r.Outcome != "error" {
			t.Fatalf("challenge %t: refused call: %+v, want an error", challenge, r)
		}
		t.Logf("challenge %t: the TypeScript client reports %s (code %v): %s", challenge, r.Name, r.Code, r.Message)
		// The message says why; the challenge's body, in JSON, escapes the
		// quotes around the tool's name.
		if !strings.Contains(strings.ReplaceAll(r.Message, `\"`, `"`), `tool "delete_task" is refused: it needs the full scope`) {
			t.Errorf("challenge %t: refusal message %q does not say why", challenge, r.Message)
		}
		// What the README says the client sees.
		wantName, wantCode := "McpError", float64(-32050) // CodeDenied, as a JSON-RPC error
		if challenge {
			// The HTTP status of the step-up challenge, before any
			// JSON-RPC.
			wantName, wantCode = "StreamableHTTPError", 403
		}
		if r.Name != wantName || r.Code != wantCode {
			t.Errorf("challenge %t: error %s, code %v; want %s, code %v", challenge, r.Name, r.Code, wantName, wantCode)
		}
		if n := s.calls.count("delete_task"); n != 0 {
			t.Errorf("challenge %t: delete_task ran %d times", challenge, n)
		}
	}
}
