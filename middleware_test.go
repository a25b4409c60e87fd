package mcpeffect_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMiddlewareScopes calls every tool with every scope, over the real
// protocol, and checks both the answer and whether the handler ran.
func TestMiddlewareScopes(t *testing.T) {
	s, r, c := newTestServer(t, nil)
	ctx := context.Background()
	for _, scope := range []mcpeffect.Scope{0, mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full} {
		cs := connect(t, mcpeffect.WithConnectionScope(ctx, scope), s)
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
				d, ok := mcpeffect.AsDeniedError(err)
				if !ok {
					t.Fatalf("refused call: err %v, want a DeniedError", err)
				}
				need, _ := r.Required(tool.name)
				wantDenial := mcpeffect.DeniedError{Tool: tool.name, Classified: true, Required: need, RequiredScopeName: mcpeffect.ScopeNames{}.Name(need), Granted: scope}
				checkEnvelope(t, d)
				if withoutEnvelope(*d) != wantDenial {
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
		cs := connect(t, mcpeffect.WithConnectionScope(ctx, mcpeffect.Full), s)
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
		d, ok := mcpeffect.AsDeniedError(err)
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
			cs := connect(t, mcpeffect.WithConnectionScope(ctx, scope), s)
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
		cs := connect(t, mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), s)
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
	if err := call(connect(t, mcpeffect.WithConnectionScope(ctx, mcpeffect.NonDestructive), s)); err == nil || c.count("delete_task") != 1 {
		t.Errorf("custom scope capped by the connection: %v, want a refusal", err)
	}
}

func TestMiddlewareOnDenied(t *testing.T) {
	var mu sync.Mutex
	var got []mcpeffect.DeniedError
	s, _, _ := newTestServer(t, &mcpeffect.MiddlewareOptions{OnDenied: func(_ context.Context, d *mcpeffect.DeniedError) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, *d)
	}})
	ctx := context.Background()
	cs := connect(t, mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), s)
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
	// Prompts need a scope too, read-only by default: the zero Scope
	// lists none of them.
	if res, err := cs.ListPrompts(ctx, nil); err != nil || len(res.Prompts) != 0 {
		t.Errorf("prompts/list without a scope: %v, %v", res, err)
	}
	if res, err := connect(t, mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), s).ListPrompts(ctx, nil); err != nil || len(res.Prompts) != 1 {
		t.Errorf("prompts/list with a read-only scope: %v, %v", res, err)
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
