package mcpeffect_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect/internal/testing/exampletest"
)

// readmeSection returns the section of README.md under the heading
// "## title", up to the next heading of that level.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## "+title+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", title)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// TestREADMEExample holds the README to the quickstart's program: its
// first Go block is examples/stdio/main.go, byte for byte. TestStdio, in
// that package, builds it and calls it.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile(filepath.Join("examples", "stdio", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if blocks := exampletest.Blocks(readme, "go"); len(blocks) == 0 || blocks[0] != string(program) {
		t.Error("the first Go block of README.md is not examples/stdio/main.go")
	}
}

// TestREADMEQuickstart does what the README's quickstart says, from the
// clone (this repository): it runs the program of its first block,
// writes to it the lines of its JSON block, as a person would paste them,
// and wants the answers the quickstart shows, in order, a line each.
func TestREADMEQuickstart(t *testing.T) {
	section := readmeSection(t, "Quickstart")
	commands := exampletest.Blocks([]byte(section), "sh")
	pasted := exampletest.Blocks([]byte(section), "json")
	shown := exampletest.Blocks([]byte(section), "text")
	if len(commands) == 0 || len(pasted) != 1 || len(shown) != 1 {
		t.Fatalf("the quickstart has %d sh blocks, %d JSON blocks and %d text blocks; want a command, what to paste and what it answers", len(commands), len(pasted), len(shown))
	}
	lines := strings.Split(strings.TrimSuffix(commands[0], "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "git clone ") || lines[1] != "cd mcpeffect" || !strings.HasPrefix(lines[2], "go run ./") {
		t.Fatalf("the quickstart's first block is not a clone, a cd into it and a go run:\n%s", commands[0])
	}
	// go run is go build and a run of what it built.
	args := strings.Fields(lines[2])[2:]
	cmd := exec.Command(exampletest.Build(t, args[0]), args[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := io.WriteString(stdin, pasted[0]); err != nil {
		t.Fatal(err)
	}
	// The input stays open until every answer is read: go-sdk drops the
	// calls in flight when its input ends, as a person's Ctrl-D would.
	want := strings.Split(strings.TrimSuffix(shown[0], "\n"), "\n")
	handle := regexp.MustCompile(`authz_[A-Za-z0-9_-]+`)
	answers := make(chan string, 64)
	go func() {
		defer close(answers)
		for s := bufio.NewScanner(stdout); s.Scan(); {
			answers <- s.Text()
		}
	}()
	// go-sdk answers the calls as they finish, so the answers are matched
	// to the README's by their id; each refusal's handle is drawn afresh.
	idOf := func(line string) string {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal([]byte(line), &m)
		return string(m.ID)
	}
	byID := map[string]string{}
	for _, w := range want {
		byID[idOf(w)] = handle.ReplaceAllString(w, "authz_")
	}
	timeout := time.After(time.Minute)
	for i := range want {
		select {
		case got, ok := <-answers:
			if !ok {
				t.Fatalf("the program ended after %d answers, want %d", i, len(want))
			}
			id := idOf(got)
			w, ok := byID[id]
			if !ok {
				t.Errorf("answer %d, id %s, is not in the README, or came twice: %s", i+1, id, got)
				continue
			}
			delete(byID, id)
			if handle.ReplaceAllString(got, "authz_") != w {
				t.Errorf("the answer to request %s:\n got %s\nwant %s", id, got, w)
			}
		case <-timeout:
			t.Fatalf("no answer %d within a minute", i+1)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("at the end of its input, the program: %v", err)
	}
}
