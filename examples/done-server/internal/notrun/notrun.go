// Package notrun says loudly which of Done's tests could not run, and the
// command that makes them run: go test shows neither a skipped test's
// reason nor the output of a package that passed, so a test that needs
// a program the machine lacks (Chromium, PostgreSQL) must neither pass
// silently where it did not run nor fail where the program is simply
// missing. Where CI sets the variable that requires the program, such a
// test fails instead.
//
// A test calls [Skip]; TestMain calls [Report] once the tests have run.
package notrun

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A Need is a program some tests need.
type Need struct {
	// What names it, in "tests that need What".
	What string
	// Enable is the command that installs it.
	Enable string
	// Require is the environment variable that, set to 1 (as CI sets
	// it), makes its absence a failure.
	Require string
}

var (
	mu     sync.Mutex
	notRun = map[Need]map[string][]string{} // the tests not run, by need and reason
)

// terminal is where Report writes its lines too; "" for nowhere.
var terminal = "/dev/tty"

// Skip skips t, which needs n and cannot have it for reason, and keeps
// it for [Report]; or fails t if n's Require variable is 1.
func Skip(t testing.TB, n Need, reason string) {
	t.Helper()
	if os.Getenv(n.Require) == "1" {
		t.Fatalf("%s, and %s=1: this test must run (%s)", reason, n.Require, n.Enable)
	}
	mu.Lock()
	if notRun[n] == nil {
		notRun[n] = map[string][]string{}
	}
	notRun[n][reason] = append(notRun[n][reason], t.Name())
	mu.Unlock()
	t.Skipf("NOT RUN: %s (%s)", reason, n.Enable)
}

// Line returns the line that says that tests, which need n, did not run
// in where (a package's directory, and the store they ran on) for reason.
func Line(n Need, where, reason string, tests []string) string {
	shown := tests
	if len(shown) > 5 {
		shown = append(slices.Clone(shown[:5]), fmt.Sprintf("and %d more", len(tests)-5))
	}
	return fmt.Sprintf("NOT RUN in %s: %d tests that need %s: %s: %s; to run them: %s (CI sets %s=1, which makes this a failure)\n",
		where, len(tests), n.What, reason, strings.Join(shown, ", "), n.Enable, n.Require)
}

// Report writes to w a line for each reason that tests were not run,
// with their names, where, such as "examples/done-server, on sqlite",
// and returns whether there was any. It writes nothing if every test ran.
// go test shows a passing package's output only with -v, so Report
// writes the same lines to the terminal too, where there is one: a person
// running go test ./... sees them.
func Report(w io.Writer, where string) bool {
	mu.Lock()
	defer mu.Unlock()
	var b strings.Builder
	needs := make([]Need, 0, len(notRun))
	for n := range notRun {
		needs = append(needs, n)
	}
	slices.SortFunc(needs, func(a, b Need) int { return strings.Compare(a.What, b.What) })
	for _, n := range needs {
		reasons := make([]string, 0, len(notRun[n]))
		for r := range notRun[n] {
			reasons = append(reasons, r)
		}
		slices.Sort(reasons)
		for _, r := range reasons {
			b.WriteString(Line(n, where, r, notRun[n][r]))
		}
	}
	if b.Len() == 0 {
		return false
	}
	Print(w, b.String())
	return true
}

// Print writes lines to w and to the terminal, where there is one.
func Print(w io.Writer, lines string) {
	io.WriteString(w, lines)
	if terminal == "" {
		return
	}
	if tty, err := os.OpenFile(terminal, os.O_WRONLY, 0); err == nil {
		io.WriteString(tty, lines)
		tty.Close()
	}
}
