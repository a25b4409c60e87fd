package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/hostile"
)

// runEnv, when set, makes the test binary run mcpeffect: see TestMain.
const runEnv = "MCPEFFECT_TEST_RUN"

// hostileStdio returns the arguments that make audit run the test binary
// as a hostile server over stdio.
func hostileStdio(t *testing.T, attack hostile.Attack, size string) []string {
	t.Helper()
	kind := "hostile:" + string(attack)
	if size != "" {
		kind += ":" + size
	}
	return stdioServer(t, kind)
}

// hostileHTTP serves s on a loopback address for the test, and returns
// the arguments that make audit reach it.
func hostileHTTP(t *testing.T, s *hostile.Server) []string {
	t.Helper()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return []string{"-url", ts.URL + "/mcp"}
}

// A childResult is what a run of mcpeffect in a process of its own left,
// with the most memory the process held (its maximum resident set, which
// includes the servers it ran and waited for).
type childResult struct {
	result
	maxRSS int64 // bytes, or -1 where the system does not say
}

// runChild runs mcpeffect with args in a process of its own: the test
// binary, run with runEnv.
func runChild(t *testing.T, args ...string) childResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Env = append(os.Environ(), runEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return childResult{result{code, stdout.String(), stderr.String()}, maxRSS(cmd.ProcessState)}
}

// TestAuditBoundedMemory sends the audit answers far larger than any
// tools/list needs: it must refuse each with an error that names the
// limit, having held no more than a bounded amount of memory, whatever
// the size of the answer: a gigabyte answer over HTTP, unbounded, took
// the audit to gigabytes of memory.
func TestAuditBoundedMemory(t *testing.T) {
	const gigabyte = 1 << 30
	// The most memory the audit may hold, its own runtime and the server
	// it runs included: a few times the limit of one message, and far
	// below the answers sent.
	maxRSS := int64(160 << 20)
	if raceEnabled {
		maxRSS *= 5
	}
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) []string
		stderr string // what stderr must say: the limit
	}{
		{"http json answer of 1 GiB", func(t *testing.T) []string {
			return hostileHTTP(t, &hostile.Server{Attack: hostile.Huge, Size: gigabyte})
		}, "an HTTP answer of more than 16 MiB"},
		{"http event stream of one event of 1 GiB", func(t *testing.T) []string {
			return hostileHTTP(t, &hostile.Server{Attack: hostile.Huge, Size: gigabyte, SSE: true})
		}, "an HTTP answer of more than 16 MiB"},
		{"http event stream of notifications without end", func(t *testing.T) []string {
			return hostileHTTP(t, &hostile.Server{Attack: hostile.Flood, Size: 64 << 10, SSE: true})
		}, "an HTTP answer of more than 16 MiB"},
		{"stdio line of 100 MB", func(t *testing.T) []string {
			return hostileStdio(t, hostile.Huge, "100000000")
		}, "a line of more than 16 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runChild(t, append([]string{"audit", "-timeout", "60s"}, tc.server(t)...)...)
			t.Logf("the audit held at most %d MiB", res.maxRSS>>20)
			if res.code != exitError {
				t.Errorf("exit code %d, want %d", res.code, exitError)
			}
			for _, s := range []string{tc.stderr, "while listing its tools"} {
				if !strings.Contains(res.stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, res.stderr)
				}
			}
			if res.maxRSS > maxRSS {
				t.Errorf("the audit held %d MiB, want at most %d MiB", res.maxRSS>>20, maxRSS>>20)
			}
		})
	}
}

