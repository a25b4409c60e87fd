package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/connector"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

var (
	loadFor      = flag.Duration("load", 0, "run each variant of TestLoad this long a round, and measure (without it, TestLoad is a short smoke run)")
	loadRounds   = flag.Int("load-rounds", 3, "with -load, the rounds of TestLoad, each running every variant once, in a rotating order")
	loadVariants = flag.String("load-variants", "ceiling,with,without", "the variants TestLoad runs, among "+variantNames())
)

// loadClients is how many clients TestLoad runs at once.
const loadClients = 32

// A loadVariant is one server that TestLoad measures.
type loadVariant string

const (
	// ceiling is a trivial go-sdk tool (it echoes its argument) over the
	// same Streamable HTTP, HTTP limits and session limiter as Done, and
	// no store: what go-sdk costs a call, the most Done could do.
	ceiling loadVariant = "ceiling"
	// guarded is Done as it serves.
	guarded loadVariant = "with"
	// unguarded is Done without mcpeffect: the same server minus the
	// registry's check and the HTTP challenge, for this measurement only.
	unguarded loadVariant = "without"
	// unprobed is Done as it serves, whose clients make the calls of
	// unguarded's: whoami in place of each call their scope does not
	// allow. Against unguarded, it measures mcpeffect on the same calls;
	// against guarded, what the refusals change.
	unprobed loadVariant = "with-same-calls"
)

// The variants of Done with one of the choices of issue 14 undone, each
// to measure what the choice buys against Done as it serves, and before,
// with all of them undone.
var candidates = map[loadVariant]struct {
	about   string
	store   func(*store.Options)
	done    func(*done)
	runtime func() (restore func())
	ceiling bool // a variant of the ceiling, not of Done
}{
	"no-pool":       {"database/sql's default pool of readers, two kept open", func(o *store.Options) { o.Readers = -1 }, nil, nil, false},
	"no-stmtcache":  {"every statement compiled at each run", func(o *store.Options) { o.StmtCache = -1 }, nil, nil, false},
	"no-authcache":  {"every token read from the database at each call", func(o *store.Options) { o.AuthCache = 0 }, nil, nil, false},
	"no-admit":      {"every tool call run at once", nil, func(d *done) { d.slots = nil }, nil, false},
	"no-gc":         {"the collector as Go sets it, GOGC=100 and no memory limit", nil, nil, defaultGC, false},
	"ceiling-no-gc": {"the ceiling with the collector as Go sets it", nil, nil, defaultGC, true},
	"before": {"all of the above", func(o *store.Options) { *o = store.Options{Readers: -1, StmtCache: -1} },
		func(d *done) { d.slots = nil }, defaultGC, false},
}

// defaultGC sets the collector as Go has it by default, until restore.
func defaultGC() (restore func()) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

func variantNames() string {
	names := []string{string(ceiling), string(guarded), string(unguarded), string(unprobed)}
	for _, v := range slices.Sorted(maps.Keys(candidates)) {
		names = append(names, string(v))
	}
	return strings.Join(names, ", ")
}

func (v loadVariant) String() string {
	switch v {
	case ceiling:
		return "go-sdk ceiling"
	case "ceiling-no-gc":
		return "go-sdk ceiling, Go's GC"
	case guarded:
		return "Done with mcpeffect"
	case unguarded:
		return "Done without mcpeffect"
	case unprobed:
		return "Done with mcpeffect, no refusals"
	}
	return "Done, " + string(v)
}

