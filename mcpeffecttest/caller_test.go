package mcpeffecttest_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callerEnv makes the tests that fail on purpose run, in the test binary
// that TestFailuresAtCallersLine starts.
const callerEnv = "MCPEFFECTTEST_FAIL_ON_PURPOSE"

// TestFailuresAtCallersLine runs tests that call Check and Verify on
// servers that are wrong, and holds where their failures are reported:
// at the line of the call in the caller's test, never at a line inside
// the library, which would tell its user nothing.
func TestFailuresAtCallersLine(t *testing.T) {
	if os.Getenv(callerEnv) != "" {
		t.Skip("the parent")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reported := regexp.MustCompile(`(?m)^\s+([a-z_]+\.go):\d+: `)
	for _, name := range []string{"TestCheckFailsOnPurpose", "TestVerifyFailsOnPurpose"} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(exe, "-test.run=^"+name+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), callerEnv+"=1")
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("%s passed, want it to fail:\n%s", name, out)
			}
			files := reported.FindAllStringSubmatch(string(out), -1)
			if len(files) == 0 {
				t.Fatalf("no failure with its file and line:\n%s", out)
			}
			for _, f := range files {
				if f[1] != "caller_test.go" {
					t.Errorf("a failure is reported at %s, want caller_test.go:\n%s", f[1], out)
				}
			}
		})
	}
}

func TestCheckFailsOnPurpose(t *testing.T) {
	if os.Getenv(callerEnv) == "" {
		t.Skip("fails on purpose: run by TestFailuresAtCallersLine")
	}
	s, r, _ := server(t, true, nil)
	// A tool the registry does not classify, and another whose handler
	// runs without the middleware's check.
	mcp.AddTool(s, &mcp.Tool{Name: "unclassified"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	})
	mcpeffecttest.Check(t, s, r)
}

func TestVerifyFailsOnPurpose(t *testing.T) {
	if os.Getenv(callerEnv) == "" {
		t.Skip("fails on purpose: run by TestFailuresAtCallersLine")
	}
	examples := []mcpeffecttest.Example[*tasks]{{Tool: "peek_task", Name: "the seed", Setup: onSeed(taskArgs{})}}
	mcpeffecttest.Verify(t, taskServer("peek_task"), examples, nil)
	mcpeffecttest.Verify(t, taskServer("peek_task"), examples, &mcpeffecttest.VerifyOptions{Parallel: true})
}
