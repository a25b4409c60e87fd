// Package admit lets a few tool calls run at once and queues the others,
// in the order they came, each then run on a goroutine whose stack has
// grown already. It is there for Done's load on a few cores, not for what
// Done teaches: see the README beside this file for why, and where
// upstream would make it unneeded.
package admit

import (
	"context"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Queue admits the tool calls of a server: at most its turns run at
// once, and the others wait for one, in the order they came, or until
// their client gives up. It is safe for concurrent use.
type Queue struct {
	slots   chan struct{} // nil admits every call at once
	workers *workers      // nil runs each call on its request's goroutine
}

// New returns a queue of turns calls at once, run on warm workers if
// onWorkers (see [workers]); turns <= 0 admits every call at once.
func New(turns int, onWorkers bool) *Queue {
	q := &Queue{}
	if turns > 0 {
		q.slots = make(chan struct{}, turns)
	}
	if onWorkers {
		q.workers = newWorkers()
	}
	return q
}

// Turns returns how many calls q runs at once; 0 for no bound.
func (q *Queue) Turns() int { return cap(q.slots) }

type turnKey struct{}

// A turn is the place of one admitted call, which the call may give back
// while it waits on something other than the server (see [Aside]).
type turn struct {
	q     *Queue
	mu    sync.Mutex
	aside int  // the Asides of the call under way
	held  bool // the call holds its slot
}

// Middleware returns receiving middleware that admits each tools/call
// through q, unless pass reports that it needs no turn (a call that waits
// on a source outside the server, not on its cores). Every other method
// goes through at once.
func (q *Queue) Middleware(pass func(context.Context, mcp.Request) bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" || (pass != nil && pass(ctx, req)) {
				return next(ctx, method, req)
			}
			if q.slots != nil {
				select {
				case q.slots <- struct{}{}:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				t := &turn{q: q, held: true}
				defer t.leave()
				ctx = context.WithValue(ctx, turnKey{}, t)
			}
			if q.workers == nil {
				return next(ctx, method, req)
			}
			var res mcp.Result
			var err error
			q.workers.run(func() { res, err = next(ctx, method, req) })
			return res, err
		}
	}
}

// leave gives t's slot back, if the call still holds it.
func (t *turn) leave() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		t.held = false
		<-t.q.slots
	}
}

// Aside runs wait, a wait of the call of ctx on something other than the
// server's cores and its database (a person's answer, a client's), with
// the call's turn given back: a call that waits minutes for a person must
// not keep every other call waiting. Once wait returns, the call takes a
// turn again, in line; if ctx is done first, Aside returns its error, and
// the call goes on without one. Outside a call that a Queue admitted,
// Aside only runs wait.
func Aside(ctx context.Context, wait func()) error {
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil {
		wait()
		return nil
	}
	t.putAside()
	wait()
	return t.takeBack(ctx)
}

// putAside gives t's slot back for a wait, the first of those at once.
func (t *turn) putAside() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.aside++; t.aside == 1 && t.held {
		t.held = false
		<-t.q.slots
	}
}

// takeBack ends a wait, and takes a slot again after the last of those
// at once, or returns ctx's error.
func (t *turn) takeBack(ctx context.Context) error {
	t.mu.Lock()
	t.aside--
	last := t.aside == 0
	t.mu.Unlock()
	if !last {
		return nil
	}
	select {
	case t.q.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.aside > 0 || t.held {
		// Another wait began meanwhile, or ended and took the slot: a
		// call holds one at most.
		<-t.q.slots
		return nil
	}
	t.held = true
	return nil
}

// SendAside is sending middleware that puts aside (see [Aside]) the turn
// of a call while a request the server sends on its behalf waits for the
// client's answer: an elicitation, which waits for a person.
// Notifications go at once.
func SendAside(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		var res mcp.Result
		var err error
		if aerr := Aside(ctx, func() { res, err = next(ctx, method, req) }); aerr != nil && err == nil {
			err = aerr
		}
		return res, err
	}
}
