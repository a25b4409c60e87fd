package mcpeffect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
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
	{"close_task", mcpeffect.Idempotent},
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
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestAddToolAnnotations(t *testing.T) {
	s, r, _ := newTestServer(t, nil)
	cs := connect(t, mcpeffect.WithScope(context.Background(), mcpeffect.Full), s)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(testTools) {
		t.Fatalf("listed %d tools, want %d", len(res.Tools), len(testTools))
	}
	for _, tool := range res.Tools {
		got, want := tool.Annotations, r.Annotations(tool.Name)
		if got == nil || got.DestructiveHint == nil || got.OpenWorldHint == nil {
			t.Fatalf("%s: annotations %+v leave a hint out", tool.Name, got)
		}
		if got.ReadOnlyHint != want.ReadOnlyHint || *got.DestructiveHint != *want.DestructiveHint ||
			got.IdempotentHint != want.IdempotentHint || *got.OpenWorldHint != *want.OpenWorldHint {
			t.Errorf("%s advertises %+v, want %+v", tool.Name, got, want)
		}
		if e, _ := r.Effect(tool.Name); mcpeffect.EffectOf(got) != e {
			t.Errorf("%s: the host reads %s, the server classified %s", tool.Name, mcpeffect.EffectOf(got), e)
		}
	}
}

func TestAddToolKeepsTitleAndCallerTool(t *testing.T) {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
	in := &mcp.Tool{Name: "get_task", Annotations: &mcp.ToolAnnotations{Title: "Get a task"}}
	mcpeffect.AddTool(s, r, in, mcpeffect.Read, func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	})
	if in.Annotations.ReadOnlyHint || in.Annotations.DestructiveHint != nil {
		t.Errorf("AddTool changed the caller's tool: %+v", in.Annotations)
	}
	if r.Title("get_task") != "Get a task" || r.Annotations("get_task").Title != "Get a task" {
		t.Errorf("title not kept in the registry: %q", r.Title("get_task"))
	}
	cs := connect(t, context.Background(), s)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Tools[0].Annotations; a.Title != "Get a task" || !a.ReadOnlyHint {
		t.Errorf("advertised %+v, want the title and readOnlyHint", a)
	}
}

func TestAddToolPanics(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name      string
		pre       func(r *mcpeffect.Registry) // classification before AddTool
		tool      *mcp.Tool
		effect    mcpeffect.Effect
		wantPanic string // "" for no panic
	}{
		{"hints agree", nil, &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no, OpenWorldHint: &no}}, mcpeffect.Read, ""},
		{"readOnly on a write", nil, &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, mcpeffect.Write, `tool "t" is classified write, but its annotations say readOnlyHint: true`},
		{"destructive false on a destructive write", nil, &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no}}, mcpeffect.Destructive, "destructiveHint: false"},
		{"destructive on a read", nil, &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}}, mcpeffect.Read, "destructiveHint: true"},
		{"idempotent on an additive write", nil, &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{IdempotentHint: true}}, mcpeffect.Write, "idempotentHint: true"},
		{"closed world on an open one", nil, &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{OpenWorldHint: &no}}, mcpeffect.Read | mcpeffect.OpenWorld, "openWorldHint: false"},
		{"invalid effect", nil, &mcp.Tool{Name: "t"}, mcpeffect.Read | mcpeffect.Destructive, "Read cannot be combined with Destructive"},
		{"bad name", nil, &mcp.Tool{Name: "bad name"}, mcpeffect.Read, `tool name "bad name"`},
		{"classified otherwise before", func(r *mcpeffect.Registry) { r.Add("t", mcpeffect.Write) }, &mcp.Tool{Name: "t"}, mcpeffect.Destructive, `tool "t" is already classified as write`},
		{"classified the same before", func(r *mcpeffect.Registry) { r.Add("t", mcpeffect.Write) }, &mcp.Tool{Name: "t"}, mcpeffect.Write, ""},
		{"nil tool", nil, nil, mcpeffect.Read, "nil tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mcpeffect.NewRegistry()
			if tt.pre != nil {
				tt.pre(r)
			}
			s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
			var got string
			func() {
				defer func() {
					if p := recover(); p != nil {
						got = fmt.Sprint(p)
					}
				}()
				mcpeffect.AddTool(s, r, tt.tool, tt.effect, func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
					return nil, nil, nil
				})
			}()
			if tt.wantPanic == "" {
				if got != "" {
					t.Fatalf("AddTool panicked: %s", got)
				}
				if e, ok := r.Effect("t"); !ok || e != tt.effect {
					t.Errorf("registry holds %s, %t; want %s", e, ok, tt.effect)
				}
				return
			}
			if !strings.Contains(got, tt.wantPanic) {
				t.Fatalf("AddTool panic = %q, want it to contain %q", got, tt.wantPanic)
			}
		})
	}
}

