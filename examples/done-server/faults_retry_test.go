package main

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The retries of TestReplicasUnderFaults: its proxy drops the answers of
// some calls made with an idempotency key after a replica handled them
// (the client sees its connection end, as when a network or a balancer
// loses an answer), and the load clients send every write with a key of
// its own and, whenever its answer does not come, the same call again
// with the same key, through the proxy, so to whichever replica is next.
// At the end, each acknowledged write is in the database once.

// dropEvery: the proxy drops the answer of the first attempt of every
// dropEvery-th call made with a key on each protocol, and of every
// dropEvery-th retry, so that a retry is sometimes lost too. It is a
// count, not a chance, so that a short run drops some on each protocol.
const dropEvery = 3

// retryFor bounds the retries of one call: past it (a key left in
// progress by the replica killed while it ran the call, which no retry
// can get through until its retention ends), the call is given up,
// unacknowledged. A call stops retrying when the test stops, too.
const retryFor = 6 * time.Second

// answerDrops is what the proxy drops, and what it saw of the calls made
// with a key: which replica handled each attempt.
type answerDrops struct {
	mu       sync.Mutex
	calls    map[string]int   // by protocol, the first attempts seen
	retries  map[string]int   // by protocol, the later attempts seen
	handled  map[string][]int // by key, the replica that answered each attempt
	dropped  map[string]int   // by key, the answers dropped
	protocol map[string]int   // by protocol, the answers dropped
}

func newAnswerDrops() *answerDrops {
	return &answerDrops{calls: map[string]int{}, retries: map[string]int{}, handled: map[string][]int{},
		dropped: map[string]int{}, protocol: map[string]int{}}
}

// drop notes that the replica backend answered r, whose body is body, and
// reports whether the proxy drops that answer: only a tools/call with an
// idempotency key, where the draft puts it, is ever dropped.
func (d *answerDrops) drop(r *http.Request, body []byte, backend int) bool {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Key string `json:"idempotencyKey"`
		} `json:"params"`
	}
	if d == nil || json.Unmarshal(body, &m) != nil || m.Method != "tools/call" || m.Params.Key == "" {
		return false
	}
	protocol := cmp.Or(r.Header.Get("Mcp-Protocol-Version"), "unknown")
	d.mu.Lock()
	defer d.mu.Unlock()
	key := m.Params.Key
	count := d.calls
	if len(d.handled[key]) > 0 {
		count = d.retries
	}
	d.handled[key] = append(d.handled[key], backend)
	count[protocol]++
	if count[protocol]%dropEvery != 0 {
		return false
	}
	d.dropped[key]++
	d.protocol[protocol]++
	return true
}

// droppedFor returns how many answers of the call made with key were
// dropped.
func (d *answerDrops) droppedFor(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped[key]
}

// replicas returns how many replicas answered attempts of the call made
// with key.
func (d *answerDrops) replicas(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := map[int]bool{}
	for _, b := range d.handled[key] {
		seen[b] = true
	}
	return len(seen)
}

// keyedCall is what became of one write of a load client, sent with a
// key until it was answered.
type keyedCall struct {
	key      string
	attempts int
	took     time.Duration // of the last attempt
	dropped  bool          // the answer of the last attempt was dropped
}

// callKeyedUntilAnswered makes the call of name with a, with an
// idempotency key of its own, on *cs (connected again with connect
// whenever an attempt fails below MCP), until it gets an answer: a
// result, a tool's error that is not an outage's, a refusal. Each attempt
// that gets none (its answer dropped, a replica gone, the database
// unavailable, the key in progress on a replica that ran the call) is
// noted, a dropped answer as intended, and the same call is sent again
// with the same key, until retryFor or stop.
func callKeyedUntilAnswered(ctx context.Context, cs **mcp.ClientSession, connect func() (*mcp.ClientSession, error),
	drops *answerDrops, stop <-chan struct{}, name string, a args,
	note func(took time.Duration, err error, intended bool), pause func()) (*mcp.CallToolResult, keyedCall, error) {
	kc := keyedCall{key: host.NewIdempotencyKey()}
	deadline := time.Now().Add(retryFor)
	for {
		if *cs == nil {
			start := time.Now()
			c, err := connect()
			if err != nil {
				note(time.Since(start), err, false)
				if stopped(stop) || time.Now().After(deadline) {
					return nil, kc, err
				}
				pause()
				continue
			}
			*cs = c
		}
		kc.attempts++
		before := drops.droppedFor(kc.key)
		start := time.Now()
		res, err := (*cs).CallTool(ctx, host.WithIdempotencyKey(&mcp.CallToolParams{Name: name, Arguments: a}, kc.key))
		kc.took = time.Since(start)
		kc.dropped = drops.droppedFor(kc.key) > before
		if !answerless(res, err) || stopped(stop) || time.Now().After(deadline) {
			return res, kc, err
		}
		failure := err
		if failure == nil {
			failure = toolError{name + ": " + text(res)}
		}
		attempt := "first attempt"
		if kc.attempts > 1 {
			attempt = "retry"
		}
		note(kc.took, fmt.Errorf("%s, %s: %w", name, attempt, failure), kc.dropped)
		if err != nil {
			(*cs).Close()
			*cs = nil
		}
		pause()
	}
}

