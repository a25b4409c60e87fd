package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestRun runs the command end to end, briefly, on the two SDKs' servers
// (Done's build is left out: it takes minutes the first time): every
// server answers, and the table has a row of figures for each.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two servers")
	}
	root, err := workspace(t.Context())
	if err != nil {
		t.Skipf("percall runs in the workspace only: %v", err)
	}
	var stdout, stderr bytes.Buffer
	// -work with the clone's own go.work: the same server, built again.
	err = run(t.Context(), []string{"-done=false", "-options", "-work", filepath.Join(root, "go.work"),
		"-rounds", "2", "-calls", "6", "-turn", "2", "-warmup", "2"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	rows := map[string]bool{}
	figure := regexp.MustCompile(`^[0-9.]+ µs \([0-9.]+–[0-9.]+\)$`)
	ratio := regexp.MustCompile(`^\*\*[0-9]+\.[0-9]{3}x\*\*$`)
	for line := range strings.Lines(out) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ")
		if len(cells) != 7 || !figure.MatchString(strings.TrimSpace(cells[1])) {
			continue
		}
		name := strings.TrimSpace(cells[0])
		rows[name] = true
		if against := strings.TrimSpace(cells[2]); against != "" && !ratio.MatchString(strings.TrimSpace(cells[3])) {
			t.Errorf("row %q: against %s, ratio %q", name, against, cells[3])
		}
	}
	for _, want := range []string{
		"go-sdk v1.8.0, a trivial typed tool",
		"the same through `mcpeffect.AddTool` and its middleware",
		"mcp-go v1.2.1, a trivial tool",
		"the same through the mcpgo adapter (`ServerOptions`, `mcpgo.AddTool`)",
		"the first again, another process of the same server: the noise alone",
		"go-sdk, the same tool with a handler of the raw request (`Server.AddTool`)",
		"go-sdk, typed input and an output of type `any` (no output schema)",
		"the first row's server built with -work (go-sdk v1.8.0)",
	} {
		if !rows[want] {
			t.Errorf("no row of figures for %q in\n%s", want, out)
		}
	}
	if len(rows) != 8 {
		t.Errorf("%d rows of figures, want 8:\n%s", len(rows), out)
	}
	if runtime.GOOS == "linux" {
		if !strings.Contains(out, "server CPU a call") || !strings.Contains(out, "agrees with /proc/PID/stat") {
			t.Errorf("on Linux, the table is of server CPU, checked against /proc:\n%s", out)
		}
	} else if !strings.Contains(out, "the client's wall time a call, not the server's CPU") {
		t.Errorf("elsewhere than on Linux, the table says it is of wall time:\n%s", out)
	}
}

func TestRunFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-rounds", "0"},
		{"-calls", "0"},
		{"-turn", "0"},
		{"-warmup", "-1"},
		{"extra"},
		{"-work", "/nonexistent/go.work", "-done=false"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), args, &stdout, &stderr); err == nil {
			t.Errorf("percall %q: no error", args)
		}
	}
}
