package main

import (
	"os"
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/nodetest"
)

// TestMain says, at the end, which tests did not run for want of the
// conformance suite, and the npm ci that installs it (see nodetest).
func TestMain(m *testing.M) {
	code := m.Run()
	nodetest.Report(os.Stderr)
	os.Exit(code)
}
