package main

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

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

	caught := func(f func()) (p *callPanic) {
		defer func() { p, _ = recover().(*callPanic) }()
		w.run(f)
		return nil
	}
	p := caught(func() { explodeOnWorker() })
	if p == nil || p.value != "on purpose" || !strings.Contains(string(p.stack), "explodeOnWorker") {
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
