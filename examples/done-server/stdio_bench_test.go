package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStdioCall makes one tools/call after another, with one go-sdk
// client, over stdio, as a host that starts Done does: the client's time
// for a call, from outside the server. Each tool is served two ways:
//
//   - process: done-server serve as a process of its own (this test
//     binary, run as the command: see TestMain), its stdin and stdout
//     the pipes of go-sdk's CommandTransport; echo, the baseline, is a
//     trivial go-sdk tool served over stdio by a process of the same
//     binary with the same runtime settings (tuneGC), so that the ratio
//     of the two is what Done adds to a call.
//   - inmemory: the same servers in this process, over go-sdk's in-memory
//     transports, so that what the process and its pipes cost can be told
//     from what Done costs.
//
// whoami is the simplest read of Done: it reads nothing but the caller's
// token, and that from the store's cache of tokens; what it costs beyond
// echo is the path every call of Done takes (the token's check, the
// middleware, the admission queue, the output schema). get_task reads one
// task of a seeded workspace, with its steps and comments: the simple
// read of a real client, one read transaction of a few queries by key.
//
// With DONE_BENCH_CPUPROFILES=DIR, each server process writes its CPU
// profile to DIR/TOOL.cpu.pprof, for go tool pprof; with
// DONE_BENCH_MEMPROFILES=DIR, its profile of every allocation to
// DIR/TOOL.mem.pprof (which slows it: not with the CPU profile).
//
// server-cpu-ns/op is the server process's CPU time a call, user and
// system, read from /proc around the calls (Linux only): less noisy than
// the elapsed time on a shared machine. The machine's noise is large, so
// compare variants of the same run, alternating:
//
//	go test -c -o done.test . && for i in 1 2 3 4 5; do
//	  DONE_TEST_DB=sqlite ./done.test -test.run '^$' -test.bench StdioCall -test.benchmem -test.benchtime 3000x
//	done
func BenchmarkStdioCall(b *testing.B) {
	if pgtest.Postgres() {
		b.Skip("over stdio, Done serves its default store, SQLite, measured in the first run")
	}
	dir := filepath.Join(b.TempDir(), "data")
	secret, task := seedStdioBench(b, dir)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"echo", map[string]any{"text": "a call"}},
		{"whoami", map[string]any{}},
		{"get_task", map[string]any{"task_id": task}},
	}
	for _, where := range []string{"process", "inmemory"} {
		for _, c := range calls {
			b.Run(where+"/"+c.tool, func(b *testing.B) {
				var cs *mcp.ClientSession
				var pid int
				if where == "process" {
					cs, pid = startStdioBench(b, dir, secret, c.tool == "echo")
				} else {
					cs = connectStdioBench(b, dir, secret, c.tool == "echo")
				}
				params := &mcp.CallToolParams{Name: c.tool, Arguments: c.args}
				call := func() {
					res, err := cs.CallTool(b.Context(), params)
					if err != nil || res.IsError || res.StructuredContent == nil {
						b.Fatalf("%s: %v %+v", c.tool, err, res)
					}
				}
				// The first calls warm what a long-lived connection has
				// warm: the statements, the token's cache, the schemas.
				for range 10 {
					call()
				}
				cpu0, cpuOK := procCPU(pid)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					call()
				}
				b.StopTimer()
				if cpu1, ok := procCPU(pid); cpuOK && ok {
					b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "server-cpu-ns/op")
				}
			})
		}
	}
}

// seedStdioBench makes the data directory dir with a person's token of
// full scope, whose secret it returns, and a task with two steps and two
// comments, whose id it returns.
func seedStdioBench(b *testing.B, dir string) (secret, task string) {
	ctx := b.Context()
	st, _, err := store.Open(ctx, dir, storeOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
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

// startStdioBench starts done-server serve on the data directory dir with
// DONE_TOKEN=secret, or with echo the trivial server of [serveEcho], as a
// process over stdio, and returns a client session with it and the
// process's id.
func startStdioBench(b *testing.B, dir, secret string, echo bool) (*mcp.ClientSession, int) {
	cmd := exec.Command(os.Args[0], "serve", "-data", dir)
	cmd.Env = serverEnv("DONE_TOKEN=" + secret)
	if echo {
		cmd = exec.Command(os.Args[0])
		cmd.Env = serverEnv()
		cmd.Env = append(cmd.Env, "DONE_SERVER_MAIN=echo") // the last wins
	}
	name := strings.TrimPrefix(b.Name(), "BenchmarkStdioCall/process/")
	if dir := os.Getenv("DONE_BENCH_CPUPROFILES"); dir != "" {
		cmd.Env = append(cmd.Env, "DONE_SERVER_CPUPROFILE="+filepath.Join(dir, name+".cpu.pprof"))
	}
	if dir := os.Getenv("DONE_BENCH_MEMPROFILES"); dir != "" {
		cmd.Env = append(cmd.Env, "DONE_SERVER_MEMPROFILE="+filepath.Join(dir, name+".mem.pprof"))
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs, cmd.Process.Pid
}

// connectStdioBench serves Done on the data directory dir for the token
// of secret, or with echo the trivial server of [serveEcho], in this
// process over in-memory transports, as [done.serveStdio] serves stdio,
// with the same runtime settings, and returns a client session with it.
func connectStdioBench(b *testing.B, dir, secret string, echo bool) *mcp.ClientSession {
	ctx := b.Context()
	b.Cleanup(tuneGC(os.Getenv))
	ct, stt := mcp.NewInMemoryTransports()
	if echo {
		ss, err := echoServer().Connect(ctx, stt, nil)
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

// echoServer is a trivial go-sdk server: one tool, echo, which returns its
// argument, its result checked against its output schema as go-sdk checks
// Done's.
func echoServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoed) (*mcp.CallToolResult, echoed, error) {
			return nil, in, nil
		})
	return server
}

// serveEcho serves [echoServer] over stdin and stdout, with the runtime
// settings of done-server serve, until stdin ends: the baseline of
// BenchmarkStdioCall, run by TestMain with DONE_SERVER_MAIN=echo.
func serveEcho() {
	defer tuneGC(os.Getenv)()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	session, err := echoServer().Connect(ctx, &mcp.StdioTransport{}, nil)
	if err == nil {
		err = session.Wait()
	}
	if err != nil && err != io.EOF && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
	}
}

// profiled runs f, the main function of a server process that a test
// started, with a CPU profile written to the file DONE_SERVER_CPUPROFILE
// and a profile of every allocation to DONE_SERVER_MEMPROFILE, when they
// are set.
func profiled(f func()) {
	if path := os.Getenv("DONE_SERVER_CPUPROFILE"); path != "" {
		out, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(out)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cpu profile:", err)
			os.Exit(2)
		}
		defer func() {
			pprof.StopCPUProfile()
			out.Close()
		}()
	}
	if path := os.Getenv("DONE_SERVER_MEMPROFILE"); path != "" {
		runtime.MemProfileRate = 1
		defer func() {
			out, err := os.Create(path)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(out, 0)
				out.Close()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "memory profile:", err)
			}
		}()
	}
	f()
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