// TestLoad runs 32 concurrent clients over loopback HTTP against three
// servers, round by round, and reports how many calls each serves a
// second and at what latency (p50, p99, and p99/p50): Done with
// mcpeffect; Done without mcpeffect; and, as the ceiling, a trivial
// go-sdk tool over the same Streamable HTTP, whose cost is go-sdk's own.
// The ratios that matter (Done against the ceiling, Done with mcpeffect
// against Done without) are taken in each round, between variants that
// ran one after the other, and reported as their median and range: the
// machine may be shared and noisy, which moves all variants of a round
// alike. Each round starts the variants in another order.
//
// On Done, the clients hold tokens of each scope, a person's and an
// agent's, and make two reads for each write where their scope allows
// writes. Every call must succeed but the intended refusals (every 50th
// call of a read-only or non-destructive client with mcpeffect is one its
// scope does not allow; without mcpeffect the client calls whoami in its
// place), and every acknowledged creation must be there afterwards. The
// refusals and their stand-ins are left out of the figures.
//
// The load is stationary: what a round reads does not grow while it
// runs. The reads are of the seed's tasks, comments and steps, and of
// pages of at most 20; the writes add tasks due outside the agenda's
// window, and comments and steps on the tasks the client created.
//
// Without -load, each variant runs for a second: a smoke run, so that the
// test cannot rot. The figures are logged, never asserted: a timing that
// fails a test fails on a busy machine. To measure (see the README):
//
//	go test -run TestLoad -load 15s -load-rounds 5 -v .
func TestLoad(t *testing.T) {
	rounds, length, tasks := 1, time.Second, 50
	if *loadFor > 0 {
		rounds, length, tasks = *loadRounds, *loadFor, 200
	}
	var variants []loadVariant
	for _, name := range strings.Split(*loadVariants, ",") {
		v := loadVariant(strings.TrimSpace(name))
		if _, ok := candidates[v]; !ok && v != ceiling && v != guarded && v != unguarded && v != unprobed {
			t.Fatalf("-load-variants: unknown variant %q (want one of %s)", name, variantNames())
		}
		variants = append(variants, v)
	}
	// The process runs as done-server serves, the clients included.
	defer tuneGC(os.Getenv)()
	seed := newLoadSeed(t, tasks)
	results := map[loadVariant][]loadResult{}
	for round := range rounds {
		for i := range variants {
			v := variants[(round+i)%len(variants)]
			res := runLoad(t, seed, v, length)
			results[v] = append(results[v], res)
			t.Logf("round %d, %-22s %s", round+1, v.String()+":", res)
		}
	}
	for _, v := range variants {
		m := merge(results[v])
		t.Logf("%-22s %s", v.String()+":", m)
		if *loadFor > 0 {
			t.Logf("  by tool: %s", m.tools())
		}
	}
	ratio := func(name string, a, b loadVariant) {
		if len(results[a]) == 0 || len(results[b]) == 0 {
			return
		}
		var calls, p99, cpu []float64
		for i := range results[a] {
			x, y := results[a][i], results[b][i]
			calls = append(calls, x.perSecond()/y.perSecond())
			p99 = append(p99, float64(x.percentile(99))/float64(y.percentile(99)))
			// Calls a CPU-second: on a machine shared with other work, what
			// the CPU would give if the process had it all.
			cpu = append(cpu, float64(y.cpuPerCall())/float64(max(x.cpuPerCall(), 1)))
		}
		t.Logf("%s: calls/s %s, calls a CPU-second %s, p99 %s", name, spread(calls), spread(cpu), spread(p99))
	}
	ratio("Done/ceiling (with mcpeffect)", guarded, ceiling)
	ratio("Done/ceiling (without mcpeffect)", unguarded, ceiling)
	ratio("Done/ceiling, both with Go's GC", "no-gc", "ceiling-no-gc")
	ratio("with/without mcpeffect", guarded, unguarded)
	ratio("with/without mcpeffect, the same calls", unprobed, unguarded)
	ratio("refusals/whoami in their place, with mcpeffect", guarded, unprobed)
	for _, v := range slices.Sorted(maps.Keys(candidates)) {
		if candidates[v].ceiling {
			ratio(fmt.Sprintf("ceiling/%s (%s)", string(v), candidates[v].about), ceiling, v)
			continue
		}
		ratio(fmt.Sprintf("Done/%s (%s)", string(v), candidates[v].about), guarded, v)
	}
}

