package mcpeffect_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestREADMEFromClone does what the README tells a newcomer to do while
// the module is not published: a module of their own, pointed at a clone
// (this repository) with go mod edit, tidied and built with the README's
// first program.
func TestREADMEFromClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	clone, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	program, err := os.ReadFile(filepath.Join("testdata", "readme", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), program, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"mod", "init", "example.com/tasks"},
		{"mod", "edit", "-require", "github.com/mcpeffect/mcpeffect@v0.0.0", "-replace", "github.com/mcpeffect/mcpeffect=" + clone},
		{"mod", "tidy"},
		{"build", "-o", filepath.Join(dir, "tasks"), "."},
	} {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		// The newcomer's module is no part of this repository's
		// workspace.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
}
