package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// suiteDir holds the conformance suite, pinned by its package-lock.json and
// installed by .ci/run with npm ci, with the Node.js it needs.
var suiteDir = filepath.Join("..", "..", "..", "testdata", "conformance")

// suite returns the node binary and the suite's entry point. Where they are
// missing, the test is skipped, unless MCPEFFECT_REQUIRE_NODE says it must
// run (as in CI, which installs them): then a scenario the suite cannot run
// is a failure.
func suite(t *testing.T) (node, entry string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the conformance suite")
	}
	skip := t.Skip
	if os.Getenv("MCPEFFECT_REQUIRE_NODE") != "" {
		skip = t.Fatal
	}
	node = filepath.Join(suiteDir, "node_modules", "node", "bin", "node")
	entry = filepath.Join(suiteDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, f := range []*string{&node, &entry} {
		if _, err := os.Stat(*f); err != nil {
			skip("run `npm ci` in testdata/conformance first: " + err.Error())
		}
		// The suite runs in a directory of its own.
		abs, err := filepath.Abs(*f)
		if err != nil {
			t.Fatal(err)
		}
		*f = abs
	}
	return node, entry
}

// withToken stands for a client that holds a token: the suite cannot send
// one, so each of its requests without an Authorization header gets
// token's, which the server then verifies as any other.
func withToken(token string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+token)
		}
		h.ServeHTTP(w, r)
	})
}

// The scenarios the suite must at least have, for each protocol: those the
// library is held to (logging, progress, sampling, elicitation, SSE
// polling and streams, resources and subscriptions, prompts, completion,
// JSON Schema 2020-12, DNS rebinding). The suite's own list, which this test
// reads, is the one run; this one catches a suite that would drop some.
var mustHave = map[string][]string{
	"2025-11-25": {
		"server-initialize", "logging-set-level", "ping", "completion-complete", "tools-call-with-logging",
		"tools-call-with-progress", "tools-call-sampling", "tools-call-elicitation", "elicitation-sep1034-defaults",
		"elicitation-sep1330-enums", "server-sse-polling", "server-sse-multiple-streams", "resources-read-text",
		"resources-read-binary", "resources-templates-read", "resources-subscribe", "resources-unsubscribe",
		"prompts-get-with-args", "prompts-get-embedded-resource", "json-schema-2020-12", "dns-rebinding-protection",
	},
	"2026-07-28": {
		"server-stateless", "completion-complete", "tools-call-with-progress", "server-sse-multiple-streams",
		"resources-templates-read", "sep-2164-resource-not-found", "prompts-get-embedded-resource",
		"json-schema-2020-12", "dns-rebinding-protection", "caching", "input-required-result-basic-elicitation",
		"input-required-result-basic-sampling", "input-required-result-tampered-state",
	},
}

// listScenarios returns the suite's server scenarios of the protocol spec,
// leaving out its extensions (tasks, skills), which are not part of the
// specification and which no revision requires.
func listScenarios(t *testing.T, node, entry, spec string) []string {
	t.Helper()
	out, err := exec.Command(node, entry, "list", "--server", "--spec-version", spec).Output()
	if err != nil {
		t.Fatalf("conformance list: %v", err)
	}
	var names []string
	for m := range strings.Lines(string(out)) {
		name, tags, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m), "- ")), " [")
		if ok && strings.Contains(tags, spec) {
			names = append(names, name)
		}
	}
	return names
}

type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// resultDir is the name of the directory of one scenario's results:
// server-<scenario>-<timestamp>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[0-9-]+Z$`)

// TestConformance runs every server scenario of the conformance suite, for
// each protocol it tests, against the conformance server with a full-scope
// token, and asserts that each passes, as the suite's own results say.
func TestConformance(t *testing.T) {
	node, entry := suite(t)
	for _, leg := range legs {
		t.Run(leg.spec, func(t *testing.T) {
			scenarios := listScenarios(t, node, entry, leg.spec)
			for _, name := range mustHave[leg.spec] {
				if !slices.Contains(scenarios, name) {
					t.Errorf("the suite lists no scenario %s for %s", name, leg.spec)
				}
			}
			results, output, runErr := runSuite(t, node, entry, leg.spec, leg.stateless, "tools:destructive")
			failed := false
			for _, name := range scenarios {
				checks, ok := results[name]
				if !ok {
					t.Errorf("%s: the suite did not run it", name)
					failed = true
					continue
				}
				passed := 0
				for _, c := range checks {
					switch c.Status {
					case "SUCCESS":
						passed++
					case "FAILURE":
						t.Errorf("%s: check %s failed: %s %s", name, c.ID, c.Description, c.ErrorMessage)
						failed = true
					case "WARNING":
						t.Logf("%s: check %s warns: %s %s", name, c.ID, c.Description, c.ErrorMessage)
					}
				}
				if passed == 0 {
					t.Errorf("%s: no check passed", name)
					failed = true
				}
			}
			for name := range results {
				if !slices.Contains(scenarios, name) {
					t.Errorf("the suite ran %s, which it does not list for %s", name, leg.spec)
				}
			}
			if runErr != nil && !failed {
				t.Errorf("the suite failed (%v), though every check passed:\n%s", runErr, output)
			}
			if failed {
				t.Logf("the suite's output:\n%s", output)
				return
			}
			t.Logf("%s: all %d scenarios passed", leg.spec, len(scenarios))
		})
	}
}