// spread says the median of the ratios xs, one a round, and their range.
func spread(xs []float64) string {
	s := slices.Sorted(slices.Values(xs))
	return fmt.Sprintf("%.2f (%d rounds: %.2f to %.2f)", s[len(s)/2], len(s), s[0], s[len(s)-1])
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
// scope, and a project of n tasks, each with two steps and two comments.
func newLoadSeed(t *testing.T, n int) *loadSeed {
	t.Helper()
	s := &loadSeed{dir: t.TempDir()}
	ctx := t.Context()
	st, _, err := openStoreAt(t, s.dir, nil)
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
		tok, secret, err := st.MintToken(ctx, store.NewToken{Name: k.name, Kind: k.kind, Scope: k.scope})
		if err != nil {
			t.Fatal(err)
		}
		s.secrets = append(s.secrets, loadToken{secret, k.scope})
		if k.name != "alice" {
			continue
		}
		p, err := st.CreateProject(ctx, tok.Actor(), store.NewProject{Name: "Release"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			task, err := st.CreateTask(ctx, tok.Actor(), store.NewTask{
				Title: fmt.Sprintf("Release task %d", i), ProjectID: p.ID, Due: fmt.Sprintf("2025-06-%02d", 1+i%30),
			})
			if err != nil {
				t.Fatal(err)
			}
			for j := range 2 {
				if _, err := st.AddStep(ctx, tok.Actor(), task.ID, fmt.Sprintf("step %d", j), ""); err != nil {
					t.Fatal(err)
				}
				if _, err := st.CommentOnTask(ctx, tok.Actor(), task.ID, fmt.Sprintf("comment %d", j)); err != nil {
					t.Fatal(err)
				}
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

// loadResult is what one round of one variant measured.
type loadResult struct {
	calls     int           // calls made and allowed
	late      int           // of which in the second half of the round
	refusals  int           // intended refusals, as intended
	creates   int           // acknowledged creations, all found afterwards
	elapsed   time.Duration // of the round
	cpu       time.Duration // the process's CPU time during the round, clients included
	heap      uint64        // the most the heap held, live and garbage, sampled
	latencies []time.Duration
	byTool    map[string][]time.Duration
}

func (r loadResult) perSecond() float64 { return float64(r.calls) / r.elapsed.Seconds() }

// cpuPerCall is the CPU time of the process, server and clients, per call.
func (r loadResult) cpuPerCall() time.Duration { return r.cpu / time.Duration(max(r.calls, 1)) }

func (r loadResult) percentile(p int) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[(len(r.latencies)-1)*p/100]
}

func (r loadResult) String() string {
	p50, p99 := r.percentile(50), r.percentile(99)
	return fmt.Sprintf("%6.0f calls/s, p50 %v, p99 %v, p99/p50 %.1f, CPU %v a call, heap %d MiB (%d calls in %v, second half/first %.2f; %d refusals as intended, %d creations acknowledged and found)",
		r.perSecond(), p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), float64(p99)/float64(max(p50, 1)),
		r.cpuPerCall().Round(time.Microsecond), r.heap>>20, r.calls, r.elapsed.Round(time.Millisecond), float64(r.late)/float64(max(r.calls-r.late, 1)), r.refusals, r.creates)
}

// tools says the share of the calls, p50 and p99 of each tool, slowest
// p99 first.
func (r loadResult) tools() string {
	type row struct {
		tool     string
		n        int
		p50, p99 time.Duration
	}
	var rows []row
	for tool, ds := range r.byTool {
		s := slices.Sorted(slices.Values(ds))
		rows = append(rows, row{tool, len(s), s[(len(s)-1)/2], s[(len(s)-1)*99/100]})
	}
	slices.SortFunc(rows, func(a, b row) int { return int(b.p99 - a.p99) })
	var out []string
	for _, x := range rows {
		out = append(out, fmt.Sprintf("%s %.0f%% %v/%v", x.tool, 100*float64(x.n)/float64(max(r.calls, 1)),
			x.p50.Round(100*time.Microsecond), x.p99.Round(100*time.Microsecond)))
	}
	return strings.Join(out, ", ")
}

func merge(rs []loadResult) loadResult {
	var m loadResult
	for _, r := range rs {
		m.calls += r.calls
		m.late += r.late
		m.refusals += r.refusals
		m.creates += r.creates
		m.elapsed += r.elapsed
		m.cpu += r.cpu
		m.heap = max(m.heap, r.heap)
		m.latencies = append(m.latencies, r.latencies...)
		for tool, ds := range r.byTool {
			if m.byTool == nil {
				m.byTool = map[string][]time.Duration{}
			}
			m.byTool[tool] = append(m.byTool[tool], ds...)
		}
	}
	slices.Sort(m.latencies)
	return m
}

// runLoad runs one round of the variant v, on a fresh copy of the seed.
func runLoad(t *testing.T, seed *loadSeed, v loadVariant, length time.Duration) loadResult {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	// On PostgreSQL (DONE_TEST_DB=postgres), Done on one replica.
	copyStore(t, seed.dir, dir)
	opts := storeOptions()
	c := candidates[v]
	if c.store != nil {
		c.store(opts)
	}
	if c.runtime != nil {
		defer c.runtime()()
	}
	st, _, err := openStoreAt(t, dir, opts)
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
	defaultHTTPLimits.configure(srv.Config)
	base := "http://" + srv.Listener.Addr().String()
	// The write limit off: the load test measures Done, not the limit.
	d := newDone(st, logger, config{baseURL: base, connectors: []connector.Connector{folder}, writeRate: rate.Inf})
	if c.done != nil {
		c.done(d)
	}
	switch {
	default:
		server, registry := d.newServer()
		srv.Config.Handler = d.httpHandler(server, registry)
	case v == unguarded:
		// Done without mcpeffect's checks: no challenge before the
		// server, and in it, in place of the registry's check, its
		// middleware with a scope that lets every tool through (tools
		// added with mcpeffect.AddTool run only behind it). All else is
		// as Done serves: the same middleware, HTTP limits and sessions.
		server, registry := d.newToolServer()
		server.AddReceivingMiddleware(d.middleware(registry, registry.Middleware(&mcpeffect.MiddlewareOptions{
			Scope: func(context.Context, mcp.Request) mcpeffect.Scope { return mcpeffect.Full },
		}))...)
		srv.Config.Handler = d.handlerWith(server, defaultHTTPLimits, nil)
	case v.ceiling():
		srv.Config.Handler = ceilingHandler(d, defaultHTTPLimits)
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
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-load", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint:             base + mcpPath,
				HTTPClient:           &http.Client{Transport: bearerTransport{tok.secret, transport}},
				MaxRetries:           -1,
				DisableStandaloneSSE: true,
			}, nil)
			errs[i] = err
			clients[i] = &loadClient{id: i, cs: cs, scope: tok.scope, variant: v, tasks: seed.tasks, rand: rand.New(rand.NewPCG(uint64(i), 1))}
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
			t.Fatalf("%s: connecting client %d: %v", v, i, errs[i])
		}
	}

	roundCtx, cancel := context.WithTimeout(ctx, length)
	defer cancel()
	// The first fifth of the round warms up (connections open, statements
	// compile, pages come into the cache) and is not measured.
	start := time.Now().Add(length / 5)
	for _, c := range clients {
		c.from, c.half = start, start.Add(length*4/10)
		wg.Go(func() { c.run(roundCtx) })
	}
	time.Sleep(time.Until(start))
	cpu := cpuTime()
	heap := make(chan uint64)
	go func() {
		var most uint64
		var ms runtime.MemStats
		for roundCtx.Err() == nil {
			runtime.ReadMemStats(&ms)
			most = max(most, ms.HeapAlloc)
			time.Sleep(100 * time.Millisecond)
		}
		heap <- most
	}()
	wg.Wait()
	res := loadResult{elapsed: time.Since(start), cpu: cpuTime() - cpu, heap: <-heap}

	var failures []error
	for _, c := range clients {
		res.calls += len(c.latencies)
		res.late += c.late
		res.refusals += c.refusals
		res.latencies = append(res.latencies, c.latencies...)
		for tool, ds := range c.byTool {
			if res.byTool == nil {
				res.byTool = map[string][]time.Duration{}
			}
			res.byTool[tool] = append(res.byTool[tool], ds...)
		}
		failures = append(failures, c.failures...)
		for _, id := range c.created {
			if _, err := st.GetTask(ctx, id); err != nil {
				t.Errorf("%s: task %s, whose creation was acknowledged, is not there: %v", v, id, err)
			}
			res.creates++
		}
	}
	// The refused calls changed nothing.
	if found, err := st.SearchTasks(ctx, "must not", store.Page{}); err != nil || len(found.Items) > 0 {
		t.Errorf("%s: a refused call went through: %v, %v", v, found, err)
	}
	for i, err := range failures {
		if i == 5 {
			t.Errorf("and %d more failures", len(failures)-i)
			break
		}
		t.Errorf("%s: %v", v, err)
	}
	slices.Sort(res.latencies)
	if res.calls == 0 || !v.ceiling() && res.creates == 0 || v.refused() && res.refusals == 0 {
		// A smoke run on a busy machine (the race detector, other tests)
		// may end before a client measured a call: it runs again, longer,
		// rather than failing for the machine's load.
		if *loadFor == 0 && length < 16*time.Second {
			t.Logf("%s: %s; running again for %v", v, res, 2*length)
			return runLoad(t, seed, v, 2*length)
		}
		t.Errorf("%s: %s; the load did not run", v, res)
	}
	return res
}