// answerless reports whether a call that got res and err may be sent
// again with its key: it was not answered (a transport's error, a 502 or
// a 503), or answered that it could not be run for now (the database
// unavailable, the key in progress).
func answerless(res *mcp.CallToolResult, err error) bool {
	if err == nil {
		return res.IsError && strings.Contains(text(res), "the database of Done is unavailable for now")
	}
	if _, ok := mcpeffect.AsDeniedError(err); ok {
		return false
	}
	if ie, ok := mcpeffect.AsIdempotencyError(err); ok {
		return ie.Type == mcpeffect.IdempotencyKeyInProgress || ie.Type == mcpeffect.IdempotencyUnavailable
	}
	return true
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// retriedWrite is an acknowledged write that was sent more than once.
type retriedWrite struct {
	table, text, protocol string
	replicas              int // that answered its attempts
}

// checkOnce counts, in db, the rows of each acknowledged write (acked:
// table → id → text, texts unique to each call), and of those retried:
// each must be there once. It logs the counts and returns them.
func checkOnce(t *testing.T, db *sql.DB, acked map[string]map[string]string, retried map[string]retriedWrite, drops *answerDrops) {
	t.Helper()
	field := map[string]string{"tasks": "title", "comments": "body", "steps": "text"}
	count := func(table, text string) int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM `+table+` WHERE `+field[table]+` = $1`, text).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var writes, once, twice, retriedOnce, retriedTwice, across int
	byProtocol := map[string]int{}
	for table, ids := range acked {
		for id, text := range ids {
			writes++
			n := count(table, text)
			if n == 0 && table == "tasks" {
				// Its title revised since by update_task: the task is
				// there once if its id is.
				if err := db.QueryRow(`SELECT count(*) FROM tasks WHERE id = $1`, id).Scan(&n); err != nil {
					t.Fatal(err)
				}
			}
			switch {
			case n == 0:
				t.Errorf("acknowledged %s %s %q is not there", table, id, text)
			case n == 1:
				once++
			case n > 1:
				twice++
				t.Errorf("acknowledged %s %s %q is there %d times", table, id, text, n)
			}
			r, ok := retried[id]
			if !ok {
				continue
			}
			byProtocol[r.protocol]++
			if r.replicas > 1 {
				across++
			}
			switch {
			case n == 1:
				retriedOnce++
			case n > 1:
				retriedTwice++
			}
		}
	}
	drops.mu.Lock()
	dropped := maps.Clone(drops.protocol)
	drops.mu.Unlock()
	t.Logf("retries: %d writes acknowledged, %d of them retried (by protocol %v; %d answered by another replica than an earlier attempt); %d answers dropped by the proxy (by protocol %v); found once: %d (%d retried), found twice or more: %d (%d retried)",
		writes, len(retried), byProtocol, across, total(dropped), dropped, once, retriedOnce, twice, retriedTwice)
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		if dropped[protocol] == 0 || byProtocol[protocol] == 0 {
			t.Errorf("on %s, %d answers dropped and %d writes acknowledged after a retry: the run did not test retries there", protocol, dropped[protocol], byProtocol[protocol])
		}
	}
	if across == 0 {
		t.Error("no retried write was answered by another replica than an earlier attempt: the run did not test retries across replicas")
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// isWrite reports whether name is one of the writes that the load clients
// make (see loadClient.next), which go with a key.
func isWrite(name string) bool {
	switch name {
	case "create_task", "comment_on_task", "add_step", "update_task":
		return true
	}
	return false
}
