package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestProgress: verify and audit draw their progress on stderr when it
// is a terminal (here a buffer that says it is one): the tools done
// of all and those running, the time so far, the line erased before the
// report; and nothing when it is not, as a log or a pipe is not.
func TestProgress(t *testing.T) {
	examples := writeFile(t, "shelf.json", []byte(shelfExamples))
	verifyArgs := append([]string{"verify", "-timeout", "1m", "-examples", examples}, stdioServer(t, "shelf")...)
	auditArgs := append([]string{"audit", "-timeout", "1m"}, stdioServer(t, "clean")...)

	res := runCommand(t, verifyArgs...)
	if res.code != exitFindings || strings.Contains(res.stderr, "\r") || res.stderr != "" {
		t.Errorf("verify, not on a terminal: exit %d, stderr %q; want nothing on it", res.code, res.stderr)
	}
	res = runCommand(t, auditArgs...)
	if res.stderr != "" {
		t.Errorf("audit, not on a terminal: stderr %q; want nothing on it", res.stderr)
	}

	res = runOnTerminal(t, append([]string{"verify", "-timeout", "1m", "-examples", examples}, stdioServer(t, "shelf")...)...)
	for _, s := range []string{"\rmcpeffect verify: 0:00; listing the tools", "\rmcpeffect verify: 0 of 4 tools, 0:0", "; running list", "\rmcpeffect verify: 4 of 4 tools, 0:0"} {
		if !strings.Contains(res.stderr, s) {
			t.Errorf("verify's progress does not show %q: %q", s, res.stderr)
		}
	}
	if !strings.HasSuffix(res.stderr, " \r") || !strings.Contains(res.stdout, "2 proven, 2 lie") {
		t.Errorf("verify's progress is not erased before the report: stderr ends %q, stdout %q", res.stderr[max(len(res.stderr)-20, 0):], res.stdout)
	}
	res = runOnTerminal(t, append([]string{"audit", "-timeout", "1m"}, stdioServer(t, "clean")...)...)
	for _, s := range []string{"\rmcpeffect audit: 0:00; starting the server", "; initializing the session", "; listing tools: 0 so far, page 1", "; listing tools: 4 so far, page 3"} {
		if !strings.Contains(res.stderr, s) {
			t.Errorf("audit's progress does not show %q: %q", s, res.stderr)
		}
	}
	if !strings.HasSuffix(res.stderr, " \r") || !strings.Contains(res.stdout, "get_note") {
		t.Errorf("audit's progress is not erased before the report: stderr %q", res.stderr)
	}
}

// A terminalBuffer keeps what is written to it, and says it is a
// terminal, as progress.IsTerminal asks.
type terminalBuffer struct{ bytes.Buffer }

func (*terminalBuffer) IsTerminal() bool { return true }

// runOnTerminal runs the command line args in this process, its
// standard error a terminal.
func runOnTerminal(t *testing.T, args ...string) result {
	t.Helper()
	var stdout bytes.Buffer
	var stderr terminalBuffer
	code := run(t.Context(), args, &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}
