package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestUsage asks for help as a new user would: every way shows every
// command and DONE_TOKEN, and a command's own help its flags.
func TestUsage(t *testing.T) {
	every := []string{"[serve] [-data DIR | -db URL] [-http ADDR] [-scope SCOPE]", "token create [-data DIR | -db URL] -scope SCOPE -kind KIND",
		"token list [-data DIR | -db URL]", "token revoke [-data DIR | -db URL] ID", "DONE_TOKEN", "DONE_DB", "COMMAND -h"}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-h"}, append(every, "Flags of serve:", "-http address")},
		{[]string{"--help"}, every},
		{[]string{"serve", "-h"}, every},
		{[]string{"help"}, every},
		{[]string{"token", "-h"}, every},
		{[]string{"token", "create", "-h"}, []string{"token create [-data DIR | -db URL]", "Flags of token create:", "-expires", "-kind"}},
		{[]string{"token", "list", "-h"}, []string{"token list [-data DIR | -db URL]", "Flags of token list:"}},
		{[]string{"token", "revoke", "-h"}, []string{"token revoke [-data DIR | -db URL] ID", "Flags of token revoke:"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), c.args, getenv(nil), &stdout, &stderr)
			if !errors.Is(err, flag.ErrHelp) || stdout.Len() > 0 {
				t.Errorf("err = %v, stdout %q; want flag.ErrHelp and nothing on stdout", err, &stdout)
			}
			for _, want := range c.want {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("the help does not show %q:\n%s", want, &stderr)
				}
			}
		})
	}

	// Asking for help is no failure: the process exits 0.
	cmd := exec.Command(doneServer(t), "-h")
	cmd.Env = serverEnv()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "token revoke") {
		t.Errorf("done-server -h: %v\n%s", err, out)
	}
}

// stdioProcess starts done-server over stdio in dir as prog (a path to
// the test binary, or a link to it), with stdin a pipe that stays open
// until the test closes it, and waits until it says it waits for a host.
// It returns the process, its stdin, and a function that returns all it
// wrote on stderr, once it has exited.
func stdioProcess(t *testing.T, dir, prog string, args ...string) (cmd *exec.Cmd, stdin io.WriteCloser, stderrText func() string) {
	t.Helper()
	cmd = exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Env = serverEnv("USER=alice")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var seen bytes.Buffer
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "it is not typed into") {
			break
		}
	}
	if !strings.Contains(seen.String(), "Done is waiting for an MCP host on stdin") {
		t.Fatalf("the process never said it waits for a host:\n%s", &seen)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for lines.Scan() {
			seen.WriteString(lines.Text() + "\n")
		}
	}()
	return cmd, stdin, func() string {
		<-done
		return seen.String()
	}
}

// TestStdioStops stops done-server over stdio as a person would, with
// Ctrl-C (SIGINT), as a system would (SIGTERM), and as a host does (end
// of input): each exit is 0 and quiet, and each start, not only the
// first, says that it waits for a host.
func TestStdioStops(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		stop func(cmd *exec.Cmd, stdin io.WriteCloser) error
	}{
		{"SIGINT", func(cmd *exec.Cmd, _ io.WriteCloser) error { return cmd.Process.Signal(os.Interrupt) }},
		{"SIGTERM", func(cmd *exec.Cmd, _ io.WriteCloser) error { return cmd.Process.Signal(syscall.SIGTERM) }},
		{"end of input", func(_ *exec.Cmd, stdin io.WriteCloser) error { return stdin.Close() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, stdin, stderr := stdioProcess(t, dir, doneServer(t))
			if err := c.stop(cmd, stdin); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("exit: %v, want 0\n%s", err, stderr())
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("still running 10 s after %s", c.name)
			}
			if out := stderr(); strings.Contains(out, "level=ERROR") || strings.Contains(out, "done-server:") {
				t.Errorf("the exit was not quiet:\n%s", out)
			}
		})
	}
}

// TestHintsNameTheCommandUsed starts done-server for the first time as a
// binary and as go run leaves it: the commands its first start suggests
// are those the person can run, not a done-server that may not exist.
func TestHintsNameTheCommandUsed(t *testing.T) {
	// A directory holding a go.mod of this package, as its own is, and
	// a link to done-server where go run puts what it builds.
	module := t.TempDir()
	writeFile(t, filepath.Join(module, "go.mod"), "module "+mainPackage()+"\n\ngo 1.25.0\n")
	goRun := filepath.Join(t.TempDir(), "go-build1234", "b001", "exe", "done-server")
	if err := os.MkdirAll(filepath.Dir(goRun), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(doneServer(t), goRun); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	binDir := t.TempDir()
	if err := os.Symlink(doneServer(t), filepath.Join(binDir, "done-server")); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, dir, prog string
		want            string
	}{
		{"go run . in the package", module, goRun, "\tgo run . token create -data ./done-data -scope non-destructive -kind agent"},
		{"go run elsewhere", t.TempDir(), goRun, "\tgo run " + mainPackage() + " token create"},
		{"a binary in the working directory", binDir, "./done-server", "\t./done-server token create -data ./done-data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, stdin, stderr := stdioProcess(t, c.dir, c.prog)
			stdin.Close()
			err := cmd.Wait()
			out := stderr()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("the first start does not suggest %q:\n%s", c.want, out)
			}
			for line := range strings.Lines(out) {
				if strings.HasPrefix(line, "\tdone-server ") {
					t.Errorf("a hint names a done-server that was not run: %q", line)
				}
			}
		})
	}
}

// TestCommandName names the program as it was run, for the commands its
// messages suggest: under go run, from a temporary directory or from the
// build cache, the go run command that works where the person is.
func TestCommandName(t *testing.T) {
	pkg := mainPackage()
	inPackage, atRoot, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(inPackage, "go.mod"), "module "+pkg+"\n")
	writeFile(t, filepath.Join(atRoot, "examples", "done-server", "go.mod"), "module "+pkg+"\n")
	t.Setenv("GOCACHE", "/var/cache/gobuild")
	for _, c := range []struct {
		arg0, cwd, want string
	}{
		{"/usr/local/bin/done-server", elsewhere, "/usr/local/bin/done-server"},
		{"./done-server", elsewhere, "./done-server"},
		{"done-server", elsewhere, "done-server"},
		{"/opt/my tools/done-server", elsewhere, "'/opt/my tools/done-server'"},
		{"/tmp/it's/done-server", elsewhere, `'/tmp/it'\''s/done-server'`},
		{"/tmp/go-build4096/b001/exe/done-server", inPackage, "go run ."},
		{"/tmp/go-build4096/b001/exe/done-server", atRoot, "go run ./examples/done-server"},
		{"/tmp/go-build4096/b001/exe/done-server", elsewhere, "go run " + pkg},
		{"/home/alice/.cache/go-build/3f/3fa4-d/done-server", inPackage, "go run ."},
		{"/var/cache/gobuild/3f/3fa4-d/done-server", atRoot, "go run ./examples/done-server"},
	} {
		if got := commandName(c.arg0, c.cwd); got != c.want {
			t.Errorf("commandName(%q, %s) = %q, want %q", c.arg0, c.cwd, got, c.want)
		}
	}
}
