//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAuditTimeoutStdio audits a server that reads its requests and
// answers none, and goes on running when its input is closed. The
// deadline of -timeout holds for the shutdown too: the server is killed
// when the time is up, not asked to stop after a grace period (go-sdk's
// CommandTransport waits five seconds, then sends SIGTERM, which this
// server records). The test asserts what happened rather than how long
// it took, which would be flaky on a loaded machine; it logs the time.
func TestAuditTimeoutStdio(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record")
	t.Setenv(recordEnv, record)
	args := append([]string{"audit", "-timeout", "1s"}, stdioServer(t, "hang")...)

	start := time.Now()
	res := runCommand(t, args...)
	t.Logf("the audit ended %v after it started, with -timeout 1s", time.Since(start).Round(time.Millisecond))

	if res.code != exitError {
		t.Errorf("exit code %d, want %d", res.code, exitError)
	}
	for _, s := range []string{
		"no answer within 1s (-timeout) while waiting for the answer to initialize",
		"raise -timeout",
		"its standard error ended with:\n    hang server: reading requests, answering none",
	} {
		if !strings.Contains(res.stderr, s) {
			t.Errorf("stderr does not say %q:\n%s", s, res.stderr)
		}
	}

	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("the server recorded nothing: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	pid, err := strconv.Atoi(strings.TrimPrefix(lines[0], "pid "))
	if err != nil {
		t.Fatalf("record %q: no pid", data)
	}
	if len(lines) > 1 {
		t.Errorf("the server received %q after the deadline, want to be killed at it", lines[1:])
	}
	// The audit has waited for the server it killed: no process is left.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server (pid %d) is still there after the audit: kill(pid, 0) = %v", pid, err)
	}
}
