package mcpgo_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkServer returns an mcp-go server whose tools are all added with
// mcpgo, with HideDenied, and its registry.
func checkServer() (*server.MCPServer, *mcpeffect.Registry, *calls) {
	r := mcpeffect.NewRegistry()
	c := &calls{}
	s := server.NewMCPServer("check", "v1", mcpgo.ServerOptions(r, &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{HideDenied: true}})...)
	for _, tool := range testTools {
		mcpgo.AddTool(s, r, mcp.NewTool(tool.name, mcp.WithString("id")), tool.effect, c.tool(tool.name))
	}
	mcpgo.AddTool(s, r, mcp.NewTool("pods", mcp.WithString("action")),
		mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{"get": mcpeffect.Read, "delete": mcpeffect.Destructive}),
		c.tool("pods"))
	return s, r, c
}

// stdioConnect is how mcpeffecttest.CheckClient connects to s in process.
func stdioConnect(s *server.MCPServer) func(ctx context.Context) (*sdk.ClientSession, error) {
	return func(ctx context.Context) (*sdk.ClientSession, error) {
		cs, closeFn, err := dialStdio(ctx, s, nil)
		if err != nil {
			return nil, err
		}
		// Check closes the session; the server's end closes with it.
		go func() { cs.Wait(); closeFn() }()
		return cs, nil
	}
}

// TestCheck runs mcpeffecttest.CheckClient against an mcp-go server
// through go-sdk's client: the hints it advertises are its registry's,
// and each scope is refused what it may not call, before any handler.
func TestCheck(t *testing.T) {
	s, r, c := checkServer()
	mcpeffecttest.CheckClient(t, stdioConnect(s), r)
	for _, name := range []string{"get_task", "create_task", "tag_task", "delete_task", "fetch_url", "pods"} {
		if n := c.count(name); n != 0 {
			t.Errorf("Check ran %s %d times", name, n)
		}
	}
}

// TestCheckFinds checks that CheckClient fails on an mcp-go server that
// does not tell the truth: a tool added with mcp-go alone, with hints
// written by hand, classified otherwise in the registry, and a tool
// without a classification, which HideDenied hides from every caller.
func TestCheckFinds(t *testing.T) {
	s, r, _ := checkServer()
	s.AddTool(mcp.NewTool("purge", mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("purged"), nil
		})
	if err := r.Add("purge", mcpeffect.Destructive); err != nil {
		t.Fatal(err)
	}
	s.AddTool(mcp.NewTool("stray"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	rec := &recorder{TB: t}
	mcpeffecttest.CheckClient(rec, stdioConnect(s), r)
	got := strings.Join(rec.errors, "\n")
	for _, want := range []string{`tool "purge", classified write|destructive: readOnlyHint`, `tool "stray" is on the server but has no effect classification`} {
		if !strings.Contains(got, want) {
			t.Errorf("CheckClient did not report %q; it reported:\n%s", want, got)
		}
	}
}

// A recorder is a testing.TB that keeps the errors reported to it.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}
