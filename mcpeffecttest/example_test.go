package mcpeffecttest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notes is the state of a small notes server, in memory.
type notes struct {
	mu    sync.Mutex
	notes []*note // note n+1 is notes[n]
}

type note struct {
	text  string
	views int // shown to users: a view counter is data
}

type noteArgs struct {
	ID   int    `json:"id,omitempty"`
	Text string `json:"text,omitempty"`
}

// state captures what users see: every note, as the record "note/ID".
func (n *notes) state(context.Context) (mcpeffecttest.State, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := make(mcpeffecttest.State)
	for i, nt := range n.notes {
		st[fmt.Sprintf("note/%d", i+1)] = mcpeffecttest.Record{"text": nt.text, "views": nt.views}
	}
	return st, nil
}

// newNotesServer makes a fresh server on fresh state: Verify calls it for
// each example.
func newNotesServer(t testing.TB) mcpeffecttest.Instance[*notes] {
	n := new(notes)
	find := func(id int) (*note, error) {
		if id < 1 || id > len(n.notes) {
			return nil, errors.New("no such note")
		}
		return n.notes[id-1], nil
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, nil)
	r := mcpeffect.NewRegistry()
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "add_note"}, mcpeffect.Write,
		func(_ context.Context, _ *mcp.CallToolRequest, a noteArgs) (*mcp.CallToolResult, any, error) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.notes = append(n.notes, &note{text: a.Text})
			return nil, map[string]int{"id": len(n.notes)}, nil
		})
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "get_note"}, mcpeffect.Read,
		func(_ context.Context, _ *mcp.CallToolRequest, a noteArgs) (*mcp.CallToolResult, any, error) {
			n.mu.Lock()
			defer n.mu.Unlock()
			nt, err := find(a.ID)
			if err != nil {
				return nil, nil, err
			}
			nt.views++ // a read that writes: Verify will say so
			return nil, map[string]string{"text": nt.text}, nil
		})
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "edit_note"}, mcpeffect.Destructive|mcpeffect.Idempotent,
		func(_ context.Context, _ *mcp.CallToolRequest, a noteArgs) (*mcp.CallToolResult, any, error) {
			n.mu.Lock()
			defer n.mu.Unlock()
			nt, err := find(a.ID)
			if err != nil {
				return nil, nil, err
			}
			nt.text = a.Text
			return nil, nil, nil
		})
	server.AddReceivingMiddleware(r.Middleware(nil))
	return mcpeffecttest.Instance[*notes]{Server: server, Registry: r, State: n.state, Env: n}
}

// onNewNote makes a note through the server's own add_note, and returns
// the arguments of a call on it.
func onNewNote(text string) func(testing.TB, *notes, *mcpeffecttest.Session) any {
	return func(_ testing.TB, _ *notes, s *mcpeffecttest.Session) any {
		var created noteArgs
		s.CallTool("add_note", noteArgs{Text: "Buy milk"}, &created)
		return noteArgs{ID: created.ID, Text: text}
	}
}

func Example() {
	t := &printer{} // in a test, the test's own t

	inst := newNotesServer(t)
	mcpeffecttest.Check(t, inst.Server, inst.Registry)

	mcpeffecttest.Verify(t, newNotesServer, []mcpeffecttest.Example[*notes]{
		{Tool: "add_note", Name: "a note", Args: noteArgs{Text: "Buy milk"}},
		{Tool: "get_note", Name: "a new note", Setup: onNewNote("")},
		{Tool: "edit_note", Name: "a new note", Setup: onNewNote("Buy bread")},
		{Tool: "edit_note", Name: "refused to a reader", Setup: onNewNote("Buy bread"),
			Caller: func(ctx context.Context, _ *notes) context.Context {
				return mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly)
			},
			WantError: "refused"},
	}, nil)
	t.cleanup()
	// Output:
	// tool "get_note" is classified read, but example "a new note" changed the state on its first call, which a read must not:
	// 	record "note/1", field "views": 0 → 1
}

// printer is a testing.TB that prints what it is told to report, for this
// example only: a test passes its own t.
type printer struct {
	testing.TB // nil: only the methods below are called
	cleanups   []func()
}

func (p *printer) Helper()                        {}
func (p *printer) Context() context.Context       { return context.Background() }
func (p *printer) Cleanup(f func())               { p.cleanups = append(p.cleanups, f) }
func (p *printer) Logf(string, ...any)            {}
func (p *printer) Errorf(format string, a ...any) { fmt.Printf(format+"\n", a...) }

func (p *printer) cleanup() {
	for _, f := range slices.Backward(p.cleanups) {
		f()
	}
}
