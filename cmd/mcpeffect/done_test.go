package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
)

// doneDir is the Done example server, a module of its own in this
// repository.
const doneDir = "../../examples/done-server"

// TestAuditDoneServer builds the Done example server and audits it over
// stdio: a server whose tools all come from mcpeffect.AddTool has no
// finding, even at the warning level, and the summary matches the
// specification of its tools.
func TestAuditDoneServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Done server")
	}
	bin := filepath.Join(t.TempDir(), "done-server")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = doneDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the Done server: %v\n%s", err, out)
	}
	data := t.TempDir()
	secret, err := exec.Command(bin, "token", "create", "-data", data, "-scope", "read-only", "-kind", "human", "-name", "auditor").Output()
	if err != nil {
		t.Fatalf("minting a token: %v", err)
	}
	t.Setenv("DONE_TOKEN", strings.TrimSpace(string(secret)))

	code, report := auditJSON(t, "-fail-on", "warning", "--", bin, "-data", data)
	if code != 0 || len(report.Findings) != 0 {
		t.Errorf("exit %d, findings %+v; want a clean audit", code, report.Findings)
	}
	if want := specSummary(t); report.Summary != want {
		t.Errorf("summary %+v, want %+v from the specification", report.Summary, want)
	}
	if report.Server.Name != "done" {
		t.Errorf("server %+v", report.Server)
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
