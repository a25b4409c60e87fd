// Package exampletest builds and starts the one-file programs of
// examples/, and reads the blocks of a Markdown file, for the tests that
// hold the examples and the READMEs to what they say: a program a user
// copies must build, run and do what its README shows.
package exampletest

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Build builds the program of the package pkg (a directory, as go build
// sees it from the test's directory, such as ".") into a directory that
// is removed when t ends, and returns its path. With -short, t is skipped:
// building takes seconds.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build %s with: %v", pkg, err)
	}
	abs, err := filepath.Abs(pkg)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(abs))
	if out, err := exec.Command(goTool, "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// Serve starts cmd, a program that serves HTTP and logs "serving MCP at
// URL" on its standard error once it listens, and returns that URL. The
// program is killed when t ends. A program that exits, or stays silent
// for a minute, before it says where it serves fails t with what it
// wrote.
func Serve(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	type said struct {
		url, before string
	}
	found := make(chan said, 1)
	go func() {
		var before strings.Builder
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			if _, url, ok := strings.Cut(lines.Text(), "serving MCP at "); ok {
				found <- said{url: url}
				io.Copy(io.Discard, stderr)
				return
			}
			before.WriteString(lines.Text() + "\n")
		}
		found <- said{before: before.String()}
	}()
	select {
	case s := <-found:
		if s.url == "" {
			t.Fatalf("%s exited without saying where it serves:\n%s", cmd.Path, s.before)
		}
		return s.url
	case <-time.After(time.Minute):
		t.Fatalf("%s did not say where it serves within a minute", cmd.Path)
	}
	return ""
}

// Blocks returns the contents of the fenced blocks of markdown whose info
// string is lang ("go", "sh"), in order, each with its final newline.
func Blocks(markdown []byte, lang string) []string {
	var blocks []string
	fence := []byte("```" + lang + "\n")
	rest := markdown
	for {
		i := bytes.Index(rest, fence)
		if i < 0 {
			return blocks
		}
		if i > 0 && rest[i-1] != '\n' {
			rest = rest[i+len(fence):]
			continue
		}
		body := rest[i+len(fence):]
		end := bytes.Index(body, []byte("\n```"))
		if end < 0 {
			return blocks
		}
		blocks = append(blocks, string(body[:end+1]))
		rest = body[end+len("\n```"):]
	}
}
