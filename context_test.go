package mcpeffect_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/nodetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioStartupScope runs this test binary as a stdio server started
// with a read-only scope, as a -read-only flag would, and calls it.
func TestStdioStartupScope(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	ctx := context.Background()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioServerEnv+"=read-only")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_task"}); err != nil || res.IsError {
		t.Errorf("get_task: %v", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_task"})
	if d, ok := mcpeffect.AsDeniedError(err); !ok || d.Granted != mcpeffect.ReadOnly {
		t.Errorf("create_task over stdio with a read-only start: %v", err)
	}
}

const stdioServerEnv = "MCPEFFECT_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if scope := os.Getenv(stdioServerEnv); scope != "" {
		s, err := mcpeffect.ParseScope(scope)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		server, _, _ := newTestServer(&testing.T{}, nil)
		if err := server.Run(mcpeffect.WithConnectionScope(context.Background(), s), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if e2eDir != "" {
		os.RemoveAll(e2eDir)
	}
	nodetest.Report(os.Stderr)
	os.Exit(code)
}

// TestCallerScopeFromContext: a handler reads the scope the middleware
// computed for its caller, the token's capped by the connection's.
func TestCallerScopeFromContext(t *testing.T) {
	for _, tc := range []struct {
		name       string
		token      mcpeffect.Scope // 0: no token
		connection mcpeffect.Scope // 0: none set
		want       mcpeffect.Scope
	}{
		{"connection only", 0, mcpeffect.NonDestructive, mcpeffect.NonDestructive},
		{"token only", mcpeffect.Full, 0, mcpeffect.Full},
		{"token capped by connection", mcpeffect.Full, mcpeffect.ReadOnly, mcpeffect.ReadOnly},
		{"connection wider than token", mcpeffect.ReadOnly, mcpeffect.Full, mcpeffect.ReadOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mcpeffect.NewRegistry()
			s := mcp.NewServer(&mcp.Implementation{Name: "scopes", Version: "v1"}, nil)
			var got mcpeffect.Scope
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "whoami"}, mcpeffect.Read,
				func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
					got = mcpeffect.CallerScopeFromContext(ctx)
					return &mcp.CallToolResult{}, nil, nil
				})
			var opts mcpeffect.MiddlewareOptions
			if tc.token != 0 {
				opts.Scope = func(context.Context, mcp.Request) mcpeffect.Scope { return tc.token }
			}
			s.AddReceivingMiddleware(r.Middleware(&opts))
			ctx := context.Background()
			if tc.connection != 0 {
				ctx = mcpeffect.WithConnectionScope(ctx, tc.connection)
			}
			ct, st := mcp.NewInMemoryTransports()
			ss, err := s.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v1"}, nil).Connect(context.Background(), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("CallerScopeFromContext = %s, want %s", got, tc.want)
			}
		})
	}
	if s := mcpeffect.CallerScopeFromContext(context.Background()); s != 0 {
		t.Errorf("outside a call: %s, want the zero Scope", s)
	}
}
