package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/notrun"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain runs the package's tests on SQLite, then again on PostgreSQL.
// With DONE_TEST_TRIVIAL_SERVER=1, the test binary is instead the
// trivial server that BenchmarkStdioCall compares Done with (see
// [serveTrivial]), which needs Done's types; done-server itself is the
// program built from this package (see [doneServer]).
func TestMain(m *testing.M) {
	if os.Getenv(envTrivialServer) == "1" {
		serveTrivial()
		os.Exit(0)
	}
	// The server's tests run on SQLite, then again on PostgreSQL; each
	// run says which of its tests could not run.
	code := pgtest.Run(m)
	if fixture.clean != nil {
		fixture.clean()
	}
	built.clean()
	where, _ := os.Getwd()
	notrun.Report(os.Stderr, where+", on "+pgtest.Backend())
	os.Exit(code)
}

// envTrivialServer, set to 1 in the environment of the test binary, makes
// it the trivial server of BenchmarkStdioCall.
const envTrivialServer = "DONE_TEST_TRIVIAL_SERVER"

// built is done-server as this package builds it, once for the test
// process, in a directory of its own that TestMain removes.
var built builtServer

type builtServer struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// doneServer returns the path of done-server, built from this package
// with go build as a person builds it, with the race detector when the
// tests have it, so that the processes the tests start are checked too.
func doneServer(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "done-server-test-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "done-server")
		args := []string{"build", "-o", built.path}
		if raceEnabled {
			args = append(args, "-race")
		}
		// go test puts the go command of its toolchain first in PATH.
		cmd := exec.Command("go", append(args, ".")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// clean removes what doneServer built.
func (b *builtServer) clean() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// serverEnv returns the environment in which a test runs done-server: the
// test's own, with extra added. A binary built with -race sleeps a second
// before it exits, to let its last race reports out; the tests start
// enough processes for those seconds to count, and wait for the exit
// anyway.
func serverEnv(extra ...string) []string {
	env := append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return append(env, extra...)
}

// TestStdioProcess runs done-server as a process over stdio, as a host
// does, with a read-only DONE_TOKEN: reads work, writes are refused, and
// the data survives a restart of the process.
func TestStdioProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	st, _, err := store.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, writer, err := st.MintToken(t.Context(), store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	_, reader, err := st.MintToken(t.Context(), store.NewToken{Name: "rita", Kind: store.Human, Scope: mcpeffect.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	start := func(secret string) *mcp.ClientSession {
		cmd := exec.Command(doneServer(t), "serve", "-data", dir)
		cmd.Env = serverEnv("DONE_TOKEN=" + secret)
		client := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}

	cs := start(writer)
	task := must[store.Task](t, cs, "create_task", args{"title": "Survive a restart"})
	if err := cs.Close(); err != nil {
		t.Logf("closing the first process: %v", err)
	}

	cs = start(reader)
	defer cs.Close()
	if got := must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); got.Title != task.Title {
		t.Errorf("after a restart: %+v", got)
	}
	if me := must[whoamiResult](t, cs, "whoami", nil); me.Name != "rita" || me.Scope != mcpeffect.ReadOnly {
		t.Errorf("whoami over stdio: %+v", me)
	}
	_, err = cs.CallTool(t.Context(), callParams("delete_task", args{"task_id": task.ID}))
	if d, ok := mcpeffect.AsDeniedError(err); !ok || d.Granted != mcpeffect.ReadOnly {
		t.Errorf("delete_task with a read-only DONE_TOKEN: err = %v, want a refusal", err)
	}
}

// TestHTTPProcess runs done-server -http as a process on a loopback port
// chosen by the system, calls it with a bearer token, and stops it with
// SIGTERM: it shuts down cleanly.
func TestHTTPProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	st, _, err := store.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := st.MintToken(t.Context(), store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.NonDestructive})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(doneServer(t), "serve", "-data", dir, "-http", "127.0.0.1:0")
	cmd.Env = serverEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// The server logs its URL once it listens.
	var url string
	lines := bufio.NewScanner(stderr)
	for url == "" && lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), `msg="serving MCP over HTTP" url=`); ok {
			url = after
		}
	}
	if url == "" {
		t.Fatal("the server never said where it listens")
	}
	go io.Copy(io.Discard, stderr)

	client := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:             url,
		HTTPClient:           &http.Client{Transport: bearerTransport{secret, transport}},
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if me := must[whoamiResult](t, cs, "whoami", nil); me.Name != "alice" || me.Scope != mcpeffect.NonDestructive {
		t.Errorf("whoami: %+v", me)
	}
	cs.Close()
	// A connection the client keeps open without a request would hold up
	// the graceful shutdown for its 5 seconds.
	transport.CloseIdleConnections()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v, want a clean exit", err)
	}
}
