package mcpgo_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/nodetest"
	"github.com/mcpeffect/mcpeffect/mcpgo"
)

// tsReport is what the TypeScript client of ../testdata/tsclient prints
// of one operation.
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

// runTSClient runs the TypeScript SDK's client with config (see
// ../testdata/tsclient/client.mjs) and returns its reports. Where node or
// the client's packages are missing, the test is skipped, and TestMain
// says so with the command that installs them, unless CI, which installs
// them (.ci/run), says it must run (see nodetest). It does not install
// them itself: the root package's tests do, and two npm ci at once in one
// directory would break each other.
func runTSClient(t *testing.T, config map[string]any) []tsReport {
	t.Helper()
	if testing.Short() {
		t.Skip("runs node")
	}
	dir := filepath.Join("..", "testdata", "tsclient")
	node, err := exec.LookPath("node")
	if err != nil {
		nodetest.NotRun(t, "node is not installed", "install node and npm (on Debian: apt-get install -y nodejs npm)")
	}
	nodetest.Installed(t, dir, filepath.Join("node_modules", "@modelcontextprotocol", "sdk"))
	raw, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), string(raw))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v", err)
	}
	var reports []tsReport
	if err := json.Unmarshal(out, &reports); err != nil {
		t.Fatalf("node client printed %q: %v", out, err)
	}
	return reports
}

// TestTypeScriptClient runs the scenarios with the TypeScript SDK's
// client, as hosts built on it run, over Streamable HTTP with bearer
// tokens, against the mcp-go server: with the challenge and without it,
// each refusal is an error that names what was refused and the scope it
// needs, and without the challenge it carries mcpeffect's code and data.
func TestTypeScriptClient(t *testing.T) {
	for _, challenge := range []bool{false, true} {
		opts := &mcpgo.Options{}
		if challenge {
			opts.Challenge = &mcpeffect.ChallengeOptions{ResourceMetadataURL: "https://example.test" + metadataPath}
		}
		ts := newTestServer(t, opts, false)
		url := serveHTTP(t, ts.s, ts.r, opts).URL + "/mcp"
		challenged := 0
		for _, sc := range scenarios {
			var ops []map[string]any
			for _, st := range sc.steps {
				op := map[string]any{"op": st.op}
				switch st.op {
				case "read":
					op["uri"] = st.name
				default:
					op["name"] = st.name
					op["arguments"] = st.args
				}
				ops = append(ops, op)
			}
			reports := runTSClient(t, map[string]any{"url": url, "token": sc.token, "ops": ops})
			if len(reports) != len(sc.steps) {
				t.Fatalf("challenge %t, %s: %d reports for %d steps: %+v", challenge, sc.name, len(reports), len(sc.steps), reports)
			}
			for i, st := range sc.steps {
				r := reports[i]
				at := sc.name + ": " + st.op + " " + st.name
				switch st.want {
				case "ok":
					if r.Outcome != "result" {
						t.Errorf("challenge %t, %s: %+v", challenge, at, r)
					}
				case "denied":
					msg := strings.ReplaceAll(r.Message, `\"`, `"`)
					if r.Outcome != "error" || !strings.Contains(msg, st.detail) {
						t.Errorf("challenge %t, %s: %+v; want an error that says %q", challenge, at, r, st.detail)
						continue
					}
					// Without the challenge, or for what it leaves to
					// the server (a caller without a scope has no token
					// scope to step up from), the JSON-RPC error.
					if code, ok := r.Code.(float64); ok && code == mcpeffect.CodeDenied {
						var d mcpeffect.DeniedError
						if err := json.Unmarshal(r.Data, &d); err != nil || d.Tool+d.Resource+d.Prompt != st.name {
							t.Errorf("challenge %t, %s: data %s, want the DeniedError", challenge, at, r.Data)
						}
					} else if !challenge || r.Code != float64(403) {
						t.Errorf("challenge %t, %s: code %v, want %d or, with the challenge, 403", challenge, at, r.Code, mcpeffect.CodeDenied)
					} else {
						challenged++
					}
				}
			}
		}
		if challenge && challenged == 0 {
			t.Errorf("with the challenge, no refusal was a 403")
		}
		t.Logf("challenge %t: %d refusals answered with the step-up challenge", challenge, challenged)
		for _, key := range []string{"pods delete", "read notes://payroll", "get audit"} {
			// Each ran once: for the full caller only.
			if n := ts.calls.count(key); n != 1 {
				t.Errorf("challenge %t: %q ran %d times, want once", challenge, key, n)
			}
		}
	}
}

// TestTypeScriptClientConfirm checks confirmation with the TypeScript
// SDK's client, whose person accepts or declines: a destructive call runs
// only on accept, and is asked about once.
func TestTypeScriptClientConfirm(t *testing.T) {
	for _, answer := range []string{"accept", "decline"} {
		ts := newTestServer(t, &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{}}}, false)
		url := serveHTTP(t, ts.s, ts.r, nil).URL + "/mcp"
		reports := runTSClient(t, map[string]any{"url": url, "token": "full-token", "elicit": answer, "ops": []map[string]any{
			{"op": "call", "name": "create_task", "arguments": map[string]any{"id": "7"}},
			{"op": "call", "name": "delete_task", "arguments": map[string]any{"id": "7"}},
		}})
		if len(reports) != 2 {
			t.Fatalf("%s: reports %+v", answer, reports)
		}
		if r := reports[0]; r.Outcome != "result" || len(r.Asked) != 0 {
			t.Errorf("%s: create_task: %+v, want it run unasked", answer, r)
		}
		r := reports[1]
		if len(r.Asked) != 1 || !strings.Contains(r.Asked[0], "delete_task") {
			t.Errorf("%s: delete_task asked %q, want one question that names it", answer, r.Asked)
		}
		ran := ts.calls.count("delete_task")
		if answer == "accept" {
			if r.Outcome != "result" || ran != 1 {
				t.Errorf("accept: delete_task %+v, ran %d times", r, ran)
			}
			continue
		}
		if r.Outcome != "error" || r.Code != float64(mcpeffect.CodeNotConfirmed) || ran != 0 {
			t.Errorf("decline: delete_task %+v, ran %d times; want a refusal with code %d", r, ran, mcpeffect.CodeNotConfirmed)
		}
	}
}
