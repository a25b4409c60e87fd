package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/admit"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/gctune"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/schemashare"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStdioCall makes tools/calls one after another, each with one
// go-sdk client, over stdio, as a host that starts Done does, and times
// each call from outside the server. Every iteration calls three servers
// in turn (which first rotates), so that all see the same moments of a
// shared, noisy machine:
//
//   - Done's tool: ns/op.
//   - echo, a trivial go-sdk tool: echo-ns/op, and x-echo, Done's time
//     over echo's: what Done adds to a call.
//   - a trivial go-sdk tool of the same name, arguments and result type
//     as Done's (so the same schemas), which returns the result that Done
//     returned, as it is: same-ns/op, and x-same, Done's time over it.
//     What x-echo has that x-same has not is go-sdk's own cost of a
//     larger result (encoding it, checking it against its schema,
//     sending it twice, as structured content and as text); what x-same
//     has is Done's work.
//
// The servers are served two ways:
//
//   - process: done-server serve as a process of its own (the program
//     this package builds: see [doneServer]), its stdin and stdout the
//     pipes of go-sdk's CommandTransport; the trivial tools are served
//     over stdio by a process of the test binary (see TestMain) with the
//     same runtime settings (see [gctune.Tune]).
//   - inmemory: the same servers in this process, over go-sdk's in-memory
//     transports, so that what the process and its pipes cost can be told
//     from what the servers cost (they share this process's collector,
//     and Done's heap slows the others' collections).
//
// whoami is the simplest read of Done: it reads nothing but the caller's
// token, and that from the store's cache of tokens; what it costs beyond
// echo is the path every call of Done takes (the token's check, the
// middleware, the admission queue, the output schema). get_task reads one
// task of a seeded workspace, with its steps and comments: the simple
// read of a real client, one read transaction of a few queries by key.
//
// server-cpu-ns/op, echo-cpu-ns/op and same-cpu-ns/op are the CPU time a
// call, user and system, of each server process, read from /proc around
// the calls (Linux only), and cpu-x-echo and cpu-x-same the ratios.
//
// For a profile of the servers, run the inmemory variants with go
// test's -cpuprofile or -memprofile: they are the same servers, in the
// benchmark's process.
//
// The machine's noise is large: run it a few times and take the medians:
//
//	go test -c -o done.test . && for i in 1 2 3 4 5; do
//	  DONE_TEST_DB=sqlite ./done.test -test.run '^$' -test.bench StdioCall -test.benchtime 3000x
//	done
func BenchmarkStdioCall(b *testing.B) {
	if pgtest.Postgres() {
		b.Skip("over stdio, Done serves its default store, SQLite, measured in the first run")
	}
	dir := filepath.Join(b.TempDir(), "data")
	secret, task := seedStdioBench(b, dir)
	echo := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "a call"}}
	for _, where := range []string{"process", "inmemory"} {
		for _, params := range []*mcp.CallToolParams{
			{Name: "whoami", Arguments: map[string]any{}},
			{Name: "get_task", Arguments: map[string]any{"task_id": task}},
		} {
			b.Run(where+"/"+params.Name, func(b *testing.B) {
				call := func(cs *mcp.ClientSession, params *mcp.CallToolParams) (time.Duration, *mcp.CallToolResult) {
					start := time.Now()
					res, err := cs.CallTool(b.Context(), params)
					took := time.Since(start)
					if err != nil || res.IsError || res.StructuredContent == nil {
						b.Fatalf("%s: %v %+v", params.Name, err, res)
					}
					return took, res
				}
				servers := make([]struct {
					cs     *mcp.ClientSession
					params *mcp.CallToolParams
					pid    int
					took   time.Duration
					cpu    time.Duration
				}, 3)
				done, base, same := &servers[0], &servers[1], &servers[2]
				done.params, base.params, same.params = params, echo, params
				var result []byte
				if where == "process" {
					done.cs, done.pid = startStdioBench(b, dir, secret, params.Name, "done", nil)
				} else {
					done.cs = connectStdioBench(b, dir, secret, "", nil)
				}
				_, res := call(done.cs, params)
				result, err := json.Marshal(res.StructuredContent)
				if err != nil {
					b.Fatal(err)
				}
				if where == "process" {
					base.cs, base.pid = startStdioBench(b, dir, secret, params.Name, "echo", nil)
					same.cs, same.pid = startStdioBench(b, dir, secret, params.Name, "same", result)
				} else {
					base.cs = connectStdioBench(b, dir, secret, "echo", nil)
					same.cs = connectStdioBench(b, dir, secret, params.Name, result)
				}
				{
					_, res := call(same.cs, params)
					got, err := json.Marshal(res.StructuredContent)
					if err != nil || string(got) != string(result) {
						b.Fatalf("the trivial %s returned %s (%v), want Done's %s", params.Name, got, err, result)
					}
				}
				// The first calls warm what a long-lived connection has
				// warm: the statements, the token's cache, the schemas.
				for range 10 {
					for _, s := range servers {
						call(s.cs, s.params)
					}
				}
				cpu := func() bool {
					ok := true
					for i := range servers {
						c, ok1 := procCPU(servers[i].pid)
						servers[i].cpu = c - servers[i].cpu
						ok = ok && ok1
					}
					return ok
				}
				cpuOK := cpu()
				b.ResetTimer()
				for i := range b.N {
					for j := range servers {
						s := &servers[(i+j)%len(servers)]
						took, _ := call(s.cs, s.params)
						s.took += took
					}
				}
				b.StopTimer()
				n := float64(b.N)
				b.ReportMetric(float64(done.took)/n, "ns/op")
				b.ReportMetric(float64(base.took)/n, "echo-ns/op")
				b.ReportMetric(float64(same.took)/n, "same-ns/op")
				b.ReportMetric(float64(done.took)/float64(base.took), "x-echo")
				b.ReportMetric(float64(done.took)/float64(same.took), "x-same")
				if cpuOK && cpu() && base.cpu > 0 && same.cpu > 0 {
					b.ReportMetric(float64(done.cpu)/n, "server-cpu-ns/op")
					b.ReportMetric(float64(base.cpu)/n, "echo-cpu-ns/op")
					b.ReportMetric(float64(same.cpu)/n, "same-cpu-ns/op")
					b.ReportMetric(float64(done.cpu)/float64(base.cpu), "cpu-x-echo")
					b.ReportMetric(float64(done.cpu)/float64(same.cpu), "cpu-x-same")
				}
			})
		}
	}
}

