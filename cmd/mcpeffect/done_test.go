package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
)

// doneDir is the Done example server, a module of its own in this
// repository.
const doneDir = "../../examples/done-server"

// The Done server, built once for every test of the binary that needs it.
var (
	doneOnce  sync.Once
	doneBin   string
	doneErr   error
	buildsDir string // removed by TestMain
)

// builtDirs are other directories of builds, removed by TestMain.
var builtDirs []string

// removeBuilds removes what doneServer and the other builds built.
func removeBuilds() {
	if buildsDir != "" {
		os.RemoveAll(buildsDir)
	}
	for _, dir := range builtDirs {
		os.RemoveAll(dir)
	}
}

// doneServer returns the arguments that make audit run the Done example
// server over stdio, on a data directory of its own with a read-only
// token in DONE_TOKEN, building the server the first time.
func doneServer(t *testing.T) []string {
	t.Helper()
	doneBin := buildDone(t)
	data := t.TempDir()
	secret, err := exec.Command(doneBin, "token", "create", "-data", data, "-scope", "read-only", "-kind", "human", "-name", "auditor").Output()
	if err != nil {
		t.Fatalf("minting a token: %v", err)
	}
	t.Setenv("DONE_TOKEN", strings.TrimSpace(string(secret)))
	return []string{"--", doneBin, "-data", data}
}

// buildDone returns the path of the Done server, built the first time a
// test binary asks, or reused from an earlier run while nothing that goes
// into it changed (see cachedBuild): the race and the plain test binaries
// share it, and a cold run of either builds nothing.
func buildDone(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the Done server")
	}
	doneOnce.Do(func() {
		if cache, err := os.UserCacheDir(); err == nil {
			var berr *buildError
			doneBin, _, doneErr = cachedBuild(goBuild{dir: doneDir, name: "done-server", cache: filepath.Join(cache, "mcpeffect-test")})
			if doneErr == nil || errors.As(doneErr, &berr) {
				return
			}
		}
		// No cache to use: a build of this test binary's own.
		if buildsDir, doneErr = os.MkdirTemp("", "mcpeffect-test-"); doneErr != nil {
			return
		}
		doneBin = filepath.Join(buildsDir, "done-server")
		build := exec.Command("go", "build", "-o", doneBin, ".")
		build.Dir = doneDir
		if out, err := build.CombinedOutput(); err != nil {
			doneErr = &buildError{err, out}
		}
	})
	if doneErr != nil {
		t.Fatalf("building the Done server: %v", doneErr)
	}
	return doneBin
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// TestAuditDoneServer audits the Done example server over stdio: a server
// whose tools all come from mcpeffect.AddTool has no finding, even at the
// warning level, and the summary matches the specification of its tools.
func TestAuditDoneServer(t *testing.T) {
	code, report := auditJSON(t, append([]string{"-fail-on", "warning"}, doneServer(t)...)...)
	if code != 0 || len(report.Findings) != 0 {
		t.Errorf("exit %d, findings %+v; want a clean audit", code, report.Findings)
	}
	want := specSummary(t)
	// tools.tsv says nothing of undos and retries: the findings, none,
	// hold each undo Done publishes to the tools it lists.
	want.Recoveries, want.Idempotency = report.Summary.Recoveries, report.Summary.Idempotency
	if report.Summary != want {
		t.Errorf("summary %+v, want %+v from the specification", report.Summary, want)
	}
	if report.Server.Name != "done" {
		t.Errorf("server %+v", report.Server)
	}
}

