package mcpeffect_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestAddToolAnnotations(t *testing.T) {
	s, r, _ := newTestServer(t, nil)
	cs := connect(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s)
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
		if e, _ := r.Effect(tool.Name); host.EffectOf(got) != e {
			t.Errorf("%s: the host reads %s, the server classified %s", tool.Name, host.EffectOf(got), e)
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
	if e, ok := r.Effect("get_task"); !ok || e != mcpeffect.Read {
		t.Errorf("registry holds %s, %t; want read", e, ok)
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

// TestAddToolPanicsWithAddError: a classification that Registry.Add
// refuses makes AddTool panic with Add's error, which a program that
// recovers can test.
func TestAddToolPanicsWithAddError(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tool   *mcp.Tool
		effect mcpeffect.Effect
		kind   error
	}{
		{"bad name", &mcp.Tool{Name: "bad name"}, mcpeffect.Read, mcpeffect.ErrInvalidToolName},
		{"invalid effect", &mcp.Tool{Name: "t"}, mcpeffect.Read | mcpeffect.Write, mcpeffect.ErrInvalidEffect},
		{"invalid effect and hints", &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, mcpeffect.Write | mcpeffect.Read, mcpeffect.ErrInvalidEffect},
		{"classified otherwise", &mcp.Tool{Name: "taken"}, mcpeffect.Destructive, mcpeffect.ErrAlreadyClassified},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := mcpeffect.NewRegistry()
			if err := r.Add("taken", mcpeffect.Write); err != nil {
				t.Fatal(err)
			}
			s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, tt.kind) {
					t.Errorf("AddTool panicked with %v, want an error wrapping %v", err, tt.kind)
				}
			}()
			mcpeffect.AddTool(s, r, tt.tool, tt.effect, func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
				return nil, nil, nil
			})
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
		cs := connect(t, mcpeffect.WithConnectionScope(ctx, tt.scope), s)
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

// TestAddToolFailsClosedWithoutMiddleware: a tool added with AddTool or
// AddToolHandler runs only behind the middleware; without it, every call
// is refused with a message that says how to install it, and the handler
// never runs, whatever the scope of the connection.
func TestAddToolFailsClosedWithoutMiddleware(t *testing.T) {
	for _, middleware := range []bool{false, true} {
		r := mcpeffect.NewRegistry()
		s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
		var mu sync.Mutex
		ran := map[string]int{}
		count := func(name string) {
			mu.Lock()
			defer mu.Unlock()
			ran[name]++
		}
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: "get_task"}, mcpeffect.Read, func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
			count("get_task")
			return &mcp.CallToolResult{}, nil, nil
		})
		mcpeffect.AddToolHandler(s, r, &mcp.Tool{Name: "purge", InputSchema: json.RawMessage(`{"type":"object"}`)}, mcpeffect.Destructive,
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				count("purge")
				return &mcp.CallToolResult{}, nil
			})
		if middleware {
			s.AddReceivingMiddleware(r.Middleware(nil))
		}
		cs := connect(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s)
		for _, name := range []string{"get_task", "purge"} {
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
			mu.Lock()
			n := ran[name]
			mu.Unlock()
			if middleware {
				if err != nil || n != 1 {
					t.Errorf("with the middleware, %s: err %v, handler ran %d times; want it to run once", name, err, n)
				}
				continue
			}
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != mcpeffect.CodeNotEnforced || n != 0 {
				t.Fatalf("without the middleware, %s: err %v, handler ran %d times; want CodeNotEnforced and no run", name, err, n)
			}
			for _, part := range []string{fmt.Sprintf("tool %q was not run", name), "the server has no mcpeffect middleware", "server.AddReceivingMiddleware(registry.Middleware(opts))"} {
				if !strings.Contains(rpcErr.Message, part) {
					t.Errorf("without the middleware, %s: message %q does not say %q", name, rpcErr.Message, part)
				}
			}
		}
	}
}

func TestAddToolNilHandler(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
	for name, add := range map[string]func(){
		"AddTool": func() {
			mcpeffect.AddTool[taskArgs, any](s, mcpeffect.NewRegistry(), &mcp.Tool{Name: "t"}, mcpeffect.Read, nil)
		},
		"AddToolHandler": func() {
			mcpeffect.AddToolHandler(s, mcpeffect.NewRegistry(), &mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, mcpeffect.Read, nil)
		},
	} {
		func() {
			defer func() {
				if p := recover(); !strings.Contains(fmt.Sprint(p), "nil handler") {
					t.Errorf("%s with a nil handler: panic %v, want one about the nil handler", name, p)
				}
			}()
			add()
		}()
	}
}
