package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/connector"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	loadFor    = flag.Duration("load", 0, "run each round of TestLoad this long, and measure what mcpeffect costs (without it, TestLoad is a short smoke run)")
	loadRounds = flag.Int("load-rounds", 3, "with -load, the rounds of each variant of TestLoad, alternated")
)

// loadClients is how many clients TestLoad runs at once.
const loadClients = 32

// TestLoad runs 32 concurrent clients over loopback HTTP, with tokens of
// each scope, a person's and an agent's, making a mix of reads and writes.
// Every call must succeed but the intended refusals (a read-only token
// creating a task, a non-destructive one overwriting one), and every task
// whose creation was acknowledged must be there afterwards.
//
// It runs the same load on two servers: Done as it is, and Done with
// mcpeffect's checks removed (no HTTP challenge, a middleware that lets
// every tool through; bearer tokens stay), alternating between them
// round by round since the machine may be shared and noisy, and reports
// the calls per second and the latency of each. The clients make the same calls on both, except that on the
// first, every 50th call of a read-only or non-destructive client is one
// its scope does not allow, which must be refused: the second would let
// it through, so there the client skips it. The refusals are left out of
// the figures, and can only make the first look slower.
//
// Without -load, the rounds are short: a smoke run, so that the test
// cannot rot. The figures are logged, never asserted: a timing that fails
// a test fails on a busy machine. To measure:
//
//	go test -run TestLoad -load 20s -v .
func TestLoad(t *testing.T) {
	rounds, length, tasks := 1, time.Second, 50
	if *loadFor > 0 {
		rounds, length, tasks = *loadRounds, *loadFor, 200
	}
	seed := newLoadSeed(t, tasks)
	results := map[bool][]loadResult{}
	for i := range 2 * rounds {
		// with, without, without, with, with, without...: each variant
		// runs as often first as second in a pair.
		guarded := (i%4 == 0 || i%4 == 3)
		res := runLoad(t, seed, guarded, length)
		results[guarded] = append(results[guarded], res)
		t.Logf("round %d, %s: %s", i+1, variantName(guarded), res)
	}
	with, without := merge(results[true]), merge(results[false])
	t.Logf("with mcpeffect:    %s", with)
	t.Logf("without mcpeffect: %s", without)
	t.Logf("with/without: %.3f of the calls per second (%+.1f%%), %.3f of the p99 latency",
		with.perSecond()/without.perSecond(), 100*(with.perSecond()/without.perSecond()-1),
		float64(with.percentile(99))/float64(without.percentile(99)))
}

func variantName(guarded bool) string {
	if guarded {
		return "with mcpeffect"
	}
	return "without mcpeffect"
}

// loadSeed is the workspace each round starts from, made once.
type loadSeed struct {
	dir     string
	tasks   []string
	secrets []loadToken
}

type loadToken struct {
	secret string
	scope  mcpeffect.Scope
}

