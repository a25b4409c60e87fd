package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/connector"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/schemashare"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// env is one Done server over a fresh database in a temporary directory,
// with a clock that moves only when a test says so.
type env struct {
	t        *testing.T
	dir      string
	store    *store.Store
	done     *done
	server   *mcp.Server
	registry *mcpeffect.Registry
	clock    *clock
	logger   *slog.Logger

	// http serves e over HTTP once serveHTTP starts it. Its address is
	// known from the start: the tools need it for the calendar feeds.
	http     *httptest.Server
	httpOnce sync.Once
	httpURL  string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return openEnv(t, t.TempDir())
}

// openEnv opens the database in dir, which may already hold one.
func openEnv(t *testing.T, dir string) *env {
	t.Helper()
	c := &clock{now: time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)}
	// The store as done-server serves it, the cache of tokens included,
	// with a clock of the test's.
	opts := storeOptions()
	opts.Now = c.Now
	st, _, err := openStoreAt(t, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	base := "http://" + srv.Listener.Addr().String()
	folder, err := connector.NewFolder("local", filepath.Join(dir, "context"))
	if err != nil {
		t.Fatal(err)
	}
	// Without the write limit: tests set up what they need in bulk, on
	// one token. TestWriteRateLimit tests the limit on a server of its own.
	d := newDone(st, logger, config{baseURL: base, connectors: []connector.Connector{folder}, writeRate: rate.Inf, schemas: testSchemas})
	server, registry := d.newServer()
	return &env{t: t, dir: dir, store: st, done: d, server: server, registry: registry, clock: c, logger: logger, http: srv, httpURL: base}
}

// testSchemas holds the schemas of the tools of every env's server, as a
// process's servers share them.
var testSchemas = schemashare.New()

