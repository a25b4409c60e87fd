package mcpgo_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHideDenied checks that with HideDenied each list shows only what
// the caller may call or read, and that a call of a hidden tool is still
// refused naming the scope it needs, not answered "tool not found" as
// mcp-go's own tool filter answers.
func TestHideDenied(t *testing.T) {
	for _, hide := range []bool{false, true} {
		ts := newTestServer(t, &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{HideDenied: hide}}, false)
		t.Run(fmt.Sprint("HideDenied=", hide), func(t *testing.T) {
			cs := connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly), ts.s, nil)
			ctx := context.Background()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			want := []string{"create_task", "delete_task", "fetch_url", "get_task", "pods", "tag_task", "unclassified_tool"}
			if hide {
				// pods may be called with action "get".
				want = []string{"fetch_url", "get_task", "pods"}
			}
			if !slices.Equal(names, want) {
				t.Errorf("HideDenied %t: tools/list shows %v, want %v", hide, names, want)
			}
			res, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range res.Resources {
				uris = append(uris, r.URI)
			}
			slices.Sort(uris)
			if wantURIs := map[bool][]string{false: {"docs://readme", "notes://payroll"}, true: {"docs://readme"}}[hide]; !slices.Equal(uris, wantURIs) {
				t.Errorf("HideDenied %t: resources/list shows %v, want %v", hide, uris, wantURIs)
			}
			tmpls, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(tmpls.ResourceTemplates); n != map[bool]int{false: 1, true: 0}[hide] {
				t.Errorf("HideDenied %t: resources/templates/list shows %d templates", hide, n)
			}
			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var pnames []string
			for _, p := range prompts.Prompts {
				pnames = append(pnames, p.Name)
			}
			slices.Sort(pnames)
			if wantP := map[bool][]string{false: {"audit", "summarize"}, true: {"summarize"}}[hide]; !slices.Equal(pnames, wantP) {
				t.Errorf("HideDenied %t: prompts/list shows %v, want %v", hide, pnames, wantP)
			}
			// A hidden tool is refused, with the scope it needs.
			_, err = callTool(cs, "delete_task")
			if d := denied(t, err, "delete_task"); d.RequiredScopeName != mcpeffect.DefaultFullScope {
				t.Errorf("HideDenied %t: refusal %+v", hide, d)
			}
		})
	}
}

// TestHooksReplaced checks that a server whose hooks a later WithHooks
// replaced, so that its lists would go unfiltered, refuses every call,
// saying why.
func TestHooksReplaced(t *testing.T) {
	t.Run("replaced", testHooksReplaced)
	t.Run("given first", testHooksGivenFirst)
}

func testHooksReplaced(t *testing.T) {
	ts := newTestServer(t, &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{HideDenied: true}}, false, server.WithHooks(&server.Hooks{}))
	cs := connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), ts.s, nil)
	_, err := callTool(cs, "get_task")
	if err == nil || !strings.Contains(err.Error(), "pass server.WithHooks before mcpgo.ServerOptions") {
		t.Errorf("get_task on a server whose hooks were replaced: %v, want a refusal that says why", err)
	}
	if n := ts.calls.count("get_task"); n != 0 {
		t.Errorf("get_task ran %d times", n)
	}
}

// testHooksGivenFirst checks that hooks given before ServerOptions are
// kept, and the server works.
func testHooksGivenFirst(t *testing.T) {
	var seen atomic.Int32
	h := &server.Hooks{}
	h.AddBeforeCallTool(func(context.Context, any, *mcp.CallToolRequest) { seen.Add(1) })
	r := mcpeffect.NewRegistry()
	s := server.NewMCPServer("t", "v1", append([]server.ServerOption{server.WithHooks(h)}, mcpgo.ServerOptions(r, nil)...)...)
	c := &calls{}
	mcpgo.AddTool(s, r, toolNamed("get_task"), mcpeffect.Read, c.tool("get_task"))
	cs2 := connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s, nil)
	if _, err := callTool(cs2, "get_task"); err != nil || c.count("get_task") != 1 {
		t.Errorf("get_task with hooks given first: %v", err)
	}
	if seen.Load() != 1 {
		t.Errorf("the hook given before ServerOptions saw %d calls, want 1", seen.Load())
	}
}

// TestHostileNames calls tools whose names are near those of the server,
// in ways a case mapping or a lax comparison would confuse: none runs a
// handler, and none is let through as another tool.
func TestHostileNames(t *testing.T) {
	ts := newTestServer(t, nil, false)
	cs := connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly), ts.s, nil)
	for _, name := range []string{
		"DELETE_TASK", "delete_task ", " delete_task", "delete_task\x00", "delete_task\u200b",
		"delete_tas\u212a", // KELVIN SIGN, whose lower case is k
		"ｄｅｌｅｔｅ＿ｔａｓｋ", "", strings.Repeat("a", 1<<16), "get_task/../delete_task",
	} {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err == nil {
			t.Errorf("tool %.40q: the call succeeded", name)
		}
	}
	for _, tool := range testTools {
		if n := ts.calls.count(tool.name); n != 0 {
			t.Errorf("%s ran %d times", tool.name, n)
		}
	}
	// Names that the registry refuses cannot be classified at all.
	for _, name := range []string{"", "delete task", "delete_tas\u212a", strings.Repeat("a", 129)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddTool accepted the name %.40q", name)
				}
			}()
			mcpgo.AddTool(ts.s, ts.r, toolNamed(name), mcpeffect.Read, ts.calls.tool(name))
		}()
	}
}

// TestHideDeniedHTTP checks that the lists are filtered by the bearer
// token's scope over HTTP, whose TokenInfo reaches mcp-go's hooks.
func TestHideDeniedHTTP(t *testing.T) {
	opts := &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{HideDenied: true}}
	ts := newTestServer(t, opts, false)
	url := serveHTTP(t, ts.s, ts.r, opts).URL + "/mcp"
	for token, want := range map[string][]string{
		"read-token":  {"fetch_url", "get_task", "pods"},
		"write-token": {"create_task", "fetch_url", "get_task", "pods", "tag_task"},
		"no-scope":    nil,
	} {
		res, err := connectHTTP(t, url, token, nil).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("%s: tools/list shows %v, want %v", token, names, want)
		}
	}
}
