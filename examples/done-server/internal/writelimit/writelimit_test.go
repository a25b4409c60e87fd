package writelimit

import (
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestLimiter drives a limiter through time by hand: a burst at one
// instant, the one past it refused with the wait until the next, which
// is then allowed; one refusal reported for a run of them; limiters of
// idle keys dropped, and rate.Inf limiting nothing.
func TestLimiter(t *testing.T) {
	const r, burst = 20, 60
	var refusals []string
	l := New(r, burst, func(key string) { refusals = append(refusals, key) })
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	for i := range burst {
		if wait := l.Reserve("a", now); wait != 0 {
			t.Fatalf("write %d of the burst: wait %v", i, wait)
		}
	}
	step := time.Second / r
	for _, c := range []struct {
		name string
		at   time.Duration
		want time.Duration
	}{
		{"past the burst", 0, step},
		{"retried too soon", step / 2, step / 2},
		{"when one came back", step, 0},
		{"the next at once", step, step},
	} {
		if wait := l.Reserve("a", now.Add(c.at)); wait != c.want {
			t.Errorf("%s: wait %v, want %v", c.name, wait, c.want)
		}
	}
	if len(refusals) != 2 || refusals[0] != "a" {
		t.Errorf("refusals reported %q, want a's two runs", refusals)
	}
	if wait := l.Reserve("b", now); wait != 0 {
		t.Errorf("another key: wait %v", wait)
	}
	// Once full again, a key's limiter is dropped at the next sweep.
	later := now.Add(sweepEvery + l.full)
	l.Reserve("c", later)
	l.mu.Lock()
	_, a := l.keys["a"]
	n := len(l.keys)
	l.mu.Unlock()
	if a || n != 1 {
		t.Errorf("after a sweep: %d limiters (a's kept: %v), want c's alone", n, a)
	}
	// However many keys write, the map holds at most twice those that
	// wrote within the time a limiter fills up in: here, maxIdleEntries
	// a l.full.
	for i := range 5 * maxIdleEntries {
		l.Reserve(string(rune(i)), later.Add(time.Duration(i)*l.full/maxIdleEntries))
	}
	if n := len(l.keys); n > 2*maxIdleEntries {
		t.Errorf("%d limiters held, more than %d", n, 2*maxIdleEntries)
	}

	unlimited := New(rate.Inf, 1, nil)
	for i := range 10 * burst {
		if wait := unlimited.Reserve("a", now); wait != 0 {
			t.Fatalf("rate.Inf: write %d waits %v", i, wait)
		}
	}
	for _, bad := range []struct {
		r     rate.Limit
		burst int
	}{{0, 1}, {1, 0}, {-1, 5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%v, %d) did not panic", bad.r, bad.burst)
				}
			}()
			New(bad.r, bad.burst, nil)
		}()
	}
}