// seedStdioBench makes the data directory dir with a person's token of
// full scope, whose secret it returns, and a task with two steps and two
// comments, whose id it returns (see seedBench).
func seedStdioBench(b *testing.B, dir string) (secret, task string) {
	st, _, err := store.Open(b.Context(), dir, storeOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	return seedBench(b, st)
}

// seedBench mints in st a person's token of full scope, whose secret it
// returns, and makes a task with two steps and two comments, whose id it
// returns: the workspace of the benchmarks of one call.
func seedBench(b *testing.B, st *store.Store) (secret, task string) {
	ctx := b.Context()
	k, secret, err := st.MintToken(ctx, store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full})
	if err != nil {
		b.Fatal(err)
	}
	t, err := st.CreateTask(ctx, k.Actor(), store.NewTask{Title: "Write the README", Due: "2025-06-30"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 2 {
		if _, err := st.AddStep(ctx, k.Actor(), t.ID, fmt.Sprintf("step %d", i), ""); err != nil {
			b.Fatal(err)
		}
		if _, err := st.CommentOnTask(ctx, k.Actor(), t.ID, fmt.Sprintf("comment %d", i)); err != nil {
			b.Fatal(err)
		}
	}
	return secret, t.ID
}

// startStdioBench starts a server as a process over stdio, and returns a
// client session with it and the process's id: with server "done",
// done-server serve on the data directory dir with DONE_TOKEN=secret;
// "echo", the trivial server of [trivialServer] with echo alone; "same",
// with tool too, which returns result.
func startStdioBench(b *testing.B, dir, secret, tool, server string, result []byte) (*mcp.ClientSession, int) {
	cmd := exec.Command(doneServer(b), "serve", "-data", dir)
	cmd.Env = serverEnv("DONE_TOKEN=" + secret)
	if server != "done" {
		cmd = exec.Command(os.Args[0])
		cmd.Env = serverEnv(envTrivialServer + "=1")
		if server == "same" {
			cmd.Env = append(cmd.Env, "DONE_ECHO_TOOL="+tool, "DONE_ECHO_RESULT="+string(result))
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs, cmd.Process.Pid
}

// connectStdioBench serves, in this process over in-memory transports,
// Done on the data directory dir for the token of secret, as
// [done.serveStdio] serves stdio, when trivial is empty; otherwise the
// server of [trivialServer] with trivial and result. It sets the runtime
// settings of done-server serve, and returns a client session.
func connectStdioBench(b *testing.B, dir, secret, trivial string, result []byte) *mcp.ClientSession {
	ctx := b.Context()
	b.Cleanup(gctune.Tune(os.Getenv))
	ct, stt := mcp.NewInMemoryTransports()
	if trivial != "" {
		server, err := trivialServer(trivial, result)
		if err != nil {
			b.Fatal(err)
		}
		ss, err := server.Connect(ctx, stt, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ss.Close() })
	} else {
		st, _, err := store.Open(ctx, dir, storeOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		d := newDone(st, slog.New(slog.NewTextHandler(io.Discard, nil)), config{})
		cred := stdioCredential{secret: secret}
		k, err := d.authenticate(ctx, cred)
		if err != nil {
			b.Fatal(err)
		}
		ss, err := d.connectStdio(ctx, k, cred, mcpeffect.Full, stt)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ss.Close() })
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// trivialServer returns a trivial go-sdk server, whose results go-sdk
// checks against their output schemas as it checks Done's: echo, which
// returns its argument, and, unless tool is "" or "echo", the tool of
// that name of [sameResults], which returns result, the JSON of one of
// Done's results.
func trivialServer(tool string, result []byte) (*mcp.Server, error) {
	server := mcp.NewServer(&mcp.Implementation{Name: "trivial", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoed) (*mcp.CallToolResult, echoed, error) {
			return nil, in, nil
		})
	if tool == "" || tool == "echo" {
		return server, nil
	}
	add, ok := sameResults[tool]
	if !ok {
		return nil, fmt.Errorf("no trivial %s", tool)
	}
	return server, add(server, tool, result)
}

// sameResults add to a server a trivial tool of the name, the arguments
// and the result type of one of Done's (so the same schemas), which
// returns a result of Done's, decoded once.
var sameResults = map[string]func(*mcp.Server, string, []byte) error{
	"whoami":   addSameResult[noArgs, whoamiResult],
	"get_task": addSameResult[taskArg, store.TaskDetail],
}

func addSameResult[In, Out any](server *mcp.Server, name string, result []byte) error {
	var out Out
	if err := json.Unmarshal(result, &out); err != nil {
		return err
	}
	mcp.AddTool(server, tool[In, Out](schemashare.New(), name, name, "Return one of Done's results."),
		func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, Out, error) {
			return nil, out, nil
		})
	return nil
}

// serveTrivial serves [trivialServer] over stdin and stdout, with the
// tool DONE_ECHO_TOOL and the result DONE_ECHO_RESULT, and the runtime
// settings of done-server serve, until stdin ends: the baselines of
// BenchmarkStdioCall, run by TestMain.
func serveTrivial() {
	defer gctune.Tune(os.Getenv)()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	server, err := trivialServer(os.Getenv("DONE_ECHO_TOOL"), []byte(os.Getenv("DONE_ECHO_RESULT")))
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(2)
	}
	session, err := server.Connect(ctx, &mcp.StdioTransport{}, nil)
	if err == nil {
		err = session.Wait()
	}
	if err != nil && err != io.EOF && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
	}
}

// procCPU returns the CPU time, user and system, that the process pid has
// used, from /proc/PID/stat, or false where that cannot be read (pid 0,
// a system without /proc).
func procCPU(pid int) (time.Duration, bool) {
	if pid == 0 {
		return 0, false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command, which is in parentheses and may hold
	// spaces: state is the first, utime and stime the 12th and 13th.
	_, rest, ok := strings.Cut(string(stat), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	// In clock ticks, 100 a second on Linux (USER_HZ).
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// BenchmarkStdioMiddleware runs a tools/call of whoami through Done's
// receiving middleware, as a stdio connection has it (the connection's
// credential and scope in the context), around a handler that does
// nothing: what Done's layers cost a call on their own, the token's
// check against the store's cache, the registry's check and the
// admission queue included. worker runs the handler on one of the
// queue's workers, as Done serves; inline, on the caller's goroutine: the
// difference is the handoff (see [admit.Queue]), which a handler this
// small does not pay back.
func BenchmarkStdioMiddleware(b *testing.B) {
	if pgtest.Postgres() {
		b.Skip("measured on SQLite, in the first run")
	}
	dir := filepath.Join(b.TempDir(), "data")
	secret, _ := seedStdioBench(b, dir)
	st, _, err := store.Open(b.Context(), dir, storeOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for _, where := range []string{"worker", "inline"} {
		b.Run(where, func(b *testing.B) {
			d := newDone(st, slog.New(slog.NewTextHandler(io.Discard, nil)), config{})
			if where == "inline" {
				d.queue = admit.New(d.queue.Turns(), false)
			}
			_, registry := d.newToolServer()
			mw := d.middleware(d.enforcer(registry).Middleware())
			h := mcp.MethodHandler(func(context.Context, string, mcp.Request) (mcp.Result, error) { return &mcp.CallToolResult{}, nil })
			for i := len(mw) - 1; i >= 0; i-- {
				h = mw[i](h)
			}
			ctx := mcpeffect.WithConnectionScope(withStdioCredential(b.Context(), stdioCredential{secret: secret}), mcpeffect.Full)
			req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "whoami"}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h(ctx, "tools/call", req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
