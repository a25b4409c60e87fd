// Package suite runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned with the Node.js it needs in
// testdata/conformance and installed there by npm ci) against a server,
// for the tests of mcpeffect's conformance servers: the go-sdk one and the
// mcp-go one run the same suite, read its results the same way, and are
// held to the same list of scenarios.
package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect/internal/testing/nodetest"
)

// Specs are the protocol revisions the suite tests servers at: the dated
// protocols keep sessions; 2026-07-28 is stateless.
var Specs = []string{"2025-11-25", "2026-07-28"}

// MustHave are the scenarios the suite must at least have, for each
// protocol: those the library is held to (logging, progress, sampling,
// elicitation, SSE polling and streams, resources and subscriptions,
// prompts, completion, JSON Schema 2020-12, DNS rebinding). The suite's own
// list, which the tests read, is the one run; this one catches a suite
// that would drop some.
var MustHave = map[string][]string{
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

// ReadOnlyFailing are the scenarios that fail, for each protocol, when the
// suite runs with a read-only token against a server of the catalog: those
// that read what needs more than read-only. The scenarios of the tools all
// pass: their tools are reads, but for the two triggers, which
// server-stateless alone calls, and whose refusal it reports as a SHOULD
// not met (a warning), not a failure. caching reads the binary resource.
var ReadOnlyFailing = map[string][]string{
	"2025-11-25": {"prompts-get-embedded-resource", "resources-read-binary", "resources-templates-read"},
	"2026-07-28": {"caching", "prompts-get-embedded-resource", "resources-read-binary", "resources-templates-read"},
}

// dir is testdata/conformance, found from this file, so that a test of any
// module of the repository finds it.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "testdata", "conformance")
}

// Find returns the node binary and the suite's entry point, which npm
// ci installs in testdata/conformance. Where they are missing, t is
// skipped and the package's TestMain reports it, with that npm ci, unless
// MCPEFFECT_REQUIRE_NODE says the suite must run (as in CI, which
// installs them): then it fails (see [nodetest.NotRun]). With -short, t
// is skipped.
func Find(t *testing.T) (node, entry string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the conformance suite")
	}
	d, err := filepath.Abs(dir())
	if err != nil {
		t.Fatal(err)
	}
	// The suite runs in a directory of its own: both paths are absolute.
	node = filepath.Join("node_modules", "node", "bin", "node")
	entry = filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	nodetest.Installed(t, d, node)
	nodetest.Installed(t, d, entry)
	return filepath.Join(d, node), filepath.Join(d, entry)
}

// Scenarios returns the suite's server scenarios of the protocol spec,
// leaving out its extensions (tasks, skills), which are not part of the
// specification and which no revision requires.
func Scenarios(t *testing.T, node, entry, spec string) []string {
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
	for _, name := range MustHave[spec] {
		if !slices.Contains(names, name) {
			t.Errorf("the suite lists no scenario %s for %s", name, spec)
		}
	}
	return names
}

// A Check is one check of a scenario, as the suite writes it.
type Check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// resultDir is the name of the directory of one scenario's results:
// server-<scenario>-<timestamp>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[0-9-]+Z$`)

// WithToken stands for a client that holds a token: the suite cannot send
// one, so each of its requests without an Authorization header gets
// token's, which the server then verifies as any other.
func WithToken(token string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+token)
		}
		h.ServeHTTP(w, r)
	})
}

// Run runs the suite's server scenarios of spec against the server at
// url, which must listen on loopback (the DNS rebinding scenario needs
// one), and returns the checks of each scenario, as the suite wrote them,
// its output and how it exited.
func Run(t *testing.T, node, entry, url, spec string) (map[string][]Check, string, error) {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, entry, "server", "--url", url,
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
	results := map[string][]Check{}
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
		var checks []Check
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Errorf("scenario %s: checks.json: %v", m[1], err)
			continue
		}
		results[m[1]] = append(results[m[1]], checks...)
	}
	return results, output.String(), runErr
}

// Failed returns the checks of checks that failed.
func Failed(checks []Check) []Check {
	var out []Check
	for _, c := range checks {
		if c.Status == "FAILURE" {
			out = append(out, c)
		}
	}
	return out
}

// Exceptions are what a server cannot pass, for [AllPass]: each key is
// "SCENARIO/CHECK", one check, or "SCENARIO", a whole scenario, and each
// value the reason.
type Exceptions struct {
	// Unsupported cannot pass: each must still fail (a scenario, pass no
	// check), so that the list stays true.
	Unsupported map[string]string
	// Intermittent fail at times, for a fault of the server's SDK: a
	// failure is logged, a pass is a pass.
	Intermittent map[string]string
}

