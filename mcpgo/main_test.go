package mcpgo_test

import (
	"os"
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/nodetest"
)

// TestMain says, at the end, which tests did not run for want of node or
// the TypeScript client's packages, and the command that installs them
// (see nodetest).
func TestMain(m *testing.M) {
	code := m.Run()
	nodetest.Report(os.Stderr)
	os.Exit(code)
}