// guarded reports whether v is Done with mcpeffect.
func (v loadVariant) guarded() bool { return !v.ceiling() && v != unguarded }

// refused reports whether the clients of v make the calls their scope
// does not allow, which must be refused; if not, they call whoami in
// their place.
func (v loadVariant) refused() bool { return v.guarded() && v != unprobed }

// ceiling reports whether v is the ceiling, or a variant of it.
func (v loadVariant) ceiling() bool { return v == ceiling || candidates[v].ceiling }

// echoed is the argument and the result of the ceiling's one tool.
type echoed struct {
	Text string `json:"text"`
}

// ceilingHandler serves a trivial go-sdk tool, echo, over the Streamable
// HTTP of Done: the same deadlines, bearer middleware, session limiter and
// recovery. Its bearer tokens cost nothing to check, since checking one
// against the store is Done's work: any secret is a token of its own
// (sessions are counted per token, as on Done).
func ceilingHandler(d *done, lim httpLimits) http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "ceiling", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoed) (*mcp.CallToolResult, echoed, error) {
			return nil, in, nil
		})
	bearer := auth.RequireBearerToken(func(_ context.Context, secret string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: secret}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	mux := http.NewServeMux()
	mux.Handle(mcpPath, streamDeadlines(lim.write, bearer(d.streamableHandler(server, lim))))
	return recoverHTTP(d.logger, mux)
}

