package mcpeffect_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testTools are the tools of the test server: one of each kind of effect.
var testTools = []struct {
	name   string
	effect mcpeffect.Effect
}{
	{"get_task", mcpeffect.Read},
	{"search_web", mcpeffect.Read | mcpeffect.OpenWorld},
	{"create_task", mcpeffect.Write},
	{"add_label", mcpeffect.Idempotent},
	{"delete_task", mcpeffect.Destructive | mcpeffect.Idempotent},
	{"rotate_link", mcpeffect.Destructive},
	{"post_message", mcpeffect.Write | mcpeffect.OpenWorld},
}

// calls counts the calls that reached each tool's handler.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[name]++
}

func (c *calls) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func (c *calls) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

type taskArgs struct {
	ID string `json:"id,omitempty" jsonschema:"the task"`
}

// newTestServer returns a server with testTools, classified in a new
// registry and enforced with the middleware and opts.
func newTestServer(t testing.TB, opts *mcpeffect.MiddlewareOptions) (*mcp.Server, *mcpeffect.Registry, *calls) {
	t.Helper()
	r := mcpeffect.NewRegistry()
	c := &calls{n: map[string]int{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)
	for _, tool := range testTools {
		name := tool.name
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: name, Description: "test tool " + name}, tool.effect,
			func(ctx context.Context, req *mcp.CallToolRequest, args taskArgs) (*mcp.CallToolResult, any, error) {
				c.add(name)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran"}}}, nil, nil
			})
	}
	s.AddReceivingMiddleware(r.Middleware(opts))
	return s, r, c
}

// connect opens an in-process client session to s; the server side of the
// connection sees ctx.
func connect(t testing.TB, ctx context.Context, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	return connectAs(t, ctx, s, nil, "")
}

// connectAs opens an in-process session to s, whose requests see ctx, as
// a client with opts, speaking protocol ("": go-sdk's default), after
// setup, if any, has prepared the client. It is the one in-memory
// connection of these tests.
func connectAs(t testing.TB, ctx context.Context, s *mcp.Server, opts *mcp.ClientOptions, protocol string, setup ...func(*mcp.Client)) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v1"}, opts)
	for _, f := range setup {
		f(c)
	}
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
