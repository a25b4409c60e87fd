package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

var faultsFor = flag.Duration("faults", 0, "run each phase of TestReplicasUnderFaults this long (without it, a short smoke run)")

// TestReplicasUnderFaults runs three done-server processes on one
// PostgreSQL behind a round-robin reverse proxy, with writers creating
// tasks through it. In the middle it kills one replica with SIGKILL, and
// later stops PostgreSQL as a crash would and starts it again. It shows:
// every acknowledged write is there; no task was written twice; the
// survivors go on serving after the kill; every call is answered within
// a bound, never left to hang, and never with Done's internal error;
// service comes back after the database does, without restarting a
// replica.
//
// Sessions of the Streamable HTTP of this server live in the replica
// that made them, so the proxy keeps a session on its replica (affinity
// by Mcp-Session-Id) and sends each new one round-robin; a writer whose
// replica died opens a new session, as a client of a load balancer
// would.
func TestReplicasUnderFaults(t *testing.T) {
	postgresOnly(t)
	phase := *faultsFor
	if phase == 0 {
		phase = 1500 * time.Millisecond
	}
	url := pgtest.NewDatabase(t)
	cluster := pgtest.Start(t)

	const writers = 6
	var secrets []string
	for w := range writers {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), []string{"token", "create", "-db", url, "-scope", "full", "-kind", "agent", "-name", fmt.Sprint("writer-", w)},
			getenv(nil), &stdout, &stderr)
		if err != nil {
			t.Fatalf("%v\n%s", err, &stderr)
		}
		secrets = append(secrets, strings.TrimSpace(stdout.String()))
	}

	var replicas []*exec.Cmd
	proxy := &rrProxy{sessions: map[string]int{}, transport: http.DefaultTransport.(*http.Transport).Clone()}
	for range 3 {
		cmd, base := startReplica(t, url)
		replicas = append(replicas, cmd)
		proxy.backends = append(proxy.backends, base)
	}
	front := httptest.NewServer(proxy)
	defer front.Close()
	endpoint := front.URL + mcpPath

	// What the writers saw: each acknowledged task, each call's time, and
	// every error, by when it came.
	var (
		mu        sync.Mutex
		acked     = map[string]string{} // id → title
		ackTimes  []time.Time
		slowest   time.Duration
		errs      []string
		stop      = make(chan struct{})
		wg        sync.WaitGroup
		transport = http.DefaultTransport.(*http.Transport).Clone()
	)
	defer transport.CloseIdleConnections()
	const callBound = 10 * time.Second
	for w := range writers {
		wg.Go(func() {
			var cs *mcp.ClientSession
			defer func() {
				if cs != nil {
					cs.Close()
				}
			}()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				var err error
				if cs == nil {
					cs, err = mcp.NewClient(&mcp.Implementation{Name: "done-faults", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
						Endpoint:             endpoint,
						HTTPClient:           &http.Client{Transport: bearerTransport{secrets[w], transport}, Timeout: 2 * callBound},
						MaxRetries:           -1,
						DisableStandaloneSSE: true,
					}, nil)
				}
				var task store.Task
				title := fmt.Sprintf("task %d of writer %d", n, w)
				if err == nil {
					task, err = call[store.Task](t, cs, "create_task", args{"title": title})
				}
				took := time.Since(start)
				mu.Lock()
				slowest = max(slowest, took)
				if err == nil {
					acked[task.ID] = title
					ackTimes = append(ackTimes, time.Now())
				} else {
					errs = append(errs, err.Error())
				}
				mu.Unlock()
				// Each writer is a tree of tokens of its own, which a
				// replica lets write 20 times a second: the writers stay
				// below, so that the errors are the faults'.
				time.Sleep(60 * time.Millisecond)
				if err != nil {
					// A tool's refusal keeps the session; anything else
					// (the replica gone, the session unknown) opens a new
					// one.
					var toolErr toolError
					if !errors.As(err, &toolErr) && cs != nil {
						cs.Close()
						cs = nil
					}
				}
			}
		})
	}

	acksSince := func(at time.Time) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, a := range ackTimes {
			if a.After(at) {
				n++
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
	t.Logf("%d tasks acknowledged, %d after the kill (before the outage), %d after PostgreSQL came back; %d errors; slowest call %v",
		len(acked), afterKill, afterRestart, len(errs), slowest)
	if afterKill == 0 {
		t.Error("no write went through the survivors after the kill")
	}
	if afterRestart == 0 {
		t.Error("no write went through after PostgreSQL came back")
	}
	if slowest > callBound {
		t.Errorf("a call took %v, more than %v", slowest, callBound)
	}
	kinds := map[string]int{}
	for _, e := range errs {
		if strings.Contains(e, "internal error") {
			t.Errorf("an answer was Done's internal error: %s", e)
		}
		kinds[e[:min(len(e), 120)]]++
	}
	for e, n := range kinds {
		t.Logf("%5d× %s", n, e)
	}
	// The answers of the replicas' failures: during the outage a request
	// whose token must be looked up is refused with a 503 that says why,
	// and when to try again.
	proxy.mu.Lock()
	told := kinds["the database of Done is unavailable for now (down, restarting or busy): nothing was changed; try again in a few seconds"]
	for _, f := range proxy.failures {
		if f == "503 (Retry-After 2) the database of Done is unavailable for now: try again in a few seconds" {
			told++
		} else {
			t.Errorf("a replica failed with %q, want an answer that says the database is unavailable", f)
		}
	}
	proxy.mu.Unlock()
	if told == 0 {
		t.Error("no call during the outage was told that the database is unavailable")
	}

	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(), `SELECT id, title FROM tasks`)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{}
	titles := map[string]int{}
	for rows.Next() {
		var id, title string
		if err := rows.Scan(&id, &title); err != nil {
			t.Fatal(err)
		}
		stored[id] = title
		titles[title]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id, title := range acked {
		if stored[id] != title {
			t.Errorf("acknowledged task %s %q is not in the database", id, title)
		}
	}
	for title, n := range titles {
		if n > 1 {
			t.Errorf("task %q is there %d times", title, n)
		}
	}
}

// startReplica starts done-server serve -http on a loopback port chosen
// by the system, on the database at url, and returns the process and its
// base URL once it listens.
func startReplica(t *testing.T, url string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "-db", url, "-data", t.TempDir(), "-context", "off", "-http", "127.0.0.1:0")
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
			go io.Copy(io.Discard, stderr)
			return cmd, strings.TrimSuffix(endpoint, mcpPath)
		}
	}
	t.Fatal("a replica never said where it listens")
	return nil, ""
}

// rrProxy is a reverse proxy that sends each request that opens a
// session to the next replica in turn, skipping those it cannot reach,
// and each request of a session to the replica that made it.
type rrProxy struct {
	backends  []string // base URLs
	transport *http.Transport

	mu       sync.Mutex
	next     int
	sessions map[string]int // Mcp-Session-Id → backend
	failures []string       // the status, Retry-After and body of each answer of 500 or more from a replica
}

func (p *rrProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	first, sticky := p.sessions[r.Header.Get("Mcp-Session-Id")]
	if !sticky {
		first = p.next
		p.next = (p.next + 1) % len(p.backends)
	}
	p.mu.Unlock()
	tries := len(p.backends)
	if sticky {
		tries = 1
	}
	for i := range tries {
		b := (first + i) % len(p.backends)
		out, err := http.NewRequestWithContext(r.Context(), r.Method, p.backends[b]+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := p.transport.RoundTrip(out)
		if err != nil {
			continue // the replica is gone: the next one
		}
		defer resp.Body.Close()
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			p.mu.Lock()
			p.sessions[id] = b
			p.mu.Unlock()
		}
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
// JSON-RPC error that says so. Once the path is mended, the same
// requests work, on the same server.
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
