// Package nodetest gives the tests that run node the packages they need,
// installed from the lock file beside them, and says loudly what could
// not run and how to make it run: go test hides a skipped test's reason,
// and the output of a package that passed, so a test that needs node must
// neither pass silently where it did not run nor fail where node is
// simply missing.
//
// A test calls [Packages], which installs what it needs, or [Installed],
// for packages the tests do not install themselves (the conformance
// suite, which brings its own Node.js); TestMain calls [Report] after
// m.Run. Where node, npm or the packages are missing, or npm ci fails
// (offline, say), the test is skipped and the reason kept for the report,
// with the command that makes it run, unless the environment variable
// MCPEFFECT_REQUIRE_NODE is set (as CI sets it): then it fails.
package nodetest

import (
	"bytes"
	"errors"
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
	notRun   = map[whyNot][]string{} // the tests not run, by reason
)

// whyNot is why tests did not run, and the command that makes them run.
type whyNot struct {
	reason, enable string
}

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
// is there already. If it cannot, it calls [NotRun] with the reason and
// the command that installs them.
func Packages(t testing.TB, dir, check string) (node string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		NotRun(t, "node is not installed", installNode)
	}
	if err := installed(dir, check); err != nil {
		enable := npmCI(dir)
		if errors.Is(err, errNoNPM) {
			enable = installNode
		}
		NotRun(t, fmt.Sprintf("%v (the tests install %s from its package-lock.json themselves, where node and npm are)", err, dir), enable)
	}
	return node
}

// Installed checks that dir/check, a file that npm ci in dir installs,
// is there, for the packages that the tests do not install themselves:
// if it is not, it calls [NotRun] with the command that installs them.
func Installed(t testing.TB, dir, check string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, check)); err != nil {
		NotRun(t, fmt.Sprintf("%s is not installed in %s", check, dir), npmCI(dir))
	}
}

// NotRun skips t for reason, and records it for [Report] with enable,
// the command that makes t run. If MCPEFFECT_REQUIRE_NODE is set, it
// fails t instead, saying the same.
func NotRun(t testing.TB, reason, enable string) {
	t.Helper()
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s; to run it: %s. %s is set, so this test must run", reason, enable, RequireEnv)
	}
	mu.Lock()
	w := whyNot{reason, enable}
	notRun[w] = append(notRun[w], t.Name())
	mu.Unlock()
	t.Skipf("NOT RUN: %s; to run it: %s", reason, enable)
}

// installNode is what makes node and npm run, on the Debian machines of
// CI (.ci/run).
const installNode = "install node and npm (on Debian: apt-get install -y nodejs npm)"

var errNoNPM = errors.New("npm is not installed")

// npmCI is the command that installs the packages of dir, as the tests
// and CI install them, with dir made absolute, so that it runs from
// anywhere.
func npmCI(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return "npm ci --prefix " + dir + " --no-audit --no-fund"
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
			in.err = errNoNPM
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
// with the command that makes them run and their names, and returns
// whether there was any. It writes nothing if every test ran. go test
// shows a passing package's output only with -v, so Report writes the
// same lines to the terminal too, where there is one: a person running
// go test ./... sees them.
func Report(w io.Writer) bool {
	mu.Lock()
	defer mu.Unlock()
	if len(notRun) == 0 {
		return false
	}
	var b strings.Builder
	whys := make([]whyNot, 0, len(notRun))
	for why := range notRun {
		whys = append(whys, why)
	}
	slices.SortFunc(whys, func(a, b whyNot) int { return strings.Compare(a.reason+a.enable, b.reason+b.enable) })
	where, _ := os.Getwd() // go test runs a package's tests in its directory
	for _, why := range whys {
		tests := notRun[why]
		shown := tests
		if len(shown) > 5 {
			shown = append(slices.Clone(shown[:5]), fmt.Sprintf("and %d more", len(tests)-5))
		}
		fmt.Fprintf(&b, "NOT RUN in %s: %d tests that need node: %s; to run them: %s: %s\n", where, len(tests), why.reason, why.enable, strings.Join(shown, ", "))
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
