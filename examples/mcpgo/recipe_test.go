package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/exampletest"
)

// TestRecipe does what mcpgo/README.md tells a newcomer to do while the
// modules are not published: in a new module whose program is this
// example, beside a clone (this repository, linked as ../mcpeffect), it
// runs the README's commands but the clone, as written, and builds the
// program.
func TestRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("no bash to run the recipe with: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "mcpgo", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, install, ok := strings.Cut(string(readme), "\n## Install\n")
	install, _, _ = strings.Cut(install, "\n## ")
	blocks := exampletest.Blocks([]byte(install), "sh")
	if !ok || len(blocks) != 1 {
		t.Fatalf("mcpgo/README.md has no section Install with one block of commands")
	}
	clone, script, _ := strings.Cut(blocks[0], "\n")
	if clone != "git clone https://github.com/mcpeffect/mcpeffect ../mcpeffect" {
		t.Fatalf("the recipe does not start with the clone beside the module: %q", clone)
	}

	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(repo, filepath.Join(dir, "mcpeffect")); err != nil {
		t.Fatal(err)
	}
	module := filepath.Join(dir, "tasks")
	if err := os.Mkdir(module, 0o755); err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(module, "main.go"), program, 0o644); err != nil {
		t.Fatal(err)
	}
	// The newcomer's module is no part of this repository's workspace.
	env := append(slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "GOWORK=") }), "GOWORK=off")
	for _, step := range []string{"go mod init example.com/tasks", script, "go build -o tasks ."} {
		cmd := exec.Command(bash, "-e", "-o", "pipefail", "-c", step)
		cmd.Dir, cmd.Env = module, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s\nfailed: %v\n%s", step, err, out)
		}
	}
	mod, err := os.ReadFile(filepath.Join(module, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"github.com/mcpeffect/mcpeffect => ../mcpeffect", "github.com/mcpeffect/mcpeffect/mcpgo => ../mcpeffect/mcpgo", "github.com/mark3labs/mcp-go"} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("the module's go.mod has no %q:\n%s", want, mod)
		}
	}
}
