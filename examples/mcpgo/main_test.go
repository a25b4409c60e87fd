package main

import (
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/exampletest"
)

// TestMCPGo builds the example and holds it to what examples/http does
// on go-sdk, through go-sdk's client: the same metadata, 401, step-up
// challenge, and the same calls allowed and refused for each token.
func TestMCPGo(t *testing.T) {
	exampletest.TasksOverHTTP(t, exampletest.Build(t, "."))
}
