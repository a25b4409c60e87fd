package admit

import (
	"fmt"
	"runtime/debug"
	"time"
)

// workers run the tool calls that a [Queue] has admitted, each on a
// goroutine that has run calls before, rather than on the goroutine that
// go-sdk starts for each request.
//
// A goroutine starts with a small stack, and grows it by copying it
// whole to one twice the size each time a call needs more: go-sdk's
// check of arguments and results against their schemas recurses deeply,
// and modernc.org/sqlite, translated from C, has large frames. On a new
// goroutine for every request, every call paid for those copies, the
// unwinding of every frame on the stack included; a worker's stack stays
// grown from one call to the next (until the collector shrinks an idle
// one), so that a call pays for none of them.
//
// The number of calls that run at once is still bounded by the turns of
// the Queue: a call takes a turn, then a worker. A worker that has had
// nothing to run for workerIdle ends, so that a quiet server keeps no
// goroutines, and a new one starts when a call finds none idle.
type workers struct {
	// idle hands a call to a worker that waits for one.
	idle chan func()
}

// workerIdle is how long a worker waits for its next call before it
// ends.
const workerIdle = 10 * time.Second

func newWorkers() *workers { return &workers{idle: make(chan func())} }

// A Panic is a panic of a call that a worker ran, carried back to the
// goroutine of its request, which panics with it: the middleware there
// that recovers panics logs Value and Stack, the stack where it happened.
type Panic struct {
	Value any
	Stack []byte
}

func (p *Panic) String() string { return fmt.Sprint(p.Value) }

// run runs f on a worker, and returns once it has returned. A panic in f
// is raised again here, as a [*Panic], on the caller's goroutine: a
// panic on a worker's would end the process.
func (w *workers) run(f func()) {
	done := make(chan *Panic, 1)
	call := func() {
		finished := false
		defer func() {
			if finished {
				return
			}
			// recover is nil when f called runtime.Goexit, which ends the
			// worker too.
			done <- &Panic{Value: recover(), Stack: debug.Stack()}
		}()
		f()
		finished = true
		done <- nil
	}
	select {
	case w.idle <- call:
	default:
		go w.work(call)
	}
	if p := <-done; p != nil {
		if p.Value == nil {
			p.Value = "the tool call's goroutine exited (runtime.Goexit)"
		}
		panic(p)
	}
}

// work runs call, then each call handed to it, until none comes for
// workerIdle.
func (w *workers) work(call func()) {
	timer := time.NewTimer(workerIdle)
	defer timer.Stop()
	for {
		call()
		timer.Reset(workerIdle)
		select {
		case call = <-w.idle:
		case <-timer.C:
			return
		}
	}
}
