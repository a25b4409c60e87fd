package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAdmit runs many tool calls at once through the registry's
// middleware and the queue, as Done chains them: no more than the
// queue's turns run together, and a call waits for a turn only if it is
// a tool call of a closed world, as the decision that admitted it says;
// one whose client goes away while it waits gives up, and a call the
// registry refuses never reaches the queue.
func TestAdmit(t *testing.T) {
	e := newEnv(t)
	turns := e.done.queue.Turns()
	release := make(chan struct{})
	var running, most atomic.Int32
	inner := func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		return nil, nil
	}
	admit := e.done.enforcer(e.registry).Middleware()(e.done.queue.Middleware(openWorld)(inner))
	call := func(ctx context.Context, tool string) error {
		_, err := admit(ctx, "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool, Arguments: []byte(`{}`)}})
		return err
	}
	ctx := mcpeffect.WithConnectionScope(t.Context(), mcpeffect.Full)

	var wg sync.WaitGroup
	for range 3 * turns {
		wg.Go(func() { call(ctx, "get_task") })
	}
	waitFor(t, func() bool { return running.Load() == int32(turns) })
	// Every turn is taken: an open-world tool and another method run
	// anyway, and a call whose client gives up stops waiting.
	for _, c := range []struct{ method, tool string }{{"tools/call", "search_context"}, {"tools/list", ""}} {
		wg.Go(func() {
			var req mcp.Request = &mcp.ListToolsRequest{}
			if c.tool != "" {
				req = &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: c.tool, Arguments: []byte(`{}`)}}
			}
			admit(ctx, c.method, req)
		})
	}
	waitFor(t, func() bool { return running.Load() == int32(turns)+2 })
	gone, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := call(gone, "create_task"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call whose client went away while it waited: %v", err)
	}
	// Refused, it takes no turn: it returns at once, every turn taken.
	readOnly := mcpeffect.WithConnectionScope(t.Context(), mcpeffect.ReadOnly)
	if err := call(readOnly, "delete_task"); err == nil {
		t.Error("a refused call ran")
	}
	close(release)
	wg.Wait()
	if got := most.Load(); got != int32(turns)+2 {
		t.Errorf("%d calls ran at once, want %d turns and the 2 let through", got, turns)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
