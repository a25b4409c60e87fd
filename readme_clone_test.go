package mcpeffect_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/exampletest"
)

// TestREADMEFromClone does what the quickstart tells a newcomer to do
// while the module is not published: it runs the quickstart's last block,
// as written, beside a clone (this repository, linked as ../mcpeffect):
// a new module pointed at the clone, the example copied into it, tidied,
// the command line installed (into a directory of the test's) and the
// audit of the newcomer's own server, which must find nothing to say.
func TestREADMEFromClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("no bash to run the quickstart with: %v", err)
	}
	blocks := exampletest.Blocks([]byte(readmeSection(t, "Quickstart")), "sh")
	if len(blocks) < 2 {
		t.Fatal("the quickstart has no block of commands for a module of one's own")
	}
	script := blocks[len(blocks)-1]
	clone, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(clone, filepath.Join(dir, "mcpeffect")); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	cmd := exec.Command(bash, "-e", "-o", "pipefail", "-c", script)
	// The quickstart starts in the clone, reached through its link so
	// that cd .. leads beside it.
	cmd.Dir = filepath.Join(dir, "mcpeffect")
	// The newcomer's module is no part of this repository's workspace;
	// the clone finds its own go.work. Of a variable given twice, the
	// last counts.
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "GOWORK=") }),
		"PWD="+cmd.Dir, "GOBIN="+bin, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the quickstart's commands:\n%s\nfailed: %v\n%s", script, err, out)
	}
	for _, want := range []string{"tasks v1", "add_task ", "delete_task ", "get_task ", "No findings."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the audit of the new module's server does not say %q:\n%s", want, out)
		}
	}
}