// TestAuditTimeoutHolds audits servers that start an answer and never end
// it, or never give one: -timeout ends the audit, which says so. The
// audit must stop reading when the time is up, not when the server stops
// writing; a test of how long it took would be flaky on a loaded machine,
// so it asserts that the server was still writing when the audit ended,
// and logs the time.
func TestAuditTimeoutHolds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) []string
	}{
		{"http event stream that trickles", func(t *testing.T) []string {
			return hostileHTTP(t, &hostile.Server{Attack: hostile.Trickle, SSE: true})
		}},
		{"http json body that trickles", func(t *testing.T) []string {
			return hostileHTTP(t, &hostile.Server{Attack: hostile.Trickle})
		}},
		{"http silent", func(t *testing.T) []string { return hostileHTTP(t, &hostile.Server{Attack: hostile.Silent}) }},
		{"stdio line that trickles", func(t *testing.T) []string { return hostileStdio(t, hostile.Trickle, "") }},
		{"stdio notifications without end", func(t *testing.T) []string { return hostileStdio(t, hostile.Flood, "100") }},
		{"stdio silent", func(t *testing.T) []string { return hostileStdio(t, hostile.Silent, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res := runCommand(t, append([]string{"audit", "-timeout", "1s"}, tc.server(t)...)...)
			t.Logf("the audit ended %v after it started, with -timeout 1s", time.Since(start).Round(time.Millisecond))
			if res.code != exitError {
				t.Errorf("exit code %d, want %d", res.code, exitError)
			}
			if s := "no answer within 1s (-timeout) while listing its tools"; !strings.Contains(res.stderr, s) {
				t.Errorf("stderr does not say %q:\n%s", s, res.stderr)
			}
		})
	}
}

// TestAuditListingFails audits servers whose tools/list answers are
// wrong: the audit says what the server did, with the server's own words
// escaped, and nothing about a server that stopped.
func TestAuditListingFails(t *testing.T) {
	for _, tc := range []struct {
		attack hostile.Attack
		size   string
		stderr []string
	}{
		{hostile.RPCError, "", []string{`the server answered tools/list with an error (code -32603): "no tools for you\x1b[2J"`}},
		{hostile.RepeatCursor, "", []string{`the server gave the cursor "page-2" twice: its pages never end`}},
		{hostile.Mistyped, "", []string{`tool 2 of page 1: "name" is a number, want a string`}},
		{hostile.EndlessPages, "", []string{"more than 1000 pages of tools (the limit of pages)"}},
		{hostile.EndlessPages, "3000", []string{"more than 10000 tools (the limit of tools)"}},
	} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(string(tc.attack)+" "+tc.size+" "+transport, func(t *testing.T) {
				var args []string
				if transport == "stdio" {
					args = hostileStdio(t, tc.attack, tc.size)
				} else {
					s, err := hostile.ParseAttack(string(tc.attack) + ":" + cmpOr(tc.size, "0"))
					if err != nil {
						t.Fatal(err)
					}
					args = hostileHTTP(t, s)
				}
				res := runCommand(t, append([]string{"audit", "-timeout", "30s"}, args...)...)
				if res.code != exitError {
					t.Errorf("exit code %d, want %d", res.code, exitError)
				}
				for _, s := range tc.stderr {
					if !strings.Contains(res.stderr, s) {
						t.Errorf("stderr does not say %q:\n%s", s, res.stderr)
					}
				}
				for _, s := range []string{"stopped", "\x1b"} {
					if strings.Contains(res.stderr, s) {
						t.Errorf("stderr says %q:\n%s", s, res.stderr)
					}
				}
			})
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestDiffBounded: diff lists a live side as audit does, within the same
// limits and deadline.
func TestDiffBounded(t *testing.T) {
	old := writeFile(t, "old.json", cleanReport(t, func(map[string]any) {}))
	for _, tc := range []struct {
		name   string
		args   func(t *testing.T) []string
		stderr string
	}{
		{"http answer of 64 MiB", func(t *testing.T) []string {
			return []string{old, hostileHTTP(t, &hostile.Server{Attack: hostile.Huge, Size: 64 << 20})[1]}
		}, "an HTTP answer of more than 16 MiB"},
		{"stdio line of 64 MiB", func(t *testing.T) []string {
			return append([]string{old}, hostileStdio(t, hostile.Huge, "67108864")...)
		}, "a line of more than 16 MiB"},
		{"silent", func(t *testing.T) []string {
			return append([]string{"-timeout", "500ms", old}, hostileStdio(t, hostile.Silent, "")...)
		}, "no answer within 500ms (-timeout) while listing its tools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, append([]string{"diff"}, tc.args(t)...)...)
			if res.code != exitError || !strings.Contains(res.stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %s; want %d and %q", res.code, res.stderr, exitError, tc.stderr)
			}
		})
	}
}
