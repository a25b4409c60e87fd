package nodetest

import (
	"strings"
	"testing"
)

// TestPackagesWithoutNode: where node cannot be found, a test that needs
// it is skipped, and the report at the end says which and why.
func TestPackagesWithoutNode(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv(RequireEnv, "")
	terminal = "" // the person running the tests is not told of this one
	var skipped bool
	t.Run("needs node", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Packages(t, t.TempDir(), "node_modules/x")
		t.Error("Packages returned without node")
	})
	if !skipped {
		t.Fatal("the test that needs node was not skipped")
	}
	var b strings.Builder
	if !Report(&b) {
		t.Fatal("Report says every test ran")
	}
	for _, s := range []string{"NOT RUN in ", "1 tests that need node: node is not installed", "TestPackagesWithoutNode/needs_node"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report does not say %q:\n%s", s, b.String())
		}
	}
	mu.Lock()
	clear(notRun)
	mu.Unlock()
}
