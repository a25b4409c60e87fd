// Package nodetest gives the tests that run node the packages they need,
// installed from the lock file beside them, and says loudly what could
// not run: go test hides a skipped test's reason, and the output of a
// package that passed, so a test that needs node must neither pass
// silently where it did not run nor fail where node is simply missing.
//
// A test calls [Packages]; TestMain calls [Report] after m.Run. Where
// node or npm is missing, or npm ci fails (offline, say), the test is
// skipped and the reason kept for the report, unless the environment
// variable MCPEFFECT_REQUIRE_NODE is set (as CI sets it): then it fails.
package nodetest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// RequireEnv names the environment variable that makes a test fail,
// rather than skip, when it cannot run node.
const RequireEnv = "MCPEFFECT_REQUIRE_NODE"

var (
	mu       sync.Mutex
	installs = map[string]*install{} // by directory
	notRun   = map[string][]string{} // the tests not run, by reason
)

// terminal is where Report writes its lines too; "" for nowhere.
var terminal = "/dev/tty"

type install struct {
	once sync.Once
	err  error
}

// Packages returns the path of node, once the packages of dir's
// package-lock.json are installed in dir/node_modules: it runs npm ci
// there, once for each directory in a test binary, unless dir/check (a
// file the tests need, such as node_modules/@modelcontextprotocol/sdk)
// is there already. If it cannot, it skips t, or fails it if
// MCPEFFECT_REQUIRE_NODE is set, and records why for [Report].
func Packages(t testing.TB, dir, check string) (node string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		err = installed(dir, check)
	} else {
		err = fmt.Errorf("node is not installed")
	}
	if err != nil {
		reason := fmt.Sprintf("%v (the tests install %s from its package-lock.json themselves, where node and npm are)", err, dir)
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s: %s is set, so this test must run", reason, RequireEnv)
		}
		mu.Lock()
		notRun[reason] = append(notRun[reason], t.Name())
		mu.Unlock()
		t.Skip(reason)
	}
	return node
}

// installed makes sure the packages of dir are installed.
func installed(dir, check string) error {
	if _, err := os.Stat(filepath.Join(dir, check)); err == nil {
		return nil
	}
	mu.Lock()
	in := installs[dir]
	if in == nil {
		in = &install{}
		installs[dir] = in
	}
	mu.Unlock()
	in.once.Do(func() {
		npm, err := exec.LookPath("npm")
		if err != nil {
			in.err = fmt.Errorf("npm is not installed")
			return
		}
		var out bytes.Buffer
		cmd := exec.Command(npm, "ci", "--prefix", dir, "--no-audit", "--no-fund")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			in.err = fmt.Errorf("npm ci in %s failed (%v): %s", dir, err, lastLine(out.String()))
			return
		}
		if _, err := os.Stat(filepath.Join(dir, check)); err != nil {
			in.err = fmt.Errorf("npm ci in %s did not install %s", dir, check)
		}
	})
	return in.err
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Report writes to w a line for each reason that tests were not run,
// with their names, and returns whether there was any. It writes nothing
// if every test ran. go test shows a passing package's output only with
// -v, so Report writes the same lines to the terminal too, where there is
// one: a person running go test ./... sees them.
func Report(w io.Writer) bool {
	mu.Lock()
	defer mu.Unlock()
	if len(notRun) == 0 {
		return false
	}
	var b strings.Builder
	reasons := make([]string, 0, len(notRun))
	for r := range notRun {
		reasons = append(reasons, r)
	}
	slices.Sort(reasons)
	where, _ := os.Getwd() // go test runs a package's tests in its directory
	for _, r := range reasons {
		tests := notRun[r]
		shown := tests
		if len(shown) > 5 {
			shown = append(slices.Clone(shown[:5]), fmt.Sprintf("and %d more", len(tests)-5))
		}
		fmt.Fprintf(&b, "NOT RUN in %s: %d tests that need node: %s: %s\n", where, len(tests), r, strings.Join(shown, ", "))
	}
	io.WriteString(w, b.String())
	if terminal == "" {
		return true
	}
	if tty, err := os.OpenFile(terminal, os.O_WRONLY, 0); err == nil {
		io.WriteString(tty, b.String())
		tty.Close()
	}
	return true
}