// newLoadSeed makes a workspace of people and agents with a token of each
// scope, and a project of n tasks.
func newLoadSeed(t *testing.T, n int) *loadSeed {
	t.Helper()
	s := &loadSeed{dir: t.TempDir()}
	st, _, err := store.Open(t.Context(), s.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		name  string
		kind  store.Kind
		scope mcpeffect.Scope
	}{
		{"alice", store.Human, mcpeffect.Full},
		{"bob", store.Human, mcpeffect.NonDestructive},
		{"rita", store.Human, mcpeffect.ReadOnly},
		{"builder", store.Agent, mcpeffect.Full},
		{"runner", store.Agent, mcpeffect.NonDestructive},
		{"watcher", store.Agent, mcpeffect.ReadOnly},
	} {
		tok, secret, err := st.MintToken(t.Context(), store.NewToken{Name: k.name, Kind: k.kind, Scope: k.scope})
		if err != nil {
			t.Fatal(err)
		}
		s.secrets = append(s.secrets, loadToken{secret, k.scope})
		if k.name != "alice" {
			continue
		}
		p, err := st.CreateProject(t.Context(), tok.Actor(), store.NewProject{Name: "Release"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			task, err := st.CreateTask(t.Context(), tok.Actor(), store.NewTask{
				Title: fmt.Sprintf("Release task %d", i), ProjectID: p.ID, Due: fmt.Sprintf("2025-06-%02d", 1+i%30),
			})
			if err != nil {
				t.Fatal(err)
			}
			s.tasks = append(s.tasks, task.ID)
		}
	}
	// Closing folds the write-ahead log into the file, which each round
	// copies.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

// loadResult is what one round measured.
type loadResult struct {
	calls     int           // calls made and allowed
	refusals  int           // intended refusals, as intended
	creates   int           // acknowledged creations, all found afterwards
	elapsed   time.Duration // of the round
	latencies []time.Duration
}

func (r loadResult) perSecond() float64 { return float64(r.calls) / r.elapsed.Seconds() }

func (r loadResult) percentile(p int) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[(len(r.latencies)-1)*p/100]
}

func (r loadResult) String() string {
	return fmt.Sprintf("%d calls in %v: %.0f calls/s, p50 %v, p99 %v; %d refusals as intended, %d creations acknowledged and found",
		r.calls, r.elapsed.Round(time.Millisecond), r.perSecond(), r.percentile(50).Round(time.Microsecond),
		r.percentile(99).Round(time.Microsecond), r.refusals, r.creates)
}

func merge(rs []loadResult) loadResult {
	var m loadResult
	for _, r := range rs {
		m.calls += r.calls
		m.refusals += r.refusals
		m.creates += r.creates
		m.elapsed += r.elapsed
		m.latencies = append(m.latencies, r.latencies...)
	}
	slices.Sort(m.latencies)
	return m
}

// runLoad runs one round on a fresh copy of the seed.
func runLoad(t *testing.T, seed *loadSeed, guarded bool, length time.Duration) loadResult {
	t.Helper()
	dir := t.TempDir()
	db, err := os.ReadFile(filepath.Join(seed.dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.FileName), db, 0o600); err != nil {
		t.Fatal(err)
	}
	st, _, err := store.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	folder, err := connector.NewFolder("local", filepath.Join(dir, "context"))
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	d := newDone(st, logger, config{baseURL: base, connectors: []connector.Connector{folder}})
	if guarded {
		server, registry := d.newServer()
		srv.Config.Handler = d.httpHandler(server, registry)
	} else {
		// Done without mcpeffect's checks, for this measurement only: no
		// challenge before the server, and in it a middleware that lets
		// every classified tool through, since tools added with
		// mcpeffect.AddTool run only behind one. The caller is still
		// identified, for the handlers.
		server, registry := d.newToolServer()
		server.AddReceivingMiddleware(
			registry.Middleware(&mcpeffect.MiddlewareOptions{Scope: func(context.Context, mcp.Request) mcpeffect.Scope { return mcpeffect.Full }}),
			d.identify,
		)
		mux := http.NewServeMux()
		mux.Handle(mcpPath, d.bearer()(d.streamableHandler(server, defaultHTTPLimits.sessionIdle)))
		srv.Config.Handler = mux
	}
	srv.Start()
	defer srv.Close()

	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = loadClients
	defer transport.CloseIdleConnections()
	clients := make([]*loadClient, loadClients)
	errs := make([]error, loadClients)
	var wg sync.WaitGroup
	for i := range clients {
		tok := seed.secrets[i%len(seed.secrets)]
		wg.Go(func() {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-load", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
				Endpoint:             base + mcpPath,
				HTTPClient:           &http.Client{Transport: bearerTransport{tok.secret, transport}},
				MaxRetries:           -1,
				DisableStandaloneSSE: true,
			}, nil)
			errs[i] = err
			clients[i] = &loadClient{id: i, cs: cs, scope: tok.scope, guarded: guarded, tasks: seed.tasks, rand: rand.New(rand.NewPCG(uint64(i), 1))}
		})
	}
	wg.Wait()
	defer func() {
		for _, c := range clients {
			if c.cs != nil {
				wg.Go(func() { c.cs.Close() })
			}
		}
		wg.Wait()
	}()
	for i := range clients {
		if errs[i] != nil {
			t.Fatalf("connecting client %d: %v", i, errs[i])
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), length)
	defer cancel()
	start := time.Now()
	for _, c := range clients {
		wg.Go(func() { c.run(ctx) })
	}
	wg.Wait()
	res := loadResult{elapsed: time.Since(start)}

	var failures []error
	for _, c := range clients {
		res.calls += len(c.latencies)
		res.refusals += c.refusals
		res.latencies = append(res.latencies, c.latencies...)
		failures = append(failures, c.failures...)
		for _, id := range c.created {
			if _, err := st.GetTask(t.Context(), id); err != nil {
				t.Errorf("task %s, whose creation was acknowledged, is not there: %v", id, err)
			}
			res.creates++
		}
	}
	// The refused calls changed nothing.
	if found, err := st.SearchTasks(t.Context(), "must not", store.Page{}); err != nil || len(found.Items) > 0 {
		t.Errorf("%s: a refused call went through: %v, %v", variantName(guarded), found, err)
	}
	for i, err := range failures {
		if i == 5 {
			t.Errorf("and %d more failures", len(failures)-i)
			break
		}
		t.Errorf("%s: %v", variantName(guarded), err)
	}
	slices.Sort(res.latencies)
	if res.calls == 0 || res.creates == 0 || guarded && res.refusals == 0 {
		t.Errorf("%s: %s; the load did not run", variantName(guarded), res)
	}
	return res
}