// probeEvery is how often a client whose scope is not full makes a call its
// scope does not allow.
const probeEvery = 50

// A loadClient is one of the clients of TestLoad.
type loadClient struct {
	id      int
	cs      *mcp.ClientSession
	scope   mcpeffect.Scope
	variant loadVariant
	tasks   []string // of the seed
	rand    *rand.Rand
	from    time.Time // when the warm-up ends: calls that start before are not measured
	half    time.Time // the middle of what is measured

	created   []string // acknowledged
	latencies []time.Duration
	byTool    map[string][]time.Duration
	late      int // calls that ended after half
	refusals  int
	failures  []error
}

// run calls tools until ctx is done: reads mostly, writes when the scope
// allows, and now and then a call the scope does not allow.
func (c *loadClient) run(ctx context.Context) {
	for n := 0; ctx.Err() == nil; n++ {
		if !c.variant.ceiling() && n%probeEvery == 0 && c.scope < mcpeffect.Full {
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
		if name == "create_task" {
			m, _ := res.StructuredContent.(map[string]any)
			id, _ := m["id"].(string)
			c.created = append(c.created, id)
		}
		if t0.Before(c.from) {
			continue
		}
		c.latencies = append(c.latencies, d)
		if c.byTool == nil {
			c.byTool = map[string][]time.Duration{}
		}
		c.byTool[name] = append(c.byTool[name], d)
		if t0.Add(d).After(c.half) {
			c.late++
		}
	}
}

// next returns the n-th call of the client: on Done, two reads for each
// write, for a client that may write; on the ceiling, its one tool.
//
// Nothing the reads see grows during a round: they read the seed's tasks,
// with their steps and comments, and pages of at most 20; get_agenda's
// window holds seed tasks only, since created tasks are due after it; and
// the writes that add to a task add to one the client created.
func (c *loadClient) next(n int) (string, args) {
	if c.variant.ceiling() {
		return "echo", args{"text": fmt.Sprintf("call %d of client %d", n, c.id)}
	}
	task := c.tasks[c.rand.IntN(len(c.tasks))]
	if c.scope == mcpeffect.ReadOnly || n%3 != 1 {
		switch c.rand.IntN(7) {
		case 0:
			return "get_task", args{"task_id": task}
		case 1:
			return "list_tasks", args{"limit": 10}
		case 2:
			// "task 1" to "task 19" each match at least 10 tasks of the
			// seed, which comes first: the search stops among them.
			return "search_tasks", args{"query": fmt.Sprintf("task %d", 1+c.rand.IntN(19)), "limit": 5}
		case 3:
			return "list_my_tasks", args{"limit": 10}
		case 4:
			return "get_agenda", args{"from": "2025-06-10", "to": "2025-06-11", "limit": 20}
		case 5:
			return "whoami", args{}
		default:
			return "list_comments", args{"task_id": task, "limit": 20}
		}
	}
	if len(c.created) == 0 {
		return c.create(n)
	}
	own := c.created[c.rand.IntN(len(c.created))]
	switch r := c.rand.IntN(4); {
	case r == 0:
		return "comment_on_task", args{"task_id": own, "body": fmt.Sprintf("comment %d of client %d", n, c.id)}
	case r == 1:
		return "add_step", args{"task_id": own, "text": fmt.Sprintf("step %d of client %d", n, c.id)}
	case r == 2 && c.scope == mcpeffect.Full:
		return "update_task", args{"task_id": own, "title": fmt.Sprintf("task of client %d, revised at %d", c.id, n)}
	default:
		return c.create(n)
	}
}

// create returns a call that creates a task, due after the window that
// get_agenda reads.
func (c *loadClient) create(n int) (string, args) {
	return "create_task", args{"title": fmt.Sprintf("new %d of client %d", n, c.id), "due": "2025-07-15"}
}

// probe makes a call that the client's scope does not allow, and that
// must be refused, when mcpeffect guards the server. Without it, the call
// would go through: the client calls whoami instead, which costs about
// what a refusal does (a request read, decoded and answered, and no
// store), so that both variants make as many calls and leave as many out
// of their figures.
func (c *loadClient) probe(ctx context.Context) {
	if !c.variant.refused() {
		c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: args{}})
		return
	}
	name, a := c.probeCall()
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

// probeCall returns the call that probe makes: one that the client's
// scope, read-only or non-destructive, does not allow.
func (c *loadClient) probeCall() (string, args) {
	if c.scope == mcpeffect.NonDestructive {
		return "update_task", args{"task_id": c.tasks[0], "title": "must not change"}
	}
	return "create_task", args{"title": "must not exist"}
}
