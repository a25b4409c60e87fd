package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

var faultsFor = flag.Duration("faults", 0, "run each phase of TestReplicasUnderFaults this long (without it, a short smoke run)")

// TestReplicasUnderFaults runs three done-server processes on one
// PostgreSQL behind a round-robin reverse proxy without affinity, and
// drives through it the load test's mix of calls and the approval gate's
// callers, on the 2025-11-25 protocol and on 2026-07-28, which has no
// sessions. In the middle it kills one replica with SIGKILL, and later
// stops PostgreSQL as a crash would and starts it again.
//
// The load clients are TestLoad's: a person and an agent of each scope,
// on each protocol, each with a token of its own, making its reads and
// writes (two reads for each write where the scope allows writes) and,
// now and then, a call its scope does not allow, which must be refused.
// The gate's callers are TestGateInvariant's (two people and two agents,
// of full and non-destructive scope, closing, asking, approving and
// rejecting at random), one call at a time, each call to the next
// replica.
//
// It shows: every acknowledged task, comment and step is in the
// database; none is there twice; a refused call changed nothing; the
// approval gate's invariant holds over the data (checkGateInvariant, as
// TestGateInvariant checks it); the survivors serve on after the kill,
// on both protocols; every call is answered within a bound, never left
// to hang, and never with Done's internal error or a 500; each request
// refused during the outage is answered 503 with Retry-After and a body
// that says the database is unavailable, and a tool call that reached
// the database then, with the tool error that says to try again; service
// comes back after the database does, without restarting a replica.
func TestReplicasUnderFaults(t *testing.T) {
	postgresOnly(t)
	phase := *faultsFor
	if phase == 0 {
		phase = 1500 * time.Millisecond
	}
	ctx := t.Context()
	url := pgtest.NewDatabase(t)

	// The workspace: the seed's tasks, which the load clients read, and a
	// token of its own for each client (each a tree, whose writes a
	// replica bounds separately).
	st, _, err := store.OpenPostgres(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := st.MintToken(ctx, store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	project, err := st.CreateProject(ctx, owner.Actor(), store.NewProject{Name: "Release"})
	if err != nil {
		t.Fatal(err)
	}
	var seedTasks []string
	for i := range 40 {
		task, err := st.CreateTask(ctx, owner.Actor(), store.NewTask{
			Title: fmt.Sprintf("Release task %d", i), ProjectID: project.ID, Due: fmt.Sprintf("2025-06-%02d", 1+i%30)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CommentOnTask(ctx, owner.Actor(), task.ID, "seed comment"); err != nil {
			t.Fatal(err)
		}
		seedTasks = append(seedTasks, task.ID)
	}
	mint := func(name string, kind store.Kind, scope mcpeffect.Scope) string {
		_, secret, err := st.MintToken(ctx, store.NewToken{Name: name, Kind: kind, Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	protocols := []string{"2025-11-25", "2026-07-28"}
	type loadSeat struct {
		c        *loadClient
		secret   string
		protocol string
	}
	var seats []loadSeat
	for _, protocol := range protocols {
		for _, k := range []struct {
			kind  store.Kind
			scope mcpeffect.Scope
		}{
			{store.Human, mcpeffect.Full}, {store.Human, mcpeffect.NonDestructive}, {store.Human, mcpeffect.ReadOnly},
			{store.Agent, mcpeffect.Full}, {store.Agent, mcpeffect.NonDestructive}, {store.Agent, mcpeffect.ReadOnly},
		} {
			id := len(seats)
			seats = append(seats, loadSeat{
				c: &loadClient{id: id, scope: k.scope, variant: guarded, tasks: seedTasks,
					rand: rand.New(rand.NewPCG(uint64(id), 7))},
				secret:   mint(fmt.Sprintf("load-%d", id), k.kind, k.scope),
				protocol: protocol,
			})
		}
	}
	actors := []*gateActor{
		{name: "gate-alice", human: true}, {name: "gate-carol", human: true},
		{name: "gate-builder"}, {name: "gate-helper"},
	}
	actorSecrets := map[*gateActor]string{}
	actorProtocols := map[*gateActor]string{}
	for i, a := range actors {
		kind, scope := store.Agent, mcpeffect.Full
		if a.human {
			kind = store.Human
		}
		if i%2 == 1 {
			scope = mcpeffect.NonDestructive
		}
		actorSecrets[a] = mint(a.name, kind, scope)
		actorProtocols[a] = protocols[(i/2+i)%2]
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// The gate's triggers, and the step of its callers, on a connection
	// of the test's own.
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(gateSchemaPostgres); err != nil {
		t.Fatal(err)
	}

	var replicas []*exec.Cmd
	proxy := &rrProxy{transport: http.DefaultTransport.(*http.Transport).Clone(), drops: newAnswerDrops()}
	for range 3 {
		cmd, base := startReplica(t, url)
		replicas = append(replicas, cmd)
		proxy.backends = append(proxy.backends, base)
	}
	proxy.served = make([]map[string]int, len(proxy.backends))
	front := httptest.NewServer(proxy)
	defer front.Close()
	endpoint := front.URL + mcpPath

	const callBound = 10 * time.Second
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 32
	defer transport.CloseIdleConnections()
	connect := func(secret, protocol string) (*mcp.ClientSession, error) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-faults", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:             endpoint,
			HTTPClient:           &http.Client{Transport: &host.RoundTripper{Base: bearerTransport{secret, transport}}, Timeout: 2 * callBound},
			MaxRetries:           -1,
			DisableStandaloneSSE: true,
		}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err == nil && cs.InitializeResult().ProtocolVersion != protocol {
			// go-sdk's client falls back to an older protocol when
			// 2026-07-28 fails: not what this client is for.
			cs.Close()
			return nil, fmt.Errorf("connected with %s, not %s", cs.InitializeResult().ProtocolVersion, protocol)
		}
		return cs, err
	}

	// What the clients saw: each acknowledged write, when, on which
	// protocol; the slowest call; and every error, by kind.
	var (
		mu         sync.Mutex
		acked      = map[string]map[string]string{"tasks": {}, "comments": {}, "steps": {}} // table → id → text
		ackTimes   = map[string][]time.Time{}                                               // protocol → times
		revisions  = map[string]map[string]bool{}                                           // task id → the titles update_task sent it
		slowest    time.Duration
		kinds      = map[string]int{}
		unexpected []string
		refusals   int
		retried    = map[string]retriedWrite{} // id → an acknowledged write sent more than once (faults_retry_test.go)
		stop       = make(chan struct{})
		wg         sync.WaitGroup
	)
	// expected reports whether err is what a fault may cause: the
	// database unavailable (a tool's error, or the 503 of a request
	// refused before it), or the replica gone under the request (the
	// proxy's 502).
	expected := func(err error) bool {
		msg := err.Error()
		return strings.Contains(msg, "the database of Done is unavailable for now") || strings.Contains(msg, "Service Unavailable") ||
			strings.Contains(msg, "Bad Gateway") ||
			// A key left in progress by the replica killed while it ran
			// the call, or whose record the outage kept from being made.
			strings.Contains(msg, "is still running: nothing ran again") || strings.Contains(msg, "could not be kept") ||
			// go-sdk's client, its 2026-07-28 discovery refused (503),
			// connects with an older protocol, if the outage ended by then.
			strings.Contains(msg, "connected with 2025-11-25, not 2026-07-28")
	}
	note := func(protocol string, took time.Duration, err error, intended bool) {
		mu.Lock()
		defer mu.Unlock()
		slowest = max(slowest, took)
		if err == nil {
			return
		}
		msg := err.Error()
		if strings.Contains(msg, "internal error") {
			t.Errorf("an answer was Done's internal error: %s", msg)
		}
		kinds[protocol+": "+msg[:min(len(msg), 110)]]++
		if !intended && !expected(err) {
			unexpected = append(unexpected, protocol+": "+msg)
		}
	}
	// pause keeps a failing client from spinning while a fault lasts.
	pause := func() { time.Sleep(50 * time.Millisecond) }

	for _, seat := range seats {
		wg.Go(func() {
			c := seat.c
			defer func() {
				if c.cs != nil {
					c.cs.Close()
				}
			}()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				if c.cs == nil {
					cs, err := connect(seat.secret, seat.protocol)
					if err != nil {
						note(seat.protocol, time.Since(start), err, false)
						pause()
						continue
					}
					c.cs = cs
				}
				probe := n%probeEvery == 0 && c.scope < mcpeffect.Full
				name, a := c.next(n)
				if probe {
					name, a = c.probeCall()
				}
				if name == "update_task" && !probe {
					// Made or not, acknowledged or not: the title may be
					// the task's from now on.
					mu.Lock()
					id := a["task_id"].(string)
					if revisions[id] == nil {
						revisions[id] = map[string]bool{}
					}
					revisions[id][a["title"].(string)] = true
					mu.Unlock()
				}
				start = time.Now()
				var res *mcp.CallToolResult
				var err error
				var kc keyedCall
				if probe || !isWrite(name) {
					res, err = c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a})
				} else {
					// A write goes with a key, and again with it until
					// answered (faults_retry_test.go).
					res, kc, err = callKeyedUntilAnswered(ctx, &c.cs, func() (*mcp.ClientSession, error) { return connect(seat.secret, seat.protocol) },
						proxy.drops, stop, name, a, func(took time.Duration, err error, intended bool) { note(seat.protocol, took, err, intended) }, pause)
					start = time.Now().Add(-kc.took)
				}
				took := time.Since(start)
				switch {
				case probe && err == nil && res.IsError && strings.Contains(text(res), "the database of Done is unavailable for now"):
					// The token's check passed on a replica that then lost
					// the database: retryable, like any other call.
					note(seat.protocol, took, toolError{text(res)}, false)
				case probe:
					if d, ok := mcpeffect.AsDeniedError(err); ok && d.Tool == name && d.Granted == c.scope {
						mu.Lock()
						refusals++
						mu.Unlock()
						note(seat.protocol, took, nil, true)
						break
					}
					if err == nil {
						err = fmt.Errorf("%s by a %s token went through: %v", name, c.scope, res)
					}
					note(seat.protocol, took, err, false)
				case err != nil:
					// A write's last attempt may have had its answer
					// dropped by the proxy, as intended.
					note(seat.protocol, took, fmt.Errorf("%s: %w", name, err), kc.dropped)
				case res.IsError:
					note(seat.protocol, took, toolError{name + ": " + text(res)}, false)
				default:
					note(seat.protocol, took, nil, false)
					m, _ := res.StructuredContent.(map[string]any)
					id, _ := m["id"].(string)
					table, field := map[string][2]string{"create_task": {"tasks", "title"}, "comment_on_task": {"comments", "body"}, "add_step": {"steps", "text"}}[name][0],
						map[string]string{"create_task": "title", "comment_on_task": "body", "add_step": "text"}[name]
					if table != "" {
						if name == "create_task" {
							c.created = append(c.created, id)
						}
						mu.Lock()
						acked[table][id] = a[field].(string)
						if kc.attempts > 1 {
							retried[id] = retriedWrite{table, a[field].(string), seat.protocol, proxy.drops.replicas(kc.key)}
						}
						ackTimes[seat.protocol] = append(ackTimes[seat.protocol], time.Now())
						mu.Unlock()
					}
				}
				if err != nil || res != nil && res.IsError {
					// Anything but a tool's answer (the replica gone, a
					// 503 before MCP) and the client starts again, as a
					// client of a load balancer would.
					if err != nil && !probe && c.cs != nil {
						c.cs.Close()
						c.cs = nil
					}
					pause()
				}
			}
		})
	}

	// The gate's callers, one call at a time, each step recorded before
	// its call, as in TestGateInvariant.
	w := &gateWorld{t: t, rand: rand.New(rand.NewPCG(1, 1))}
	history := []gateStep{{}}
	var gateFailed int
	wg.Go(func() {
		defer func() {
			for _, a := range actors {
				if a.cs != nil {
					a.cs.Close()
				}
			}
		}()
		for {
			select {
			case <-stop:
				return
			default:
			}
			a := actors[w.rand.IntN(len(actors))]
			start := time.Now()
			if a.cs == nil {
				cs, err := connect(actorSecrets[a], actorProtocols[a])
				if err != nil {
					note(actorProtocols[a], time.Since(start), err, false)
					pause()
					continue
				}
				a.cs = cs
			}
			tool, in := w.next(a)
			history = append(history, gateStep{a, tool, in})
			// The step must be recorded before its call: during the outage
			// that waits for the database.
			for {
				if _, err := db.Exec(`UPDATE gate_step SET step = $1`, len(history)-1); err == nil {
					break
				}
				pause()
			}
			start = time.Now()
			res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: in})
			took := time.Since(start)
			switch {
			case err != nil:
				if _, ok := mcpeffect.AsDeniedError(err); ok || strings.Contains(err.Error(), "validating") {
					w.refused++
					note(actorProtocols[a], took, nil, true)
					continue
				}
				gateFailed++
				note(actorProtocols[a], took, fmt.Errorf("%s by %s: %w", tool, a.name, err), false)
				a.cs.Close()
				a.cs = nil
				pause()
			case res.IsError:
				// The gate's refusals are part of its test; a fault's
				// error is one too, counted.
				w.refused++
				msg := text(res)
				if strings.Contains(msg, "unavailable for now") {
					gateFailed++
					note(actorProtocols[a], took, toolError{msg}, false)
					continue
				}
				note(actorProtocols[a], took, nil, true)
				if strings.Contains(msg, "internal error") {
					t.Errorf("step %d, %s by %s: %s", len(history)-1, tool, a.name, msg)
				}
			default:
				note(actorProtocols[a], took, nil, false)
				w.learn(tool, res)
			}
		}
	})

	acksSince := func(at time.Time) map[string]int {
		mu.Lock()
		defer mu.Unlock()
		n := map[string]int{}
		for protocol, times := range ackTimes {
			for _, a := range times {
				if a.After(at) {
					n[protocol]++
				}
			}
		}
		return n
	}
	time.Sleep(phase)
	killed := time.Now()
	replicas[0].Process.Signal(syscall.SIGKILL)
	replicas[0].Wait()
	time.Sleep(phase)
	afterKill := acksSince(killed)
	cluster := pgtest.Start(t)
	if err := cluster.Restart(func() { time.Sleep(phase / 2) }); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	time.Sleep(phase)
	close(stop)
	wg.Wait()
	afterRestart := acksSince(back)

	mu.Lock()
	defer mu.Unlock()
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	var writes int
	for _, ids := range acked {
		writes += len(ids)
	}
	t.Logf("%d writes acknowledged (%d tasks, %d comments, %d steps); after the kill, before the outage: %v; after PostgreSQL came back: %v",
		writes, len(acked["tasks"]), len(acked["comments"]), len(acked["steps"]), afterKill, afterRestart)
	t.Logf("%d refusals as intended; the gate: %d steps, %d refused or failed, %d failed by a fault; slowest call %v",
		refusals, len(history)-1, w.refused, gateFailed, slowest)
	for b, served := range proxy.served {
		t.Logf("replica %d served %v", b, served)
	}
	for _, protocol := range protocols {
		if afterKill[protocol] == 0 {
			t.Errorf("no write on %s went through the survivors after the kill", protocol)
		}
		if afterRestart[protocol] == 0 {
			t.Errorf("no write on %s went through after PostgreSQL came back", protocol)
		}
	}
	for b, served := range proxy.served[1:] {
		if served["2026-07-28"] == 0 {
			t.Errorf("replica %d served no 2026-07-28 request: the proxy did not spread them", b+1)
		}
	}
	if slowest > callBound {
		t.Errorf("a call took %v, more than %v", slowest, callBound)
	}
	for e, n := range kinds {
		t.Logf("%5d× %s", n, e)
	}
	for i, e := range unexpected {
		if i == 10 {
			t.Errorf("and %d more unexpected errors", len(unexpected)-i)
			break
		}
		t.Errorf("an error no fault explains: %s", e)
	}
	// What the replicas answered when they failed: during the outage, a
	// request whose token must be looked up is refused with a 503 that
	// says why, and when to try again; never a 500.
	told := 0
	for k, n := range kinds {
		if strings.Contains(k, "the database of Done is unavailable for now") {
			told += n
		}
	}
	for _, f := range proxy.failures {
		if f == "503 (Retry-After 2) the database of Done is unavailable for now: try again in a few seconds" {
			told++
		} else {
			t.Errorf("a replica failed with %q, want 503 with Retry-After, saying the database is unavailable", f)
		}
	}
	if told == 0 {
		t.Error("no call during the outage was told that the database is unavailable")
	}
	if proxy.sessions > 0 {
		t.Errorf("replicas gave %d answers with an Mcp-Session-Id: replicas of a shared store keep no sessions", proxy.sessions)
	}

	// Every acknowledged write is there, once; the refused calls wrote
	// nothing.
	for table, ids := range acked {
		field := map[string]string{"tasks": "title", "comments": "body", "steps": "text"}[table]
		stored := map[string]string{}
		texts := map[string]int{}
		rows, err := db.Query(`SELECT id, ` + field + ` FROM ` + table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, text string
			if err := rows.Scan(&id, &text); err != nil {
				t.Fatal(err)
			}
			stored[id] = text
			texts[text]++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for id, text := range ids {
			if stored[id] != text && !(table == "tasks" && revisions[id][stored[id]]) {
				t.Errorf("acknowledged %s %s %q is not in the database", table, id, text)
			}
		}
		// What the load clients write is unique to each call; the gate's
		// callers repeat their texts.
		for text, n := range texts {
			if n > 1 && strings.Contains(text, " of client ") {
				t.Errorf("%s %q is there %d times", table, text, n)
			}
		}
	}
	checkOnce(t, db, acked, retried, proxy.drops)
	var wrong int
	if err := db.QueryRow(`SELECT count(*) FROM tasks WHERE title IN ('must not exist', 'must not change')`).Scan(&wrong); err != nil || wrong != 0 {
		t.Errorf("%d tasks show a call that was refused (%v)", wrong, err)
	}
	for _, id := range w.tasks {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM tasks WHERE id = $1`, id).Scan(&n); err != nil || n != 1 {
			t.Errorf("the gate's task %s, acknowledged, is not in the database (%v)", id, err)
		}
	}

	// The approval gate's invariant, over what the replicas wrote.
	done, byApproval, byAutoClose := checkGateInvariant(t, db, history)
	t.Logf("the gate: %d tasks became done, %d by a person's approval, %d auto-close; %d close_task and %d approvals of pending requests tried",
		done, byApproval, byAutoClose, w.closeCalls, w.approveCalls)
	// The smoke run is too short for the gate's random calls to open it
	// surely (TestGateInvariant's 400 steps do, a few times each): it
	// checks the invariant over what it made. A run with -faults must
	// have opened it.
	if byApproval == 0 && *faultsFor > 0 {
		t.Error("no task became done by a person's approval: the run did not test the gate")
	}
}

// startReplica starts done-server serve -http on a loopback port chosen
// by the system, on the database at url, and returns the process and its
// base URL once it listens. The errors it logs are logged by the test
// when it fails.
func startReplica(t *testing.T, url string) (*exec.Cmd, string) {
	t.Helper()
	return startDone(t, "-db", url, "-data", t.TempDir())
}

// startDone starts done-server serve -http as startReplica does, on the
// store that storeArgs give (-db URL, -data DIR), without the folder
// connector.
func startDone(t *testing.T, storeArgs ...string) (*exec.Cmd, string) {
	t.Helper()
	args := append([]string{"serve", "-context", "off", "-http", "127.0.0.1:0"}, storeArgs...)
	cmd := exec.Command(doneServer(t), args...)
	cmd.Env = serverEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if _, endpoint, ok := strings.Cut(lines.Text(), `msg="serving MCP over HTTP" url=`); ok {
			var mu sync.Mutex
			var errs []string
			go func() {
				for lines.Scan() {
					if strings.Contains(lines.Text(), "level=ERROR") {
						mu.Lock()
						errs = append(errs, lines.Text())
						mu.Unlock()
					}
				}
				io.Copy(io.Discard, stderr)
			}()
			t.Cleanup(func() {
				mu.Lock()
				defer mu.Unlock()
				if t.Failed() {
					for _, e := range errs[:min(len(errs), 20)] {
						t.Logf("%s: %s", endpoint, e)
					}
				}
			})
			return cmd, strings.TrimSuffix(endpoint, mcpPath)
		}
	}
	t.Fatal("a replica never said where it listens")
	return nil, ""
}

// rrProxy is a reverse proxy without affinity: it sends each request to
// the next replica in turn, and to the one after if it cannot reach it.
// A request that reached a replica is never sent again to another, as a
// load balancer must not replay a write that may have been made: if the
// replica goes before it answers, the proxy answers 502.
type rrProxy struct {
	backends  []string // base URLs
	transport *http.Transport
	// drops, if not nil, says which answers to drop (see answerDrops).
	drops *answerDrops

	mu       sync.Mutex
	next     int
	served   []map[string]int // of each backend, the requests it answered by protocol version
	sessions int              // answers that carried an Mcp-Session-Id
	failures []string         // the status, Retry-After and body of each answer of 500 or more from a replica
}

func (p *rrProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	first := p.next
	p.next = (p.next + 1) % len(p.backends)
	p.mu.Unlock()
	for i := range p.backends {
		b := (first + i) % len(p.backends)
		out, err := http.NewRequestWithContext(r.Context(), r.Method, p.backends[b]+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := p.transport.RoundTrip(out)
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Op == "dial" {
			continue // the replica is gone: the next one
		}
		if err != nil {
			http.Error(w, "the replica went away: "+err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		p.mu.Lock()
		if p.served != nil {
			if p.served[b] == nil {
				p.served[b] = map[string]int{}
			}
			p.served[b][cmp.Or(r.Header.Get("Mcp-Protocol-Version"), "initialize")]++
		}
		if resp.Header.Get("Mcp-Session-Id") != "" {
			p.sessions++
		}
		p.mu.Unlock()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		if resp.StatusCode >= 500 {
			// What a replica says when it fails: the test reads it, as
			// the client shows only the status.
			failure, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			p.mu.Lock()
			p.failures = append(p.failures, fmt.Sprintf("%d (Retry-After %s) %s", resp.StatusCode, resp.Header.Get("Retry-After"), bytes.TrimSpace(failure)))
			p.mu.Unlock()
			w.WriteHeader(resp.StatusCode)
			w.Write(failure)
			return
		}
		if p.drops.drop(r, body, b) {
			// The replica answered whole; the client's connection ends
			// without the answer.
			io.Copy(io.Discard, resp.Body)
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		w.WriteHeader(resp.StatusCode)
		flusher, _ := w.(http.Flusher)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
				if flusher != nil {
					flusher.Flush()
				}
			}
			if err != nil {
				return
			}
		}
	}
	http.Error(w, "no replica answers", http.StatusBadGateway)
}

// outageBound is the most an answer may take while the database is
// unreachable: the store gives up on a connection within its connect
// timeout, 3 seconds, and nothing may wait on it longer.
const outageBound = 5 * time.Second

// TestOutageAnswers cuts the path of a Done server to its PostgreSQL
// (every connection ends, every new one is refused, as during a restart)
// and makes, on each path by which a request reaches the store, the
// request a client would; each is answered within outageBound, never
// with a 500 or Done's internal error, and says that the database is
// unavailable and to try again in a few seconds.
//
// Over HTTP, a request whose answer comes before MCP gets 503 with
// Retry-After: the bearer token's lookup (for a 2025-11-25 client's
// initialize and a 2026-07-28 client's call alike, and for a token that
// was in the cache: the store forgets its tokens when it loses the
// connection on which revocations arrive), a calendar feed, the web page
// signed in and signing in. A request whose token was verified just
// before the database went (the test cuts the path between the bearer
// check and the MCP server) gets, for a tool call, the tool error that
// says it may be tried again, and for resources/read and prompts/get a
// JSON-RPC error that says so. A database that holds its connections and
// never answers (a partition) is given up within the store's call
// timeout, with the same 503. Once the path is mended, the same requests
// work, on the same server.
func TestOutageAnswers(t *testing.T) {
	postgresOnly(t)
	ctx := t.Context()
	link, url := pgtest.NewLink(t, pgtest.NewDatabase(t))
	st, _, err := store.OpenPostgres(ctx, url, storeOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close) // after the clients' cleanups, which close their sessions
	base := "http://" + srv.Listener.Addr().String()
	d := newDone(st, slog.New(slog.NewTextHandler(io.Discard, nil)), config{baseURL: base, writeRate: rate.Inf})
	server, registry := d.newServer()
	// The server as it serves, but for a hook between the bearer check
	// and the rest: armed, it cuts the database's path there, once.
	var cutNext atomic.Bool
	challenged := d.enforcer(registry).Challenge(&mcpeffect.ChallengeOptions{ResourceMetadataURL: base + metadataPath})(
		d.streamableHandler(server, defaultHTTPLimits))
	mux := http.NewServeMux()
	mux.Handle("/", d.httpHandler(server, registry))
	mux.Handle(mcpPath, streamDeadlines(defaultHTTPLimits.write, d.bearer()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cutNext.CompareAndSwap(true, false) {
			link.Cut()
		}
		challenged.ServeHTTP(w, r)
	}))))
	srv.Config.Handler = recoverHTTP(d.logger, mux)
	srv.Start()

	alice, aliceSecret, err := st.MintToken(ctx, store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	// Bob's token is never used before the outage: it is in no cache, and
	// must be looked up. (Alice's is forgotten too, once the store's
	// listener finds its connection gone, but that takes a moment.)
	_, bobSecret, err := st.MintToken(ctx, store.NewToken{Name: "bob", Kind: store.Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	task, err := st.CreateTask(ctx, alice.Actor(), store.NewTask{Title: "Ship"})
	if err != nil {
		t.Fatal(err)
	}
	_, feed, err := st.CreateCalendarLink(ctx, alice.Actor(), "", "Alice's")
	if err != nil {
		t.Fatal(err)
	}
	signedIn, _, err := st.CreateSignInLink(ctx, alice.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, cookie, err := st.SignIn(ctx, signedIn, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	unused, _, err := st.CreateSignInLink(ctx, alice.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	old := connectProtocol(t, base, aliceSecret, "2025-11-25", nil)
	current := connectProtocol(t, base, aliceSecret, "2026-07-28", nil)

	type request struct {
		name, method, path, cookie, form, body string
		header                                 map[string]string
	}
	do := func(t *testing.T, r request) (int, http.Header, string) {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, 2*outageBound)
		defer cancel()
		body := r.body + r.form
		req, err := http.NewRequestWithContext(rctx, r.method, base+r.path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case r.form != "":
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		case r.body != "":
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
		for k, v := range r.header {
			req.Header.Set(k, v)
		}
		if r.cookie != "" {
			req.AddCookie(&http.Cookie{Name: "done_session", Value: r.cookie})
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v after %v", r.name, err, time.Since(start))
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if took := time.Since(start); took > outageBound {
			t.Errorf("%s: answered after %v, more than %v", r.name, took, outageBound)
		}
		return resp.StatusCode, resp.Header, string(got)
	}
	bearer := "Bearer " + bobSecret
	currentCall, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "get_task", "arguments": args{"task_id": task.ID}, "_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    "2026-07-28",
			mcp.MetaKeyClientInfo:         map[string]any{"name": "curl", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{}}}})
	http503 := []request{
		{name: "a 2025-11-25 initialize", method: "POST", path: mcpPath, body: initialize, header: map[string]string{"Authorization": bearer}},
		{name: "a 2026-07-28 call", method: "POST", path: mcpPath, body: string(currentCall), header: map[string]string{
			"Authorization": bearer, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_task"}},
		{name: "a calendar feed", method: "GET", path: feedPath + feed + ".ics"},
		{name: "the web page, signed in", method: "GET", path: "/app/", cookie: cookie},
		{name: "a form of the web page, signed in", method: "POST", path: "/app/trash", cookie: cookie, form: "csrf=x&item_id=" + task.ID},
		{name: "signing in on the web page", method: "POST", path: "/app/signin", form: "link=" + unused},
	}
	// mend lets the database through again, and waits until the server
	// serves: its pool and its listener reconnect by themselves.
	mend := func(t *testing.T) {
		t.Helper()
		link.Mend()
		deadline := time.Now().Add(10 * time.Second)
		for _, r := range http503[:4] {
			if r.header["Authorization"] != "" {
				r.header = maps.Clone(r.header)
				r.header["Authorization"] = "Bearer " + aliceSecret
			}
			for {
				status, _, body := do(t, r)
				if status < 300 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: still %d %q after the database came back", r.name, status, body)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	mend(t) // every request works before the outage

	link.Cut()
	for _, r := range http503 {
		t.Run(r.name, func(t *testing.T) {
			status, h, body := do(t, r)
			if status != http.StatusServiceUnavailable || h.Get("Retry-After") != "2" {
				t.Errorf("status %d, Retry-After %q, body %q; want 503 with Retry-After 2", status, h.Get("Retry-After"), body)
			}
			if !strings.Contains(strings.ToLower(body), "the database of done is unavailable for now") || !strings.Contains(body, "ry again in a few seconds") {
				t.Errorf("the answer says %q, not that the database is unavailable and to try again", body)
			}
		})
	}

	saysRetry := func(t *testing.T, err error, start time.Time) {
		t.Helper()
		if took := time.Since(start); took > outageBound {
			t.Errorf("answered after %v, more than %v", took, outageBound)
		}
		if err == nil || !strings.Contains(err.Error(), "unavailable for now") || !strings.Contains(err.Error(), "try again") ||
			strings.Contains(err.Error(), "internal error") {
			t.Errorf("err = %v, want one saying the database is unavailable, to try again", err)
		}
	}
	for _, c := range []struct {
		name string
		cs   *mcp.ClientSession
		tool string
		args args
	}{
		{"a read on 2025-11-25", old, "get_task", args{"task_id": task.ID}},
		{"a write on 2025-11-25", old, "create_task", args{"title": "not now"}},
		{"a read on 2026-07-28", current, "list_tasks", args{}},
		{"a write on 2026-07-28", current, "comment_on_task", args{"task_id": task.ID, "body": "not now"}},
	} {
		t.Run("tool call, the database gone after the token's check: "+c.name, func(t *testing.T) {
			mend(t)
			cutNext.Store(true)
			start := time.Now()
			_, err := call[map[string]any](t, c.cs, c.tool, c.args)
			if !errors.Is(err, errToolFailed) {
				t.Errorf("err = %v, want a tool error", err)
			}
			saysRetry(t, err, start)
		})
	}
	t.Run("resources/read, the database gone after the token's check", func(t *testing.T) {
		mend(t)
		cutNext.Store(true)
		start := time.Now()
		_, err := old.ReadResource(ctx, &mcp.ReadResourceParams{URI: taskURIPrefix + task.ID})
		saysRetry(t, err, start)
	})
	t.Run("prompts/get, the database gone after the token's check", func(t *testing.T) {
		mend(t)
		cutNext.Store(true)
		start := time.Now()
		_, err := current.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review_close_requests"})
		saysRetry(t, err, start)
	})

	// A database cut off by the network, its connections open and silent
	// (a partition): a request is answered 503 once the store gives up on
	// it, within its call timeout, not when TCP notices.
	t.Run("a database that never answers", func(t *testing.T) {
		mend(t)
		_, carolSecret, err := st.MintToken(ctx, store.NewToken{Name: "carol", Kind: store.Human, Scope: mcpeffect.Full})
		if err != nil {
			t.Fatal(err)
		}
		link.Hang()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+mcpPath, strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+carolSecret)
		const bound = 15 * time.Second // the store's call timeout, 10 s, and room
		start := time.Now()
		resp, err := (&http.Client{Timeout: 3 * bound}).Do(req)
		if err != nil {
			t.Fatalf("%v after %v", err, time.Since(start))
		}
		resp.Body.Close()
		if took := time.Since(start); took > bound || resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("answered %d after %v; want 503 within %v", resp.StatusCode, took, bound)
		}
		// The partition ends with its connections reset, as TCP would
		// end them in time.
		link.Cut()
	})

	// Mended: the same requests are served, by the same server, and
	// nothing refused was written.
	mend(t)
	must[store.Task](t, current, "create_task", args{"title": "now"})
	if got, err := st.ListComments(ctx, task.ID, store.Page{}); err != nil || len(got.Items) > 0 {
		t.Errorf("a comment refused during the outage is there: %v, %v", got, err)
	}
	if found, err := st.SearchTasks(ctx, "not now", store.Page{}); err != nil || len(found.Items) > 0 {
		t.Errorf("a task refused during the outage is there: %v, %v", found, err)
	}
}
