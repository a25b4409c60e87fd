package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
)

// verifyJSON runs mcpeffect verify -json with the examples file of
// testdata/verify called examples and the server args, and decodes the
// report.
func verifyJSON(t *testing.T, examples string, args ...string) (int, *verify.Report) {
	t.Helper()
	full := append([]string{"verify", "-json", "-timeout", "3m", "-examples", filepath.Join("testdata", "verify", examples)}, args...)
	res := runCommand(t, full...)
	if res.code == exitError {
		t.Fatalf("verify could not run (exit %d): %s", res.code, res.stderr)
	}
	var r verify.Report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("decoding the report: %v\n%s", err, res.stdout)
	}
	return res.code, &r
}

// A lie is one broken rule a verdict must name: the record and field,
// and the values before and after.
type lie struct {
	rule, record, field, before, after string
}

// checkVerdicts holds the report to the verdict of every tool, and to
// the lies named, which must be the tool's first change of each.
func checkVerdicts(t *testing.T, r *verify.Report, want map[string]verify.Verdict, lies map[string]lie) {
	t.Helper()
	if len(r.Tools) != len(want) {
		t.Errorf("the report has %d tools, want %d", len(r.Tools), len(want))
	}
	for name, v := range want {
		tr := r.Tool(name)
		if tr == nil {
			t.Errorf("tool %q is not in the report", name)
			continue
		}
		if tr.Verdict != v {
			t.Errorf("tool %q: verdict %q, want %q (%s)\n%s", name, tr.Verdict, v, tr.Reason, mustJSON(t, tr))
		}
	}
	for name, l := range lies {
		tr := r.Tool(name)
		if tr == nil {
			continue
		}
		found := false
		for _, ex := range tr.Examples {
			for _, got := range ex.Lies {
				c := got.Changes[0]
				if got.Rule == l.rule && c.Record == l.record && c.Field == l.field && c.Before == l.before && c.After == l.after {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("tool %q: no lie of rule %s on record %q, field %q, %s → %s:\n%s", name, l.rule, l.record, l.field, l.before, l.after, mustJSON(t, tr))
		}
	}
}

// nodeScript returns the arguments that run the script at path with node,
// skipping the test without node or the script's packages, unless
// MCPEFFECT_REQUIRE_NODE says it must run.
func nodeScript(t *testing.T, modules, path string, args ...string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs node")
	}
	skip := t.Skip
	if os.Getenv("MCPEFFECT_REQUIRE_NODE") != "" {
		skip = t.Fatal
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed: this test needs it")
	}
	if _, err := os.Stat(filepath.Join(modules, "node_modules")); err != nil {
		skip("run `npm ci` in " + modules + " first")
	}
	return append([]string{"--", node, path}, args...)
}

// TestVerifyPlantedLies verifies a server written in JavaScript with the
// TypeScript SDK, whose hints hold two planted lies: the command catches
// both, naming the record and the field, and proves the tools that tell
// the truth.
func TestVerifyPlantedLies(t *testing.T) {
	code, r := verifyJSON(t, "notes.json", nodeScript(t, "../../testdata/tsclient", "../../testdata/tsclient/notes-server.mjs")...)
	if code != exitFindings {
		t.Errorf("exit %d, want %d", code, exitFindings)
	}
	checkVerdicts(t, r, map[string]verify.Verdict{
		"list_notes":  verify.Proven,
		"get_note":    verify.Lie,
		"add_note":    verify.Proven,
		"rename_note": verify.Lie,
		"delete_note": verify.Proven,
	}, map[string]lie{
		"get_note":    {"read", "/notes/1", "views", "0", "1"},
		"rename_note": {"non-destructive", "/notes/1", "title", `"Milk"`, `"Oat milk"`},
	})
	ex := r.Tool("get_note").Examples
	if len(ex) != 2 || ex[1].Result != "refused" {
		t.Errorf("get_note's example of a missing note: %+v, want it refused as expected", ex)
	}
	if !strings.Contains(r.Tool("get_note").Examples[0].Lies[0].Message, "a read must not") {
		t.Errorf("the lie's message does not say the rule: %q", r.Tool("get_note").Examples[0].Lies[0].Message)
	}
}