func TestAddToolHandler(t *testing.T) {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
	var ran int
	mcpeffect.AddToolHandler(s, r, &mcp.Tool{Name: "purge", InputSchema: json.RawMessage(`{"type":"object"}`)}, mcpeffect.Destructive,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ran++
			return &mcp.CallToolResult{}, nil
		})
	s.AddReceivingMiddleware(r.Middleware(nil))
	ctx := context.Background()
	for _, tt := range []struct {
		scope   mcpeffect.Scope
		allowed bool
	}{{mcpeffect.NonDestructive, false}, {mcpeffect.Full, true}} {
		cs := connect(t, mcpeffect.WithScope(ctx, tt.scope), s)
		before := ran
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "purge"})
		if (err == nil) != tt.allowed || (ran > before) != tt.allowed {
			t.Errorf("scope %s: err %v, handler ran %t; want allowed %t", tt.scope, err, ran > before, tt.allowed)
		}
	}
	tools, err := connect(t, ctx, s).ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := tools.Tools[0].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("purge advertises %+v, want destructive", a)
	}
}

// TestMiddlewareScopes calls every tool with every scope, over the real
// protocol, and checks both the answer and whether the handler ran.
func TestMiddlewareScopes(t *testing.T) {
	s, r, c := newTestServer(t, nil)
	ctx := context.Background()
	for _, scope := range []mcpeffect.Scope{0, mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full} {
		cs := connect(t, mcpeffect.WithScope(ctx, scope), s)
		for _, tool := range testTools {
			t.Run(fmt.Sprintf("%s/%s", scope, tool.name), func(t *testing.T) {
				before := c.count(tool.name)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.name, Arguments: taskArgs{ID: "1"}})
				ran := c.count(tool.name) > before
				want := scope.Allows(tool.effect)
				if want != r.Allowed(tool.name, scope) {
					t.Fatalf("Scope.Allows and Registry.Allowed disagree")
				}
				if want {
					if err != nil || res.IsError || !ran {
						t.Fatalf("allowed call: result %v, err %v, handler ran %t", res, err, ran)
					}
					return
				}
				if ran {
					t.Fatal("the handler of a refused call ran")
				}
				d, ok := mcpeffect.AsDenial(err)
				if !ok {
					t.Fatalf("refused call: err %v, want a Denial", err)
				}
				need, _ := r.Required(tool.name)
				wantDenial := mcpeffect.Denial{Tool: tool.name, Classified: true, Required: need, RequiredScope: mcpeffect.ScopeNames{}.Name(need), Granted: scope}
				if *d != wantDenial {
					t.Errorf("denial %+v, want %+v", *d, wantDenial)
				}
				// The message, as any client shows it, says it all in words.
				for _, part := range []string{fmt.Sprintf("%q", tool.name), need.String(), mcpeffect.ScopeNames{}.Name(need)} {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not mention %q", err, part)
					}
				}
			})
		}
	}
}

// TestMiddlewareUnclassified adds a tool with plain go-sdk, bypassing the
// registry: no scope may call it.
func TestMiddlewareUnclassified(t *testing.T) {
	s, _, _ := newTestServer(t, nil)
	var ran bool
	mcp.AddTool(s, &mcp.Tool{Name: "sneaky_write"}, func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
		ran = true
		return &mcp.CallToolResult{}, nil, nil
	})
	ctx := context.Background()
	for _, name := range []string{"sneaky_write", "no_such_tool"} {
		cs := connect(t, mcpeffect.WithScope(ctx, mcpeffect.Full), s)
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
		d, ok := mcpeffect.AsDenial(err)
		if !ok || d.Classified || d.Tool != name || !strings.Contains(err.Error(), "no effect classification") {
			t.Errorf("%s with full scope: err %v, want a denial for an unclassified tool", name, err)
		}
	}
	if ran {
		t.Error("the handler of an unclassified tool ran")
	}
}