// clock is a time source that tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// mint makes a token as the command line does, and returns its secret.
func (e *env) mint(name string, kind store.Kind, scope mcpeffect.Scope) string {
	e.t.Helper()
	_, secret, err := e.store.MintToken(e.t.Context(), store.NewToken{Name: name, Kind: kind, Scope: scope})
	if err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// connect returns a client session over in-memory transports, connected
// the way the stdio transport is: the token's secret and scope set once
// for the connection.
func (e *env) connect(secret string) *mcp.ClientSession {
	e.t.Helper()
	return connectServer(e.t, e, e.server, secret, nil, "")
}

// connectServer connects a client with opts, speaking protocol ("" for
// go-sdk's default), to server as the stdio transport does, with the
// token secret of e.
func connectServer(t *testing.T, e *env, server *mcp.Server, secret string, opts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
	t.Helper()
	ctx := t.Context()
	k, err := e.done.authenticate(ctx, stdioCredential{secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	ct, stt := mcp.NewInMemoryTransports()
	ss, err := server.Connect(mcpeffect.WithConnectionScope(withStdioCredential(ctx, stdioCredential{secret: secret}), k.Scope), stt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (e *env) clientConnect(t mcp.Transport) *mcp.ClientSession {
	e.t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil)
	cs, err := client.Connect(e.t.Context(), t, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

// serveHTTP starts the HTTP server of e on a loopback port, once, and
// returns its base URL.
func (e *env) serveHTTP() string {
	e.httpOnce.Do(func() {
		e.http.Config.Handler = e.done.httpHandler(e.server, e.registry)
		e.http.Start()
	})
	return e.httpURL
}

// connectHTTP returns a client session over Streamable HTTP with the
// bearer token secret.
func (e *env) connectHTTP(secret string) *mcp.ClientSession {
	e.t.Helper()
	base := e.serveHTTP()
	return e.clientConnect(&mcp.StreamableClientTransport{
		Endpoint:             base + mcpPath,
		HTTPClient:           &http.Client{Transport: bearerTransport{secret: secret}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	})
}

// bearerTransport sends each request with the bearer token secret, through
// base, or http.DefaultTransport if base is nil.
type bearerTransport struct {
	secret string
	base   http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	if b.base == nil {
		return http.DefaultTransport.RoundTrip(r)
	}
	return b.base.RoundTrip(r)
}

// dump returns the content of the whole database, and the files of the
// context folder with the SHA-256 of each: all that a write may change.
func (e *env) dump() string {
	e.t.Helper()
	var b bytes.Buffer
	if err := e.store.Dump(e.t.Context(), &b); err != nil {
		e.t.Fatal(err)
	}
	b.WriteString("-- context folder\n")
	root := filepath.Join(e.dir, "context")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %x\n", strings.TrimPrefix(p, root), sha256.Sum256(data))
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return b.String()
}

// dumpData returns the content of the database without the tables that
// record history (activity, trash) or credentials (tokens): the data a
// deletion and a restore must leave as they found it.
func (e *env) dumpData() string {
	e.t.Helper()
	var keep []string
	skip := false
	for line := range strings.Lines(e.dump()) {
		if strings.HasPrefix(line, "-- ") {
			table := strings.Fields(line)[1]
			skip = table == "activity" || table == "trash" || table == "tokens" || table == "context"
		}
		if !skip {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "")
}

// errToolFailed marks a call that returned a tool error (IsError).
var errToolFailed = errors.New("tool error")

// call calls a tool and decodes its structured result into a value of
// type Out. A tool error is returned as an error wrapping errToolFailed
// with the tool's message; a protocol error (such as a refusal by the
// scope check) is returned as it is.
func call[Out any](t *testing.T, cs *mcp.ClientSession, tool string, args any) (Out, error) {
	t.Helper()
	var out Out
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return out, err
	}
	if res.IsError {
		return out, toolError{text(res)}
	}
	js, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &out); err != nil {
		t.Fatalf("%s: decoding %s: %v", tool, js, err)
	}
	return out, nil
}

// must is call for a call that must succeed.
func must[Out any](t *testing.T, cs *mcp.ClientSession, tool string, args any) Out {
	t.Helper()
	out, err := call[Out](t, cs, tool, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	return out
}

type toolError struct{ msg string }

func (e toolError) Error() string { return e.msg }
func (e toolError) Unwrap() error { return errToolFailed }

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// args is a shorthand for tool arguments.
type args = map[string]any

// seed holds the ids of a small workspace that tests act on.
type seed struct {
	project  string // holds task, other, awaiting and blocked
	archived string // an archived project
	task     string // depends on other; has step, step2, comment and label
	other    string
	awaiting string // closed, so awaiting a human's approval...
	approval string // ...through this request
	blocked  string
	step     string
	step2    string
	trashed  string // a step of task, in the Trash
	comment  string
	label    string

	run        string // running: the agent "runner" works on runTask
	runTask    string
	failedRun  string // failed, on failedTask: retry_run may retry it
	failedTask string

	contextRef string // attached to task
}

// newSeed fills e with a small workspace, through the tools, as a human
// with full scope and as the agent "runner". The agent "idle-bot" is
// paused.
func (e *env) newSeed(cs *mcp.ClientSession) seed {
	t := e.t
	t.Helper()
	var s seed
	s.project = must[store.Project](t, cs, "create_project", args{"name": "Launch", "description": "the first release"}).ID
	s.archived = must[store.Project](t, cs, "create_project", args{"name": "Old"}).ID
	must[store.Project](t, cs, "archive_project", args{"project_id": s.archived})
	s.task = must[store.Task](t, cs, "create_task", args{"title": "Write the README", "project_id": s.project, "due": "2025-06-30"}).ID
	s.other = must[store.Task](t, cs, "create_task", args{"title": "Tag the release", "project_id": s.project}).ID
	s.awaiting = must[store.Task](t, cs, "create_task", args{"title": "Announce it", "project_id": s.project}).ID
	must[store.Task](t, cs, "close_task", args{"task_id": s.awaiting})
	s.approval = must[store.TaskDetail](t, cs, "get_task", args{"task_id": s.awaiting}).Approval.ID
	s.blocked = must[store.Task](t, cs, "create_task", args{"title": "Publish the binaries", "project_id": s.project}).ID
	must[store.Task](t, cs, "block_task", args{"task_id": s.blocked, "reason": "no signing key yet"})
	must[store.Task](t, cs, "add_task_dependency", args{"task_id": s.task, "depends_on": s.other})
	s.step = must[store.Step](t, cs, "add_step", args{"task_id": s.task, "text": "Draft the install section"}).ID
	s.step2 = must[store.Step](t, cs, "add_step", args{"task_id": s.task, "text": "Add examples"}).ID
	s.trashed = must[store.Step](t, cs, "add_step", args{"task_id": s.task, "text": "A step deleted since"}).ID
	must[store.TrashItem](t, cs, "delete_step", args{"step_id": s.trashed})
	s.comment = must[store.Comment](t, cs, "comment_on_task", args{"task_id": s.task, "body": "Keep it short."}).ID
	s.label = must[store.Label](t, cs, "create_label", args{"name": "docs", "color": "#336699"}).ID
	must[labelsResult](t, cs, "add_label_to_task", args{"task_id": s.task, "label_id": s.label})
	s.contextRef = "local:notes/plan.md"
	must[taskContextResult](t, cs, "attach_context_to_task", args{"task_id": s.task, "ref": s.contextRef, "title": "Plan"})

	runner := e.connect(e.mint("runner", store.Agent, mcpeffect.Full))
	e.mint("idle-bot", store.Agent, mcpeffect.NonDestructive)
	must[store.AgentInfo](t, cs, "pause_agent", args{"agent": "idle-bot", "reason": "out of credits"})
	s.failedTask = must[store.Task](t, cs, "create_task", args{"title": "Try the migration"}).ID
	s.failedRun = must[store.Run](t, cs, "start_run", args{"task_id": s.failedTask, "agent": "runner", "instructions": "Use a copy of the database."}).ID
	must[store.Task](t, runner, "claim_task", args{"task_id": s.failedTask})
	must[store.Run](t, runner, "complete_run", args{"run_id": s.failedRun, "outcome": "failed", "summary": "the copy is locked"})
	s.runTask = must[store.Task](t, cs, "create_task", args{"title": "Run the benchmarks"}).ID
	s.run = must[store.Run](t, cs, "start_run", args{"task_id": s.runTask, "agent": "runner"}).ID
	must[store.Task](t, runner, "claim_task", args{"task_id": s.runTask})
	return s
}

func splitLines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func callParams(tool string, a any) *mcp.CallToolParams {
	if a == nil {
		a = args{}
	}
	return &mcp.CallToolParams{Name: tool, Arguments: a}
}