// probeEvery is how often a client whose scope is not full makes a call its
// scope does not allow.
const probeEvery = 50

// A loadClient is one of the clients of TestLoad.
type loadClient struct {
	id      int
	cs      *mcp.ClientSession
	scope   mcpeffect.Scope
	guarded bool
	tasks   []string // of the seed
	rand    *rand.Rand

	created   []string // acknowledged
	latencies []time.Duration
	refusals  int
	failures  []error
}

// run calls tools until ctx is done: reads mostly, writes when the scope
// allows, and now and then a call the scope does not allow.
func (c *loadClient) run(ctx context.Context) {
	for n := 0; ctx.Err() == nil; n++ {
		if n%probeEvery == 0 && c.scope < mcpeffect.Full {
			c.probe(ctx)
			continue
		}
		name, a := c.next(n)
		t0 := time.Now()
		res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a})
		d := time.Since(t0)
		if ctx.Err() != nil {
			return // the call was cut short by the end of the round
		}
		switch {
		case err != nil:
			c.failures = append(c.failures, fmt.Errorf("client %d (%s): %s: %w", c.id, c.scope, name, err))
			continue
		case res.IsError:
			c.failures = append(c.failures, fmt.Errorf("client %d (%s): %s: %s", c.id, c.scope, name, text(res)))
			continue
		}
		c.latencies = append(c.latencies, d)
		if name == "create_task" {
			m, _ := res.StructuredContent.(map[string]any)
			id, _ := m["id"].(string)
			c.created = append(c.created, id)
		}
	}
}

// next returns the n-th call of the client: two reads for each write, for
// a client that may write.
func (c *loadClient) next(n int) (string, args) {
	task := c.tasks[c.rand.IntN(len(c.tasks))]
	if c.scope == mcpeffect.ReadOnly || n%3 != 1 {
		switch c.rand.IntN(7) {
		case 0:
			return "get_task", args{"task_id": task}
		case 1:
			return "list_tasks", args{"limit": 10}
		case 2:
			return "search_tasks", args{"query": fmt.Sprintf("task %d", c.rand.IntN(len(c.tasks))), "limit": 5}
		case 3:
			return "list_my_tasks", args{"limit": 10}
		case 4:
			return "get_agenda", args{"from": "2025-06-10", "to": "2025-06-11"}
		case 5:
			return "whoami", args{}
		default:
			return "list_comments", args{"task_id": task}
		}
	}
	switch r := c.rand.IntN(4); {
	case r == 0:
		return "comment_on_task", args{"task_id": task, "body": fmt.Sprintf("comment %d of client %d", n, c.id)}
	case r == 1:
		return "add_step", args{"task_id": task, "text": fmt.Sprintf("step %d of client %d", n, c.id)}
	case r == 2 && c.scope == mcpeffect.Full && len(c.created) > 0:
		own := c.created[c.rand.IntN(len(c.created))]
		return "update_task", args{"task_id": own, "title": fmt.Sprintf("task of client %d, revised at %d", c.id, n)}
	default:
		return "create_task", args{"title": fmt.Sprintf("task %d of client %d", n, c.id), "due": "2025-06-10"}
	}
}

// probe makes a call that the client's scope does not allow, and that
// must be refused, when mcpeffect guards the server. Without it, the call
// would go through: the client skips it.
func (c *loadClient) probe(ctx context.Context) {
	if !c.guarded {
		return
	}
	name, a := "create_task", args{"title": "must not exist"}
	if c.scope == mcpeffect.NonDestructive {
		name, a = "update_task", args{"task_id": c.tasks[0], "title": "must not change"}
	}
	_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a})
	if ctx.Err() != nil {
		return
	}
	if d, ok := mcpeffect.AsDeniedError(err); !ok || d.Tool != name || d.Granted != c.scope {
		c.failures = append(c.failures, fmt.Errorf("client %d (%s): %s: err = %v, want a refusal", c.id, c.scope, name, err))
		return
	}
	c.refusals++
}
