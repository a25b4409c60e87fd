package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	// whose token must be looked up is refused with a 500 that says why.
	proxy.mu.Lock()
	told := kinds["the database of Done is unavailable for now (down, restarting or busy): nothing was changed; try again in a few seconds"]
	for _, f := range proxy.failures {
		if f == "500 the database of Done is unavailable for now: try again in a few seconds" {
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
	failures []string       // the status and body of each answer of 500 or more from a replica
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
			p.failures = append(p.failures, fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(failure)))
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