func TestMiddlewareHideDenied(t *testing.T) {
	ctx := context.Background()
	for _, hide := range []bool{false, true} {
		s, r, _ := newTestServer(t, &mcpeffect.MiddlewareOptions{HideDenied: hide})
		mcp.AddTool(s, &mcp.Tool{Name: "unclassified"}, func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
		for _, scope := range []mcpeffect.Scope{0, mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full} {
			cs := connect(t, mcpeffect.WithScope(ctx, scope), s)
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, tool := range res.Tools {
				got = append(got, tool.Name)
			}
			for _, tool := range append(slices.Clone(testTools), struct {
				name   string
				effect mcpeffect.Effect
			}{"unclassified", 0}) {
				if !hide || r.Allowed(tool.name, scope) {
					want = append(want, tool.name)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("hide %t, scope %s: listed %v, want %v", hide, scope, got, want)
			}
			wantCache := "public"
			if hide {
				wantCache = "private"
			}
			if res.CacheScope != wantCache {
				t.Errorf("hide %t: cacheScope %q, want %q", hide, res.CacheScope, wantCache)
			}
		}
		// The server's own list is whole after filtered lists were served.
		cs := connect(t, mcpeffect.WithScope(ctx, mcpeffect.ReadOnly), s)
		if res, err := cs.ListTools(ctx, nil); err != nil || (!hide && len(res.Tools) != len(testTools)+1) {
			t.Errorf("hide %t: second listing %d tools, %v", hide, len(res.Tools), err)
		}
	}
}

func TestMiddlewareCustomScope(t *testing.T) {
	// The scope comes from the client's name, and a connection scope caps it.
	s, _, c := newTestServer(t, &mcpeffect.MiddlewareOptions{
		Scope: func(ctx context.Context, req mcp.Request) mcpeffect.Scope {
			if sr, ok := req.(*mcp.CallToolRequest); ok && sr.Session.InitializeParams().ClientInfo.Name == "test-client" {
				return mcpeffect.Full
			}
			return 0
		},
	})
	ctx := context.Background()
	call := func(cs *mcp.ClientSession) error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_task"})
		return err
	}
	if err := call(connect(t, ctx, s)); err != nil || c.count("delete_task") != 1 {
		t.Errorf("custom scope full: %v", err)
	}
	if err := call(connect(t, mcpeffect.WithScope(ctx, mcpeffect.NonDestructive), s)); err == nil || c.count("delete_task") != 1 {
		t.Errorf("custom scope capped by the connection: %v, want a refusal", err)
	}
}

func TestMiddlewareOnDenied(t *testing.T) {
	var mu sync.Mutex
	var got []mcpeffect.Denial
	s, _, _ := newTestServer(t, &mcpeffect.MiddlewareOptions{OnDenied: func(_ context.Context, d *mcpeffect.Denial) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, *d)
	}})
	ctx := context.Background()
	cs := connect(t, mcpeffect.WithScope(ctx, mcpeffect.ReadOnly), s)
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_task"})
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_task"})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Tool != "create_task" || got[0].Granted != mcpeffect.ReadOnly {
		t.Errorf("OnDenied saw %+v, want one denial of create_task", got)
	}
}

func TestMiddlewarePassesOtherMethods(t *testing.T) {
	s, _, _ := newTestServer(t, &mcpeffect.MiddlewareOptions{HideDenied: true})
	s.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	ctx := context.Background()
	cs := connect(t, ctx, s) // no scope at all
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	if res, err := cs.ListPrompts(ctx, nil); err != nil || len(res.Prompts) != 1 {
		t.Errorf("prompts/list: %v", err)
	}
}

func TestMiddlewarePanicsOnBadScopeNames(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "is given to both") {
			t.Errorf("panic = %v", p)
		}
	}()
	mcpeffect.NewRegistry().Middleware(&mcpeffect.MiddlewareOptions{ScopeNames: mcpeffect.ScopeNames{ReadOnly: "x", Full: "x"}})
}

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
	if d, ok := mcpeffect.AsDenial(err); !ok || d.Granted != mcpeffect.ReadOnly {
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
		if err := server.Run(mcpeffect.WithScope(context.Background(), s), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
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
				ctx = mcpeffect.WithScope(ctx, tc.connection)
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