// AllPass asserts that every scenario of scenarios ran and passed, as
// results say, but for the exceptions of x. An unsupported exception that
// no longer holds is reported, so that the list of what cannot pass stays
// true. Warnings are logged. It reports whether all was as asserted.
func AllPass(t *testing.T, spec string, scenarios []string, results map[string][]Check, output string, runErr error, x Exceptions) bool {
	t.Helper()
	unsupported := x.Unsupported
	ok := true
	held := map[string]bool{}
	for key := range x.Intermittent {
		if name, _, _ := strings.Cut(key, "/"); !slices.Contains(scenarios, name) {
			t.Errorf("%s is listed as intermittent, but the suite has no such scenario for %s", key, spec)
			ok = false
		}
	}
	for key := range unsupported {
		name, _, _ := strings.Cut(key, "/")
		if !slices.Contains(scenarios, name) {
			t.Errorf("%s is listed as unsupported, but the suite has no such scenario for %s", key, spec)
			ok = false
		}
	}
	for _, name := range scenarios {
		checks, ran := results[name]
		if !ran {
			t.Errorf("%s: the suite did not run it", name)
			ok = false
			continue
		}
		passed := 0
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				passed++
			case "WARNING":
				t.Logf("%s: check %s warns: %s %s", name, c.ID, c.Description, c.ErrorMessage)
			}
		}
		for _, c := range Failed(checks) {
			if reason, flaky := x.Intermittent[name+"/"+c.ID]; flaky {
				t.Logf("%s: check %s failed, as it does at times (%s): %s", name, c.ID, reason, c.ErrorMessage)
				continue
			}
			if reason, known := unsupported[name+"/"+c.ID]; known {
				held[name+"/"+c.ID] = true
				t.Logf("%s: check %s fails, as expected (%s)", name, c.ID, reason)
				continue
			}
			if _, known := unsupported[name]; known {
				continue
			}
			t.Errorf("%s: check %s failed: %s %s", name, c.ID, c.Description, c.ErrorMessage)
			ok = false
		}
		if reason, known := unsupported[name]; known {
			if passed > 0 {
				t.Errorf("%s passes %d checks now, but is listed as unsupported (%s): take it off the list", name, passed, reason)
				ok = false
			} else {
				held[name] = true
				t.Logf("%s passes no check, as expected (%s): %+v", name, reason, checks)
			}
			continue
		}
		if passed == 0 {
			t.Errorf("%s: no check passed: %+v", name, checks)
			ok = false
		}
	}
	for key, reason := range unsupported {
		if name, _, _ := strings.Cut(key, "/"); !held[key] && slices.Contains(scenarios, name) {
			t.Errorf("%s no longer fails, but is listed as unsupported (%s): take it off the list", key, reason)
			ok = false
		}
	}
	for name := range results {
		if !slices.Contains(scenarios, name) {
			t.Errorf("the suite ran %s, which it does not list for %s", name, spec)
			ok = false
		}
	}
	if runErr != nil && ok && len(unsupported) == 0 && len(x.Intermittent) == 0 {
		t.Errorf("the suite failed (%v), though every check passed:\n%s", runErr, output)
		ok = false
	}
	if !ok {
		t.Logf("the suite's output:\n%s", output)
	}
	return ok
}

// ReadOnly asserts that the scenarios that failed, as results say, are
// exactly want, and that each of their failures is mcpeffect's refusal of
// a read-only caller.
func ReadOnly(t *testing.T, results map[string][]Check, output string, want []string) {
	t.Helper()
	var failed []string
	for name, checks := range results {
		for _, c := range checks {
			if c.Status == "WARNING" {
				t.Logf("%s: check %s warns: %s", name, c.ID, c.ErrorMessage)
			}
		}
		bad := Failed(checks)
		for _, c := range bad {
			// The 403 of the challenge carries the same JSON-RPC error,
			// with its quotes escaped.
			if msg := strings.ReplaceAll(c.ErrorMessage, `\"`, `"`); !strings.Contains(msg, "is refused: it needs the") || !strings.Contains(msg, "and the caller has only read-only") {
				t.Errorf("%s: check %s failed, and not for mcpeffect's refusal: %s", name, c.ID, c.ErrorMessage)
			}
		}
		if len(bad) > 0 {
			failed = append(failed, name)
		}
	}
	slices.Sort(failed)
	if !slices.Equal(failed, want) {
		t.Errorf("with a read-only token, failed %q, want %q\n%s", failed, want, output)
	}
}
