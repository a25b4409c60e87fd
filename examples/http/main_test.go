package main

import (
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/exampletest"
)

// TestHTTP builds the example and runs it with a token of each scope:
// the metadata, 401 without a valid token, 403 and the step-up challenge
// for a call the token's scope does not allow, and through go-sdk's
// client what each token may and may not call (see
// exampletest.TasksOverHTTP, which holds examples/mcpgo to the same).
func TestHTTP(t *testing.T) {
	exampletest.TasksOverHTTP(t, exampletest.Build(t, "."))
}
