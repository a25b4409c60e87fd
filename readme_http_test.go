package mcpeffect_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/exampletest"
)

// TestREADMEHTTPExample holds the README's HTTP server to its program: a
// Go block of the README is examples/http/main.go, byte for byte. TestHTTP,
// in that package, builds it and calls it with a token of each scope.
func TestREADMEHTTPExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile(filepath.Join("examples", "http", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(exampletest.Blocks(readme, "go"), string(program)) {
		t.Error("README.md has no Go block that is examples/http/main.go")
	}
}
