package admit

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// running counts the calls under way, and the most at once.
type running struct {
	now, most atomic.Int32
}

func (r *running) enter() func() {
	n := r.now.Add(1)
	for {
		m := r.most.Load()
		if n <= m || r.most.CompareAndSwap(m, n) {
			break
		}
	}
	return func() { r.now.Add(-1) }
}

// TestQueue runs many tool calls at once through the queue: no more than
// its turns run together, a call that pass lets through and another
// method run anyway, and one whose client goes away while it waits gives
// up.
func TestQueue(t *testing.T) {
	for _, onWorkers := range []bool{false, true} {
		q := New(3, onWorkers)
		release := make(chan struct{})
		var r running
		admit := q.Middleware(func(_ context.Context, req mcp.Request) bool {
			return req.(*mcp.CallToolRequest).Params.Name == "search_context"
		})(func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			defer r.enter()()
			<-release
			return nil, nil
		})
		call := func(ctx context.Context, tool string) error {
			_, err := admit(ctx, "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool}})
			return err
		}
		ctx := t.Context()
		var wg sync.WaitGroup
		for range 3 * q.Turns() {
			wg.Go(func() { call(ctx, "get_task") })
		}
		waitFor(t, func() bool { return r.now.Load() == int32(q.Turns()) })
		wg.Go(func() { call(ctx, "search_context") })
		wg.Go(func() { admit(ctx, "tools/list", &mcp.ListToolsRequest{}) })
		waitFor(t, func() bool { return r.now.Load() == int32(q.Turns())+2 })
		gone, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		if err := call(gone, "create_task"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a call whose client went away while it waited: %v", err)
		}
		cancel()
		close(release)
		wg.Wait()
		if got := r.most.Load(); got != int32(q.Turns())+2 {
			t.Errorf("workers %t: %d calls ran at once, want %d turns and the 2 let through", onWorkers, got, q.Turns())
		}
	}
}

// TestAside: a call waiting aside holds no turn, so that the calls
// queued behind it run; it takes a turn again before it goes on, waiting
// for one if need be, and gives up that wait when its client goes away.
func TestAside(t *testing.T) {
	q := New(1, true)
	var r running
	waiting := make(chan struct{})
	answer := make(chan struct{})
	var afterAside atomic.Int32
	admit := q.Middleware(nil)(func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if req.(*mcp.CallToolRequest).Params.Name == "ask" {
			if err := Aside(ctx, func() { close(waiting); <-answer }); err != nil {
				return nil, err
			}
			defer r.enter()()
			afterAside.Add(1)
			time.Sleep(time.Millisecond)
			return nil, nil
		}
		defer r.enter()()
		time.Sleep(time.Millisecond)
		return nil, nil
	})
	call := func(ctx context.Context, tool string) error {
		_, err := admit(ctx, "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool}})
		return err
	}
	ctx := t.Context()
	asked := make(chan error, 1)
	go func() { asked <- call(ctx, "ask") }()
	<-waiting
	// The one turn is free while the person is asked.
	for range 5 {
		if err := call(ctx, "get_task"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { call(ctx, "get_task") })
	}
	close(answer)
	wg.Wait()
	if err := <-asked; err != nil || afterAside.Load() != 1 {
		t.Fatalf("the call that asked: %v", err)
	}
	if got := r.most.Load(); got != 1 {
		t.Errorf("%d calls ran at once with one turn", got)
	}

	// Its client gone while it waits to take a turn again: it gives up.
	block := make(chan struct{})
	holding := make(chan struct{})
	hold := q.Middleware(nil)(func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		close(holding)
		<-block
		return nil, nil
	})
	gone, cancel := context.WithCancel(ctx)
	backErr := make(chan error, 1)
	inAside := make(chan struct{})
	back := q.Middleware(nil)(func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		err := Aside(ctx, func() {
			close(inAside)
			<-holding // another call takes the turn meanwhile
		})
		backErr <- err
		return nil, err
	})
	go back(gone, "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "ask"}})
	<-inAside
	go hold(ctx, "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "slow"}})
	cancel()
	if err := <-backErr; !errors.Is(err, context.Canceled) {
		t.Errorf("taking a turn again after its client went away: %v", err)
	}
	close(block)
	// Every turn is given back: a call runs.
	if err := call(ctx, "get_task"); err != nil {
		t.Error(err)
	}
	// Outside a queue, Aside only waits.
	ran := false
	if err := Aside(context.Background(), func() { ran = true }); err != nil || !ran {
		t.Errorf("Aside outside a queue: %v, ran %t", err, ran)
	}
}

// TestWorkers runs calls on workers: each returns once its call has run,
// calls at once each get a worker, and a panic or a runtime.Goexit in a
// call comes back to the caller as a panic with the stack where it
// happened, the worker's, and leaves the workers working.
func TestWorkers(t *testing.T) {
	w := newWorkers()
	var ran atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { w.run(func() { ran.Add(1) }) })
	}
	wg.Wait()
	if n := ran.Load(); n != 50 {
		t.Fatalf("%d calls ran, want 50", n)
	}

	caught := func(f func()) (p *Panic) {
		defer func() { p, _ = recover().(*Panic) }()
		w.run(f)
		return nil
	}
	p := caught(func() { explodeOnWorker() })
	if p == nil || p.Value != "on purpose" || !strings.Contains(string(p.Stack), "explodeOnWorker") {
		t.Errorf("a panic on a worker came back as %+v, want its value and the stack where it happened", p)
	}
	p = caught(runtime.Goexit)
	if p == nil || !strings.Contains(p.String(), "Goexit") {
		t.Errorf("runtime.Goexit on a worker came back as %+v, want a panic that names it", p)
	}
	// The workers go on.
	done := false
	w.run(func() { done = true })
	if !done {
		t.Error("a call after the panics did not run")
	}
}

func explodeOnWorker() { panic("on purpose") }

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