// legs are the protocols the suite tests, and how the server serves each.
var legs = []struct {
	spec      string
	stateless bool
}{
	// The dated protocols keep sessions; 2026-07-28 is stateless.
	{"2025-11-25", false},
	{"2026-07-28", true},
}

// runSuite runs the suite's server scenarios of spec against a new
// conformance server, with a token of scope, and returns the checks of each
// scenario, as the suite wrote them, its output and how it exited.
func runSuite(t *testing.T, node, entry, spec string, stateless bool, scope string) (map[string][]check, string, error) {
	t.Helper()
	h, stop := newHandler(map[string][]string{"the-secret": {scope}}, stateless)
	t.Cleanup(stop)
	// httptest listens on 127.0.0.1: the DNS rebinding scenario needs a
	// loopback server.
	ts := httptest.NewServer(withToken("the-secret", h))
	t.Cleanup(ts.Close)

	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, entry, "server", "--url", ts.URL+"/mcp",
		"--spec-version", spec, "--suite", "all", "--output-dir", out)
	// The suite writes nothing but its results to out.
	cmd.Dir = out
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	// The exit status says whether some check failed; the results say
	// which.
	runErr := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the suite did not finish: %v\n%s", ctx.Err(), output.String())
	}
	results := map[string][]check{}
	dirs, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		m := resultDir.FindStringSubmatch(d.Name())
		if m == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
		if err != nil {
			t.Errorf("scenario %s: %v", m[1], err)
			continue
		}
		var checks []check
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Errorf("scenario %s: checks.json: %v", m[1], err)
			continue
		}
		results[m[1]] = append(results[m[1]], checks...)
	}
	return results, output.String(), runErr
}

// TestConformanceReadOnly runs the suite again with a read-only token: the
// scenarios that fail are exactly those that call what needs more than
// read-only, and each of their failures is mcpeffect's refusal.
func TestConformanceReadOnly(t *testing.T) {
	node, entry := suite(t)
	// The scenarios of the tools all pass: their tools are reads, but for
	// the two triggers, which server-stateless alone calls, and whose
	// refusal it reports as a SHOULD not met (a warning), not a failure.
	want := map[string][]string{
		"2025-11-25": {"prompts-get-embedded-resource", "resources-read-binary", "resources-templates-read"},
		// caching reads the binary resource too.
		"2026-07-28": {"caching", "prompts-get-embedded-resource", "resources-read-binary", "resources-templates-read"},
	}
	for _, leg := range legs {
		t.Run(leg.spec, func(t *testing.T) {
			results, output, _ := runSuite(t, node, entry, leg.spec, leg.stateless, "tools:read")
			var failed []string
			for name, checks := range results {
				failedHere := false
				for _, c := range checks {
					switch c.Status {
					case "FAILURE":
						failedHere = true
						// The 403 of the challenge carries the same
						// JSON-RPC error, with its quotes escaped.
						if msg := strings.ReplaceAll(c.ErrorMessage, `\"`, `"`); !strings.Contains(msg, "is refused: it needs the") || !strings.Contains(msg, "and the caller has only read-only") {
							t.Errorf("%s: check %s failed, and not for mcpeffect's refusal: %s", name, c.ID, c.ErrorMessage)
						}
					case "WARNING":
						t.Logf("%s: check %s warns: %s", name, c.ID, c.ErrorMessage)
					}
				}
				if failedHere {
					failed = append(failed, name)
				}
			}
			slices.Sort(failed)
			if !slices.Equal(failed, want[leg.spec]) {
				t.Errorf("with a read-only token, failed %q, want %q\n%s", failed, want[leg.spec], output)
			}
		})
	}
}
