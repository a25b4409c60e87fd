package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// TestWriteRateLimit makes a burst of writes and one more on one token,
// through the protocol, with a rate so slow that none comes back during
// the test: the one past the burst is refused with a tool error that
// says to try later, and changes nothing, as is a write of a token that
// alice minted, whose tree is hers; reads go on, as do the writes of
// another tree.
func TestWriteRateLimit(t *testing.T) {
	e := newEnv(t)
	const burst = 5
	d := newDone(e.store, e.logger, config{writeRate: 0.001, writeBurst: burst})
	server, _ := d.newServer()
	alice := connectServer(t, e, server, e.mint("alice", store.Human, mcpeffect.Full), nil, "")
	bob := connectServer(t, e, server, e.mint("bob", store.Human, mcpeffect.Full), nil, "")

	project := must[store.Project](t, alice, "create_project", args{"name": "Limits"})
	// A token alice mints shares her tree's rate: minting more tokens
	// does not buy more writes.
	minted := must[createTokenResult](t, alice, "create_token", args{"name": "scribe", "kind": "agent", "scope": "full"})
	scribe := connectServer(t, e, server, minted.Secret, nil, "")
	for i := range burst - 2 {
		must[store.Task](t, alice, "create_task", args{"project_id": project.ID, "title": "task " + string(rune('a'+i))})
	}
	for _, c := range []struct {
		name string
		cs   *mcp.ClientSession
		tool string
		args args
		want string // in the refusal; "" for a call that goes through
	}{
		{"past the burst", alice, "create_task", args{"project_id": project.ID, "title": "one too many"}, "try again in"},
		{"a destructive write past the burst", alice, "delete_project", args{"project_id": project.ID}, "writes faster than Done allows"},
		{"a write of a token alice minted", scribe, "create_task", args{"project_id": project.ID, "title": "the scribe's"}, "with those minted from the same command-line token"},
		{"a read", alice, "list_tasks", args{"project_id": project.ID}, ""},
		{"many reads", alice, "whoami", nil, ""},
		{"another tree's write", bob, "create_task", args{"project_id": project.ID, "title": "bob's"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 1
			if c.name == "many reads" {
				n = 3 * burst
			}
			for range n {
				before := e.dump()
				_, err := call[any](t, c.cs, c.tool, c.args)
				switch {
				case c.want == "" && err != nil:
					t.Fatalf("refused: %v", err)
				case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
					t.Fatalf("err = %v, want a refusal saying %q", err, c.want)
				case c.want != "" && e.dump() != before:
					t.Error("the refused write changed the database")
				}
			}
		})
	}
}

// TestWriteLimiter drives the limiter of the default rates through time
// by hand: a burst at one instant, the one past it refused with the wait
// until the next, which is then allowed; limiters of idle tokens are
// dropped, and rate.Inf limits nothing.
func TestWriteLimiter(t *testing.T) {
	l := newWriteLimiter(newEnv(t).logger, 0, 0)
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	for i := range defaultWriteBurst {
		if wait := l.reserve("a", now); wait != 0 {
			t.Fatalf("write %d of the burst: wait %v", i, wait)
		}
	}
	step := time.Duration(float64(time.Second) / float64(defaultWriteRate))
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
		if wait := l.reserve("a", now.Add(c.at)); wait != c.want {
			t.Errorf("%s: wait %v, want %v", c.name, wait, c.want)
		}
	}
	if wait := l.reserve("b", now); wait != 0 {
		t.Errorf("another token: wait %v", wait)
	}
	// Once full again, a token's limiter is dropped at the next sweep.
	later := now.Add(sweepEvery + l.full)
	l.reserve("c", later)
	l.mu.Lock()
	_, a := l.tokens["a"]
	n := len(l.tokens)
	l.mu.Unlock()
	if a || n != 1 {
		t.Errorf("after a sweep: %d limiters (a's kept: %v), want c's alone", n, a)
	}
	// However many tokens write, the map holds at most twice those that
	// wrote within the time a limiter fills up in: here, maxIdleEntries
	// a l.full.
	for i := range 5 * maxIdleEntries {
		l.reserve(string(rune(i)), later.Add(time.Duration(i)*l.full/maxIdleEntries))
	}
	if n := len(l.tokens); n > 2*maxIdleEntries {
		t.Errorf("%d limiters held, more than %d", n, 2*maxIdleEntries)
	}

	unlimited := newWriteLimiter(newEnv(t).logger, rate.Inf, 0)
	for i := range 10 * defaultWriteBurst {
		if wait := unlimited.reserve("a", now); wait != 0 {
			t.Fatalf("rate.Inf: write %d waits %v", i, wait)
		}
	}
}