// TestAuditDoneHosts audits Done with every host and directory profile.
// The outcomes asserted are each host's rule applied by hand to the
// hints Done derives from each tool's effect: get_task a read;
// create_task a write that destroys nothing and stays in Done's data;
// delete_task destructive; search_context a read and save_context a
// write, both open-world.
func TestAuditDoneHosts(t *testing.T) {
	_, r := auditJSON(t, append([]string{"-host", "all", "-profile", "all"}, doneServer(t)...)...)
	spec := specSummary(t)
	for _, c := range []struct {
		host, mode, tool string
		want             audit.HostAction
		review           bool
	}{
		{"vscode", "manual", "get_task", audit.Runs, false},
		{"vscode", "manual", "create_task", audit.Asks, false},
		{"vscode", "manual", "search_context", audit.Runs, true},
		{"vscode", "manual", "save_context", audit.Asks, true},
		{"claude-code", "plan", "get_task", audit.Asks, false},
		{"claude-code", "plan", "create_task", audit.AsksAlways, false},
		{"codex", "auto", "create_task", audit.Runs, false},
		{"codex", "auto", "delete_task", audit.Asks, false},
		{"codex", "auto", "save_context", audit.Asks, false},
		{"codex", "writes", "create_task", audit.AsksAlways, false},
		{"codex", "never", "create_task", audit.Runs, false},
		{"codex", "never", "delete_task", audit.Refused, false},
		{"claude-code", "auto", "get_task", audit.Judged, false},
		{"chatgpt", "developer", "get_task", audit.Judged, false},
		{"qwen-code", "plan", "get_task", audit.Refused, false},
		{"copilot", "code-review", "create_task", audit.Refused, false},
		{"gemini-cli", "plan", "get_task", audit.Asks, false},
		{"cline", "default", "get_task", audit.Asks, false},
	} {
		got, ok := hostOutcome(r, c.host, c.mode, c.tool)
		if !ok || got.Action != c.want || got.ReviewsOutput != c.review {
			t.Errorf("%s/%s, %s: %+v, want %s (output reviewed %t)", c.host, c.mode, c.tool, got, c.want, c.review)
		}
	}
	// What VS Code does, counted: it asks before every write, runs every
	// read, and reviews the output of every open-world tool.
	for _, h := range r.Hosts {
		if h.Host == "vscode" && h.Mode == "manual" {
			want := audit.HostCounts{Asks: spec.Writes, Runs: spec.Reads, ReviewsOutput: spec.OpenWorld}
			if h.Counts != want {
				t.Errorf("VS Code counts %+v, want %+v", h.Counts, want)
			}
		}
	}
	// Done declares every hint, and has no catch-all tool.
	for _, f := range r.Findings {
		switch f.Rule {
		case "claude-directory/hints", "claude-directory/catch-all", "chatgpt-directory/hints", "chatgpt-directory/destructive-mode":
			t.Errorf("%s: %s: %s", f.Tool, f.Rule, f.Message)
		}
	}
	// No directory would reject Done: every tool has a title, and no
	// rule of any profile finds an error.
	for _, f := range r.Findings {
		if f.Level == audit.Error {
			t.Errorf("%s: %s (error): %s", f.Tool, f.Rule, f.Message)
		}
	}
	if len(r.Directories) != len(audit.DirectoryProfiles()) {
		t.Errorf("%d directory reports, want one for each of the %d profiles", len(r.Directories), len(audit.DirectoryProfiles()))
	}
	for _, d := range r.Directories {
		if d.Rejected != 0 || d.Errors != 0 {
			t.Errorf("%s: %s", d.Name, d.Summary)
		}
	}
}

// hostOutcome returns what the host profile host/mode of report r does
// with tool.
func hostOutcome(r *audit.Report, host, mode, tool string) (audit.HostTool, bool) {
	for _, h := range r.Hosts {
		if h.Host == host && h.Mode == mode {
			for _, t := range h.Tools {
				if t.Name == tool {
					return t, true
				}
			}
		}
	}
	return audit.HostTool{}, false
}

// TestDiffDoneServer holds the Done server against its own saved report:
// nothing changed; and against a report in which delete_task was a read:
// a widening.
func TestDiffDoneServer(t *testing.T) {
	args := doneServer(t)
	res := runCommand(t, append([]string{"audit", "-json"}, args...)...)
	if res.code != exitOK {
		t.Fatalf("audit: exit %d: %s", res.code, res.stderr)
	}
	saved := writeFile(t, "done.json", []byte(res.stdout))
	if res := runCommand(t, append([]string{"diff", saved}, args...)...); res.code != exitOK || !strings.Contains(res.stdout, "No change.") {
		t.Errorf("Done against itself: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	var doc struct {
		Server json.RawMessage  `json:"server"`
		Tools  []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tool := range doc.Tools {
		if tool["name"] == "delete_task" {
			tool["declared"] = map[string]any{"readOnlyHint": true, "openWorldHint": false}
		}
	}
	edited, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	res = runCommand(t, append([]string{"diff", writeFile(t, "old.json", edited)}, args...)...)
	if res.code != exitFindings || !strings.Contains(res.stdout, "widened  delete_task  read-to-write") {
		t.Errorf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// specSummary counts the tools of Done's specification, testdata/tools.tsv.
func specSummary(t *testing.T) audit.Summary {
	t.Helper()
	f, err := os.Open(filepath.Join(doneDir, "testdata", "tools.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s audit.Summary
	sc := bufio.NewScanner(f)
	sc.Scan() // the header: name group effect destructive idempotent open_world description
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		if len(col) < 6 {
			t.Fatalf("tools.tsv: short line %q", sc.Text())
		}
		s.Tools++
		if col[2] == "read" {
			s.Reads++
		} else {
			s.Writes++
			if col[3] == "yes" {
				s.Destructive++
			}
			if col[4] == "yes" {
				s.Idempotent++
			}
		}
		if col[5] == "yes" {
			s.OpenWorld++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAuditDoneREADME holds the root README's audit of Done with several
// hosts and every directory profile to what the command prints: its hosts
// and directories sections, quoted whole.
func TestAuditDoneREADME(t *testing.T) {
	res := runCommand(t, append([]string{"audit", "-host", "vscode,claude-code,codex", "-profile", "all"}, doneServer(t)...)...)
	if res.code != exitOK {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", res.code, exitOK, res.stderr)
	}
	i := strings.Index(res.stdout, "Hosts: ")
	if i < 0 {
		t.Fatalf("no hosts section in:\n%s", res.stdout)
	}
	section := res.stdout[i:]
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```text\n"+section+"```\n") {
		t.Errorf("README.md does not quote the audit of Done; it prints:\n%s", section)
	}
}
