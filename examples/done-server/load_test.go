package main

import (
	"context"
	"database/sql"
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
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/connector"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/admit"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/gctune"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

var (
	loadFor      = flag.Duration("load", 0, "run each variant of TestLoad this long a round, and measure (without it, TestLoad is a short smoke run)")
	loadRounds   = flag.Int("load-rounds", 3, "with -load, the rounds of TestLoad, each running every variant once, in a rotating order")
	loadVariants = flag.String("load-variants", "ceiling,with,without", "the variants TestLoad runs, among "+variantNames())
	loadTasks    = flag.String("load-tasks", "", "the sizes of the workspace, in tasks, on which TestLoad runs each variant of Done, such as 200,20000,200000 (default 200 with -load, 50 without)")
	loadProtocol = flag.String("load-protocol", "", "the protocol version that the clients of TestLoad ask for, such as 2026-07-28, which has no sessions (default: go-sdk's)")
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
	"no-admit":      {"every tool call run at once", nil, func(d *done) { d.queue = admit.New(0, true) }, nil, false},
	"no-gc":         {"the collector as Go sets it, GOGC=100 and no memory limit", nil, nil, defaultGC, false},
	"ceiling-no-gc": {"the ceiling with the collector as Go sets it", nil, nil, defaultGC, true},
	"before": {"all of the above", func(o *store.Options) { *o = store.Options{Readers: -1, StmtCache: -1} },
		func(d *done) { d.queue = admit.New(0, true) }, defaultGC, false},
}

// The variants of Done on a store of their own, whatever DONE_TEST_DB
// says, so that one run measures both stores, and replicas, against one
// ceiling. On PostgreSQL in this process, Done serves as a replica does,
// statelessly. The replicas are done-server processes, started as the
// fault test starts them (serve -db URL -http), behind the fault test's
// round-robin proxy in this process: what the issue pictures, each
// replica with its own runtime, pool, token cache and admission queue,
// and every request a hop through the proxy. Replicas on a shared store
// serve every request statelessly, so the proxy needs no affinity: it
// sends each request to the next replica. sqlite-1 is Done on SQLite as
// one such process (serve -data DIR -http) behind the same proxy: what
// one replica is measured against, over the same hop.
var stored = map[loadVariant]struct {
	backend  string // "sqlite" or "postgres"
	replicas int    // done-server processes behind the proxy; 0 for Done in this process
}{
	"sqlite":   {"sqlite", 0},
	"sqlite-1": {"sqlite", 1},
	"pg":       {"postgres", 0},
	"pg-1":     {"postgres", 1},
	"pg-2":     {"postgres", 2},
	"pg-3":     {"postgres", 3},
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
	for _, v := range slices.Sorted(maps.Keys(stored)) {
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
	case "sqlite":
		return "Done on SQLite"
	case "pg":
		return "Done on PostgreSQL"
	}
	if v == "sqlite-1" {
		return "Done on SQLite, 1 process"
	}
	if s, ok := stored[v]; ok {
		return fmt.Sprintf("Done, PostgreSQL, %d replica%s", s.replicas, map[bool]string{true: "s"}[s.replicas > 1])
	}
	return "Done, " + string(v)
}

// backend is the store that v serves: its own, or the store of this run.
func (v loadVariant) backend() string {
	if s, ok := stored[v]; ok {
		return s.backend
	}
	return pgtest.Backend()
}

// A loadItem is one variant on one size of workspace: what one round
// runs once. The ceiling has no workspace (tasks 0).
type loadItem struct {
	v     loadVariant
	tasks int
}

func (it loadItem) String() string {
	if it.tasks == 0 {
		return it.v.String()
	}
	return fmt.Sprintf("%s, %d tasks", it.v, it.tasks)
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
// The variants of -load-variants also put Done on a store of its own,
// whatever DONE_TEST_DB says (see stored): SQLite, PostgreSQL in this
// process, and 1, 2 or 3 done-server processes on PostgreSQL behind a
// round-robin proxy, so that one run compares them against one ceiling.
// -load-tasks runs each variant of Done on workspaces of several sizes,
// and reports the cost of a call on each against the smallest, in the
// same round; -load-protocol sets the protocol version of the clients.
//
// Without -load, each variant runs for a second: a smoke run, so that the
// test cannot rot. The figures are logged, never asserted: a timing that
// fails a test fails on a busy machine. To measure (see the README):
//
//	go test -run 'TestLoad$' -load 15s -load-rounds 5 -v .
func TestLoad(t *testing.T) {
	rounds, length, sizes := 1, time.Second, []int{50}
	if *loadFor > 0 {
		rounds, length, sizes = *loadRounds, *loadFor, []int{200}
	}
	if *loadTasks != "" {
		sizes = nil
		for _, f := range strings.Split(*loadTasks, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				t.Fatalf("-load-tasks: %q is not a number of tasks", f)
			}
			sizes = append(sizes, n)
		}
	}
	var variants []loadVariant
	for _, name := range strings.Split(*loadVariants, ",") {
		v := loadVariant(strings.TrimSpace(name))
		_, candidate := candidates[v]
		_, own := stored[v]
		if !candidate && !own && v != ceiling && v != guarded && v != unguarded && v != unprobed {
			t.Fatalf("-load-variants: unknown variant %q (want one of %s)", name, variantNames())
		}
		variants = append(variants, v)
	}
	var items []loadItem
	for _, v := range variants {
		if v.ceiling() {
			items = append(items, loadItem{v, 0})
			continue
		}
		for _, n := range sizes {
			items = append(items, loadItem{v, n})
		}
	}
	// The process runs as done-server serves, the clients included.
	defer gctune.Tune(os.Getenv)()
	// One seed for each store and size, made before the rounds.
	type seedKey struct {
		backend string
		tasks   int
	}
	seeds := map[seedKey]*loadSeed{}
	seedOf := func(it loadItem) *loadSeed {
		if it.tasks == 0 {
			return nil
		}
		return seeds[seedKey{it.v.backend(), it.tasks}]
	}
	for _, it := range items {
		key := seedKey{it.v.backend(), it.tasks}
		if _, ok := seeds[key]; !ok && it.tasks > 0 {
			start := time.Now()
			seeds[key] = newLoadSeed(t, key.backend, key.tasks)
			t.Logf("seeded %d tasks on %s in %v", it.tasks, it.v.backend(), time.Since(start).Round(time.Millisecond))
		}
	}
	results := map[loadItem][]loadResult{}
	for round := range rounds {
		for i := range items {
			it := items[(round+i)%len(items)]
			var res loadResult
			// A subtest a round, so that what the round made (databases,
			// processes) goes at its end.
			if !t.Run(fmt.Sprintf("%d/%s/%d", round+1, string(it.v), it.tasks), func(t *testing.T) {
				res = runLoad(t, seedOf(it), it.v, length, *loadProtocol)
			}) {
				t.FailNow()
			}
			results[it] = append(results[it], res)
			t.Logf("round %d, %-38s %s", round+1, it.String()+":", res)
		}
	}
	for _, it := range items {
		m := merge(results[it])
		t.Logf("%-38s %s", it.String()+":", m)
		if *loadFor > 0 {
			t.Logf("  by tool: %s", m.tools())
		}
	}
	ratio := func(name string, a, b loadItem) {
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
	c := loadItem{ceiling, 0}
	for _, n := range sizes {
		at := ""
		if len(sizes) > 1 {
			at = fmt.Sprintf(", %d tasks", n)
		}
		on := func(v loadVariant) loadItem { return loadItem{v, n} }
		ratio("Done/ceiling (with mcpeffect)"+at, on(guarded), c)
		ratio("Done/ceiling (without mcpeffect)"+at, on(unguarded), c)
		ratio("Done/ceiling, both with Go's GC"+at, on("no-gc"), loadItem{"ceiling-no-gc", 0})
		ratio("with/without mcpeffect"+at, on(guarded), on(unguarded))
		ratio("with/without mcpeffect, the same calls"+at, on(unprobed), on(unguarded))
		ratio("refusals/whoami in their place, with mcpeffect"+at, on(guarded), on(unprobed))
		for _, v := range slices.Sorted(maps.Keys(candidates)) {
			if candidates[v].ceiling {
				if n == sizes[0] {
					ratio(fmt.Sprintf("ceiling/%s (%s)", string(v), candidates[v].about), c, loadItem{v, 0})
				}
				continue
			}
			ratio(fmt.Sprintf("Done/%s (%s)%s", string(v), candidates[v].about, at), on(guarded), on(v))
		}
		for _, v := range slices.Sorted(maps.Keys(stored)) {
			ratio(fmt.Sprintf("%s/ceiling%s", string(v), at), on(v), c)
		}
		for _, v := range []loadVariant{"pg", "pg-1", "pg-2", "pg-3", "sqlite-1"} {
			ratio(fmt.Sprintf("%s/sqlite%s", string(v), at), on(v), on("sqlite"))
		}
		ratio("pg-1/sqlite-1"+at, on("pg-1"), on("sqlite-1"))
		ratio("pg-2/pg-1"+at, on("pg-2"), on("pg-1"))
		ratio("pg-3/pg-1"+at, on("pg-3"), on("pg-1"))
	}
	// The cost of a call as the workspace grows: each size against the
	// smallest, in the same round.
	for _, v := range variants {
		for _, n := range sizes[1:] {
			small, big := results[loadItem{v, sizes[0]}], results[loadItem{v, n}]
			if len(small) == 0 || len(big) == 0 {
				continue
			}
			var calls, cpu, p99 []float64
			for i := range small {
				calls = append(calls, small[i].perSecond()/big[i].perSecond())
				cpu = append(cpu, float64(big[i].cpuPerCall())/float64(max(small[i].cpuPerCall(), 1)))
				p99 = append(p99, float64(big[i].percentile(99))/float64(max(small[i].percentile(99), 1)))
			}
			t.Logf("the cost of a call, %s, %d tasks against %d: by calls/s %s, by CPU a call %s, p99 %s",
				string(v), n, sizes[0], spread(calls), spread(cpu), spread(p99))
		}
	}
}

// spread says the median of the ratios xs, one a round, and their range.
func spread(xs []float64) string {
	s := slices.Sorted(slices.Values(xs))
	return fmt.Sprintf("%.2f (%d rounds: %.2f to %.2f)", s[len(s)/2], len(s), s[0], s[len(s)-1])
}

// loadSeed is the workspace each round starts from, made once for each
// store and size, and copied for each round.
type loadSeed struct {
	backend string
	dir     string // on SQLite: the data directory, its database closed
	url     string // on PostgreSQL: the database, no one connected to it
	tasks   []string
	secrets []loadToken
}

type loadToken struct {
	secret string
	scope  mcpeffect.Scope
}

// newLoadSeed makes, on backend, a workspace of people and agents with a
// token of each scope, and a project of n tasks, each with two steps and
// two comments, and the activity that making them through the tools
// would have logged.
//
// The tasks, steps, comments and activity go in with bulk SQL in one
// transaction (COPY on PostgreSQL), not through the store a call at a
// time: a workspace of 200,000 tasks would take many minutes that way.
// The rows are those the store writes (its ids, its times, its columns),
// in the order in which the tools would have made them. On PostgreSQL the
// seed is then analyzed, as autovacuum would have done in a workspace
// that grew; on SQLite it is not, since Done never runs ANALYZE.
func newLoadSeed(t *testing.T, backend string, n int) *loadSeed {
	t.Helper()
	s := &loadSeed{backend: backend}
	ctx := t.Context()
	var st *store.Store
	var err error
	if backend == "postgres" {
		s.url = pgtest.NewLastingDatabase(t)
		st, _, err = store.OpenPostgres(ctx, s.url, nil)
	} else {
		s.dir = t.TempDir()
		st, _, err = store.Open(ctx, s.dir, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	var alice store.Actor
	var project string
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
		alice = tok.Actor()
		p, err := st.CreateProject(ctx, alice, store.NewProject{Name: "Release"})
		if err != nil {
			t.Fatal(err)
		}
		project = p.ID
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	tables := s.rows(alice, project, n)
	if backend == "postgres" {
		seedPostgres(t, s.url, tables)
	} else {
		seedSQLite(t, filepath.Join(s.dir, store.FileName), tables)
	}
	return s
}

// A seedTable is the rows of one table of the seed, made one at a time.
type seedTable struct {
	name string
	cols []string
	n    int
	row  func(i int) []any
}

// rows returns the seed's tables of n tasks in project, made by by, and
// keeps the tasks' ids in s.
func (s *loadSeed) rows(by store.Actor, project string, n int) []seedTable {
	// The ids in the order the tools would make them: a task, then its
	// steps and comments in turn. Version 7, as the store's.
	s.tasks = make([]string, n)
	steps, comments := make([]string, 2*n), make([]string, 2*n)
	for i := range n {
		s.tasks[i] = uuid.Must(uuid.NewV7()).String()
		for j := range 2 {
			steps[2*i+j] = uuid.Must(uuid.NewV7()).String()
			comments[2*i+j] = uuid.Must(uuid.NewV7()).String()
		}
	}
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	title := func(i int) string { return fmt.Sprintf("Release task %d", i) }
	return []seedTable{
		{"tasks", []string{"id", "project_id", "title", "status", "priority", "assignee", "auto_close", "auto_close_by", "due", "created_at", "created_by", "updated_at"}, n,
			func(i int) []any {
				return []any{s.tasks[i], project, title(i), "open", "normal", "", 0, "", fmt.Sprintf("2025-06-%02d", 1+i%30), now, by.Name, now}
			}},
		{"steps", []string{"id", "task_id", "position", "text", "notes", "status", "status_changed_at", "status_changed_by", "created_at", "updated_at"}, 2 * n,
			func(i int) []any {
				return []any{steps[i], s.tasks[i/2], 1 + i%2, fmt.Sprintf("step %d", i%2), "", "todo", now, by.Name, now, now}
			}},
		{"comments", []string{"id", "task_id", "author", "author_kind", "body", "created_at"}, 2 * n,
			func(i int) []any {
				return []any{comments[i], s.tasks[i/2], by.Name, string(by.Kind), fmt.Sprintf("comment %d", i%2), now}
			}},
		// Five entries a task: create_task, then add_step and
		// comment_on_task twice.
		{"activity", []string{"at", "token_id", "actor", "actor_kind", "action", "subject_kind", "subject_id", "task_id", "details"}, 5 * n,
			func(i int) []any {
				task, j := i/5, i%5
				row := []any{now, by.TokenID, by.Name, string(by.Kind)}
				switch {
				case j == 0:
					return append(row, "create_task", "task", s.tasks[task], s.tasks[task], fmt.Sprintf(`{"title":%q}`, title(task)))
				case j%2 == 1:
					k := (j - 1) / 2
					return append(row, "add_step", "step", steps[2*task+k], s.tasks[task], fmt.Sprintf(`{"text":"step %d"}`, k))
				default:
					return append(row, "comment_on_task", "comment", comments[2*task+(j-2)/2], s.tasks[task], "{}")
				}
			}},
	}
}

// seedSQLite writes tables into the SQLite database at path, in one
// transaction, and folds the write-ahead log into the file, which each
// round copies.
func seedSQLite(t *testing.T, path string, tables []seedTable) {
	t.Helper()
	ctx := t.Context()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const batch = 100
	for _, tb := range tables {
		one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(tb.cols)), ", ") + ")"
		insert := func(rows int) *sql.Stmt {
			stmt, err := tx.PrepareContext(ctx, fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", tb.name, strings.Join(tb.cols, ", "),
				strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ")))
			if err != nil {
				t.Fatal(err)
			}
			return stmt
		}
		full := insert(batch)
		args := make([]any, 0, batch*len(tb.cols))
		for i := 0; i < tb.n; i += batch {
			args = args[:0]
			rows := min(batch, tb.n-i)
			for j := range rows {
				args = append(args, tb.row(i+j)...)
			}
			stmt := full
			if rows < batch {
				stmt = insert(rows)
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				t.Fatalf("seeding %s: %v", tb.name, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
}

// seedPostgres copies tables into the PostgreSQL database at url, in one
// transaction, and analyzes it.
func seedPostgres(t *testing.T, url string, tables []seedTable) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, tb := range tables {
		i := 0
		_, err := tx.CopyFrom(ctx, pgx.Identifier{tb.name}, tb.cols, pgx.CopyFromFunc(func() ([]any, error) {
			if i == tb.n {
				return nil, nil
			}
			i++
			return tb.row(i - 1), nil
		}))
		if err != nil {
			t.Fatalf("seeding %s: %v", tb.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
}

// open returns the store of a new copy of the seed, with opts, and where
// it is: on PostgreSQL the URL of its database, on SQLite its data
// directory.
func (s *loadSeed) open(t *testing.T, opts *store.Options) (*store.Store, string) {
	t.Helper()
	var st *store.Store
	var where string
	var err error
	if s.backend == "postgres" {
		where = pgtest.Copy(t, s.url)
		st, _, err = store.OpenPostgres(t.Context(), where, opts)
	} else {
		where = t.TempDir()
		copyFile(t, filepath.Join(s.dir, store.FileName), filepath.Join(where, store.FileName))
		st, _, err = store.Open(t.Context(), where, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st, where
}

// copyFile copies the file from to the new file to, without holding it
// in memory: a seed of 200,000 tasks is hundreds of MiB.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// loadResult is what one round of one variant measured.
type loadResult struct {
	calls     int           // calls made and allowed
	late      int           // of which in the second half of the round
	refusals  int           // intended refusals, as intended
	creates   int           // acknowledged creations, all found afterwards
	elapsed   time.Duration // of the round
	cpu       time.Duration // the CPU time of the round: this process's (the clients included), the replicas' and PostgreSQL's
	dbCPU     time.Duration // of which PostgreSQL's
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
	return fmt.Sprintf("%6.0f calls/s, p50 %v, p99 %v, p99/p50 %.1f, CPU %v a call (PostgreSQL %v), heap %d MiB (%d calls in %v, second half/first %.2f; %d refusals as intended, %d creations acknowledged and found)",
		r.perSecond(), p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), float64(p99)/float64(max(p50, 1)),
		r.cpuPerCall().Round(time.Microsecond), (r.dbCPU / time.Duration(max(r.calls, 1))).Round(time.Microsecond), r.heap>>20, r.calls, r.elapsed.Round(time.Millisecond), float64(r.late)/float64(max(r.calls-r.late, 1)), r.refusals, r.creates)
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
		m.dbCPU += r.dbCPU
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

// TestLoadReplicas is the smoke run of the replica variants of TestLoad:
// two done-server processes on PostgreSQL behind the round-robin proxy,
// for a second, with clients of the 2026-07-28 protocol, so that the
// variants cannot rot. TestLoad -load-variants pg-1,pg-2,pg-3 measures
// them (see the README).
func TestLoadReplicas(t *testing.T) {
	postgresOnly(t)
	if *loadFor > 0 {
		t.Skip("with -load, TestLoad -load-variants pg-1,pg-2,pg-3 measures the replicas")
	}
	runLoad(t, newLoadSeed(t, "postgres", 50), "pg-2", time.Second, "2026-07-28")
}

// runLoad runs one round of the variant v, on a fresh copy of the seed
// (nil for the ceiling, which has no workspace), with clients that ask for
// protocol (empty: go-sdk's default).
func runLoad(t *testing.T, seed *loadSeed, v loadVariant, length time.Duration, protocol string) loadResult {
	t.Helper()
	ctx := t.Context()
	opts := storeOptions()
	c := candidates[v]
	if c.store != nil {
		c.store(opts)
	}
	if c.runtime != nil {
		defer c.runtime()()
	}
	replicas := stored[v].replicas
	// The store Done serves in this process or, for replicas, the one the
	// test reads afterwards; the ceiling's is empty and unused.
	var st *store.Store
	var where string // the seed's copy: a SQLite's data directory, or a PostgreSQL's URL
	dir := t.TempDir()
	switch {
	case seed == nil:
		var err error
		if st, _, err = store.Open(ctx, dir, opts); err != nil {
			t.Fatal(err)
		}
	case replicas > 0:
		st, where = seed.open(t, nil)
	default:
		st, where = seed.open(t, opts)
	}
	defer st.Close()

	var base string
	var procs []*exec.Cmd
	if replicas > 0 {
		// done-server processes on a copy of the seed, as the fault test
		// starts them, with the write rate off: the load test measures
		// Done, not the limit.
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.MaxIdleConnsPerHost = loadClients
		defer transport.CloseIdleConnections()
		proxy := &rrProxy{transport: transport}
		for range replicas {
			var cmd *exec.Cmd
			var b string
			if v.backend() == "sqlite" {
				cmd, b = startDone(t, "-data", where, "-write-rate", "off")
			} else {
				cmd, b = startDone(t, "-db", where, "-data", t.TempDir(), "-write-rate", "off")
			}
			procs = append(procs, cmd)
			proxy.backends = append(proxy.backends, b)
		}
		defer func() {
			for _, cmd := range procs {
				cmd.Process.Kill()
				cmd.Wait()
			}
		}()
		front := httptest.NewServer(proxy)
		defer front.Close()
		base = front.URL
	} else {
		folder, err := connector.NewFolder("local", filepath.Join(dir, "context"))
		if err != nil {
			t.Fatal(err)
		}
		logger := slog.New(slog.NewTextHandler(io.Discard, nil))
		srv := httptest.NewUnstartedServer(nil)
		defaultHTTPLimits.configure(srv.Config)
		base = "http://" + srv.Listener.Addr().String()
		// The write limit off: the load test measures Done, not the
		// limit. On PostgreSQL in this process of its own (pg), Done
		// serves as a replica does, statelessly.
		d := newDone(st, logger, config{baseURL: base, connectors: []connector.Connector{folder}, writeRate: rate.Inf, stateless: v == "pg"})
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
			// added with mcpeffect.AddTool run only behind it). All else
			// is as Done serves: the same middleware, HTTP limits and
			// sessions.
			server, registry := d.newToolServer()
			server.AddReceivingMiddleware(d.middleware(registry.Middleware(&mcpeffect.MiddlewareOptions{
				Scope: func(context.Context, mcp.Request) mcpeffect.Scope { return mcpeffect.Full },
			}))...)
			srv.Config.Handler = d.handlerWith(server, defaultHTTPLimits, nil)
		case v.ceiling():
			srv.Config.Handler = ceilingHandler(d, defaultHTTPLimits)
		}
		srv.Start()
		defer srv.Close()
	}

	secrets := []loadToken{{"ceiling", mcpeffect.Full}} // any secret is the ceiling's
	var tasks []string
	if seed != nil {
		secrets, tasks = seed.secrets, seed.tasks
	}
	var sessionOpts *mcp.ClientSessionOptions
	if protocol != "" {
		sessionOpts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = loadClients
	defer transport.CloseIdleConnections()
	clients := make([]*loadClient, loadClients)
	errs := make([]error, loadClients)
	var wg sync.WaitGroup
	for i := range clients {
		tok := secrets[i%len(secrets)]
		wg.Go(func() {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-load", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint:             base + mcpPath,
				HTTPClient:           &http.Client{Transport: bearerTransport{tok.secret, transport}},
				MaxRetries:           -1,
				DisableStandaloneSSE: true,
			}, sessionOpts)
			// A client that asks for a version falls back to an older one
			// by itself when the server refuses it, which would measure
			// another protocol.
			if err == nil && protocol != "" && cs.InitializeResult().ProtocolVersion != protocol {
				err = fmt.Errorf("asked for protocol %s, and the client speaks %s", protocol, cs.InitializeResult().ProtocolVersion)
			}
			errs[i] = err
			clients[i] = &loadClient{id: i, cs: cs, scope: tok.scope, variant: v, tasks: tasks, rand: rand.New(rand.NewPCG(uint64(i), 1))}
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

	// The CPU of the round: this process's (the clients, the proxy, and
	// Done when it runs here), the replicas', and PostgreSQL's when Done
	// runs on it.
	var pg *pgtest.Cluster
	if seed != nil && seed.backend == "postgres" {
		pg = pgtest.Start(t)
	}
	dbNow := func() time.Duration {
		if pg == nil {
			return 0
		}
		return processTreeCPU(pg.PID())
	}
	cpuNow := func() time.Duration {
		d := cpuTime() + dbNow()
		for _, cmd := range procs {
			d += processCPU(cmd.Process.Pid)
		}
		return d
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
	cpu, db := cpuNow(), dbNow()
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
	res := loadResult{elapsed: time.Since(start), dbCPU: dbNow() - db, cpu: cpuNow() - cpu, heap: <-heap}

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
			return runLoad(t, seed, v, 2*length, protocol)
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
