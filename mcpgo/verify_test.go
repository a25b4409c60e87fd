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

// A taskStore is the data of the mcp-go server that TestVerify proves.
type taskStore struct {
	mu     sync.Mutex
	next   int
	titles map[string]string
}

func (st *taskStore) state(context.Context) (mcpeffecttest.State, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := mcpeffecttest.State{}
	for id, title := range st.titles {
		s["task/"+id] = mcpeffecttest.Record{"title": title}
	}
	return s, nil
}

// newTaskInstance returns a fresh mcp-go task server, served over
// Streamable HTTP, for mcpeffecttest.Verify. With lie, rename_task is
// classified as a write that only adds, which it is not: it overwrites.
func newTaskInstance(t testing.TB, lie bool) mcpeffecttest.Instance[*taskStore] {
	st := &taskStore{titles: map[string]string{}}
	r := mcpeffect.NewRegistry()
	s := server.NewMCPServer("tasks", "v1", mcpgo.ServerOptions(r, nil)...)
	text := func(req mcp.CallToolRequest, k string) string { return req.GetString(k, "") }
	mcpgo.AddTool(s, r, mcp.NewTool("create_task", mcp.WithString("title")), mcpeffect.Write,
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			st.mu.Lock()
			defer st.mu.Unlock()
			st.next++
			id := fmt.Sprint(st.next)
			st.titles[id] = text(req, "title")
			return mcp.NewToolResultStructured(map[string]any{"id": id}, "created "+id), nil
		})
	mcpgo.AddTool(s, r, mcp.NewTool("get_task", mcp.WithString("id")), mcpeffect.Read,
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			st.mu.Lock()
			defer st.mu.Unlock()
			return mcp.NewToolResultText(st.titles[text(req, "id")]), nil
		})
	mcpgo.AddTool(s, r, mcp.NewTool("delete_task", mcp.WithString("id")), mcpeffect.Destructive|mcpeffect.Idempotent,
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			st.mu.Lock()
			defer st.mu.Unlock()
			delete(st.titles, text(req, "id"))
			return mcp.NewToolResultText("deleted"), nil
		})
	rename := mcpeffect.Destructive | mcpeffect.Idempotent
	if lie {
		rename = mcpeffect.Write | mcpeffect.Idempotent
	}
	mcpgo.AddTool(s, r, mcp.NewTool("rename_task", mcp.WithString("id"), mcp.WithString("title")), rename,
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			st.mu.Lock()
			defer st.mu.Unlock()
			st.titles[text(req, "id")] = text(req, "title")
			return mcp.NewToolResultText("renamed"), nil
		})
	url := serveHTTP(t, s, r, nil).URL + "/mcp"
	return mcpeffecttest.Instance[*taskStore]{
		Registry: r,
		State:    st.state,
		Env:      st,
		// Over HTTP the caller is its token: every session here is the
		// owner's, with the full scope.
		Connect: func(context.Context) (*sdk.ClientSession, error) { return dialHTTP(url, "full-token", nil) },
	}
}

// taskExamples are the examples of every tool of newTaskInstance.
var taskExamples = []mcpeffecttest.Example[*taskStore]{
	{Tool: "create_task", Args: map[string]any{"title": "Buy milk"}},
	{Tool: "get_task", Setup: withTask},
	{Tool: "delete_task", Setup: withTask},
	{Tool: "rename_task", Setup: func(t testing.TB, st *taskStore, s *mcpeffecttest.Session) any {
		args := withTask(t, st, s).(map[string]any)
		args["title"] = "Buy oat milk"
		return args
	}},
}

// withTask makes a task through the server's own create_task, and
// returns the arguments that name it.
func withTask(t testing.TB, _ *taskStore, s *mcpeffecttest.Session) any {
	var out struct {
		ID string `json:"id"`
	}
	s.CallTool("create_task", map[string]any{"title": "Buy milk"}, &out)
	return map[string]any{"id": out.ID}
}

// TestVerify runs mcpeffecttest.Verify against an mcp-go server through
// go-sdk's client over HTTP: every tool's classification is true.
func TestVerify(t *testing.T) {
	mcpeffecttest.Verify(t, func(t testing.TB) mcpeffecttest.Instance[*taskStore] { return newTaskInstance(t, false) }, taskExamples, nil)
}

// TestVerifyFinds checks that Verify fails the mcp-go server whose
// rename_task is classified as a write that only adds, naming the tool
// and the field it overwrote.
func TestVerifyFinds(t *testing.T) {
	rec := &recorder{TB: t}
	mcpeffecttest.Verify(rec, func(t testing.TB) mcpeffecttest.Instance[*taskStore] { return newTaskInstance(t, true) }, taskExamples, nil)
	got := strings.Join(rec.errors, "\n")
	if !strings.Contains(got, `tool "rename_task"`) || !strings.Contains(got, `"title"`) || strings.Contains(got, "create_task") {
		t.Errorf("Verify did not find that rename_task, and it alone, overwrites the title; it reported:\n%s", got)
	}
	t.Logf("Verify reports: %s", got)
}
