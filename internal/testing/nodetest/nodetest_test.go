package nodetest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// reportOf returns what Report writes, and forgets it.
func reportOf(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	if !Report(&b) {
		t.Fatal("Report says every test ran")
	}
	mu.Lock()
	clear(notRun)
	mu.Unlock()
	return b.String()
}

// TestPackagesWithoutNode: where node cannot be found, a test that needs
// it is skipped, and the report at the end says which, why, and what
// makes it run.
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
	report := reportOf(t)
	for _, s := range []string{"NOT RUN in ", "1 tests that need node: node is not installed; to run them: install node and npm", "TestPackagesWithoutNode/needs_node"} {
		if !strings.Contains(report, s) {
			t.Errorf("report does not say %q:\n%s", s, report)
		}
	}
}

// TestInstalled: a test whose packages are not installed, and which does
// not install them, is skipped, and the report names the npm ci that
// installs them, with the directory made absolute.
func TestInstalled(t *testing.T) {
	t.Setenv(RequireEnv, "")
	terminal = ""
	dir := t.TempDir()
	var skipped bool
	for _, name := range []string{"first", "second"} {
		t.Run(name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			Installed(t, dir, "node_modules/suite/index.js")
		})
		if !skipped {
			t.Fatalf("%s: the test whose packages are missing was not skipped", name)
		}
	}
	report := reportOf(t)
	want := fmt.Sprintf("2 tests that need node: node_modules/suite/index.js is not installed in %s; to run them: npm ci --prefix %s --no-audit --no-fund: TestInstalled/first, TestInstalled/second\n", dir, dir)
	if !strings.HasSuffix(report, want) {
		t.Errorf("report:\n%s\nwant it to end with:\n%s", report, want)
	}

	// Once installed, the test runs.
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", "suite"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node_modules", "suite", "index.js"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("installed", func(t *testing.T) {
		Installed(t, dir, "node_modules/suite/index.js")
		if t.Skipped() {
			t.Error("skipped, with its packages installed")
		}
	})
}

// A recorder is a testing.TB that notes how a test ended, and ends it as
// testing does, with runtime.Goexit.
type recorder struct {
	testing.TB
	ended string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return "TestRequired" }
func (r *recorder) Fatalf(format string, args ...any) {
	r.ended = "failed: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Skipf(format string, args ...any) {
	r.ended = "skipped: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestRequired: with MCPEFFECT_REQUIRE_NODE set, as CI sets it, a test
// that cannot run fails, saying why and what makes it run, and is not
// counted among those not run.
func TestRequired(t *testing.T) {
	t.Setenv(RequireEnv, "1")
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		NotRun(r, "the suite is not installed", "npm ci --prefix /x")
	}()
	<-done
	want := "failed: the suite is not installed; to run it: npm ci --prefix /x. MCPEFFECT_REQUIRE_NODE is set, so this test must run"
	if r.ended != want {
		t.Errorf("ended %q, want %q", r.ended, want)
	}
	var b strings.Builder
	if Report(&b) {
		t.Errorf("a test that failed is reported as not run:\n%s", b.String())
	}
}
