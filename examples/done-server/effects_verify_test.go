package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/connector"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEffectsProved proves the effect each of Done's tools is classified
// with by calling it, with mcpeffecttest.Verify: each example below runs
// on a fresh copy of a Done in use (a workspace: its database and context
// folder), as the person alice with a full token unless it says who
// calls, and the records of the state (effects_state_test.go) before and
// after its call, and after the same call repeated, must fit the tool's
// effect. The table is also the documentation of what each tool does.
func TestEffectsProved(t *testing.T) {
	sqliteOnly(t, "the verifier reads the state from the file")
	tmpl := newTemplate(t)
	mcpeffecttest.Verify(t, tmpl.instance, effectExamples, &mcpeffecttest.VerifyOptions{Parallel: true})
}

// proofStart is when the workspace's clock starts: a Monday, so that the
// day's digest and the week's begin together.
var proofStart = time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

// tickingClock is a time source that moves a second each time it is read,
// so that a call repeated later than the first is seen to come later, as
// it would: a repeat that writes its time again changes the state.
type tickingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

// A proof is one instance of Done under proof, as its examples see it:
// the workspace it holds, and the tokens it knows, by label, which the
// examples call as.
type proof struct {
	dir   string
	store *store.Store
	w     workspace

	mu     sync.Mutex
	tokens map[string]mintedToken // by label
}

type mintedToken struct {
	id, secret string
	scope      mcpeffect.Scope
}

// mint makes a token for name as the command line does, known to the
// examples as label.
func (p *proof) mint(t testing.TB, label, name string, kind store.Kind, scope mcpeffect.Scope) {
	t.Helper()
	k, secret, err := p.store.MintToken(t.Context(), store.NewToken{Name: name, Kind: kind, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokens[label] = mintedToken{k.ID, secret, scope}
}

// tokenID returns the id of the token labelled label.
func (p *proof) tokenID(label string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokens[label].id
}

// connection returns ctx as a connection of the token labelled label is
// made, as Done's stdio does: the token's secret, checked again on every
// call, and its scope for the whole connection.
func (p *proof) connection(ctx context.Context, label string) context.Context {
	p.mu.Lock()
	k, ok := p.tokens[label]
	p.mu.Unlock()
	if !ok {
		panic("no token is labelled " + label) // a mistake in the table below
	}
	return mcpeffect.WithConnectionScope(withStdioCredential(ctx, stdioCredential{secret: k.secret}), k.scope)
}

// as is the Caller of an example made by the token labelled label.
func as(label string) func(context.Context, *proof) context.Context {
	return func(ctx context.Context, p *proof) context.Context { return p.connection(ctx, label) }
}

// A template is the workspace every example starts from, made once
// through Done's tools and copied for each: its files, what it holds, the
// tokens it knows and when its clock stopped.
type template struct {
	dir    string
	end    time.Time
	w      workspace
	tokens map[string]mintedToken
}

// openDone opens Done on the data directory dir with clock: its store,
// and its server with the local folder as connector.
func openDone(t testing.TB, dir string, clock *tickingClock) (*store.Store, *mcp.Server, *mcpeffect.Registry) {
	t.Helper()
	// The store as done-server serves it, with the proof's clock.
	opts := storeOptions()
	opts.Now = clock.Now
	st, _, err := store.Open(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	folder, err := connector.NewFolder("local", filepath.Join(dir, "context"))
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	server, registry := newDone(st, slog.New(slog.DiscardHandler), config{connectors: []connector.Connector{folder}}).newServer()
	return st, server, registry
}

// newTemplate makes the workspace, in a directory that lasts as long as t.
func newTemplate(t *testing.T) *template {
	t.Helper()
	dir := t.TempDir()
	clock := &tickingClock{now: proofStart}
	st, server, _ := openDone(t, dir, clock)
	p := &proof{dir: dir, store: st, tokens: map[string]mintedToken{}}
	p.mint(t, "alice", "alice", store.Human, mcpeffect.Full)
	var sessions []*mcp.ClientSession
	connect := func(ctx context.Context) session {
		ct, stt := mcp.NewInMemoryTransports()
		ss, err := server.Connect(ctx, stt, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-proof", Version: "1"}, nil).Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, cs)
		go func() { ss.Wait() }()
		return clientSession{t, cs}
	}
	f := &fx{t: t, p: p, s: connect(p.connection(t.Context(), "alice")), connect: connect}
	w := f.workspace()
	for _, cs := range sessions {
		cs.Close()
	}
	// Closing the store checkpoints the write-ahead log into the
	// database file, which is then all there is to copy.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return &template{dir: dir, end: clock.Now(), w: w, tokens: p.tokens}
}

// instance makes a fresh Done for one example: a copy of the workspace,
// with alice, a person with a full token, as its caller.
func (tp *template) instance(t testing.TB) mcpeffecttest.Instance[*proof] {
	t.Helper()
	dir := t.TempDir()
	if err := copyTree(tp.dir, dir); err != nil {
		t.Fatal(err)
	}
	st, server, registry := openDone(t, dir, &tickingClock{now: tp.end})
	t.Cleanup(func() { st.Close() })
	state, err := openState(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { state.close() })
	p := &proof{dir: dir, store: st, w: tp.w, tokens: maps.Clone(tp.tokens)}
	return mcpeffecttest.Instance[*proof]{
		Server:   server,
		Registry: registry,
		State:    state.State,
		Env:      p,
		Caller:   func(ctx context.Context) context.Context { return p.connection(ctx, "alice") },
	}
}

// copyTree copies the regular files and folders under from to to.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o700)
		case strings.HasSuffix(path, "-shm"):
			return nil // SQLite makes it again from the database and its log
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o600)
	})
}

// A session calls tools as one caller, to make fixtures: a fixture that
// is not made ends the example.
type session interface {
	CallTool(name string, args, out any)
}

// clientSession is a session of a go-sdk client, for the template.
type clientSession struct {
	t  testing.TB
	cs *mcp.ClientSession
}

func (c clientSession) CallTool(name string, a, out any) {
	c.t.Helper()
	res, err := c.cs.CallTool(c.t.Context(), &mcp.CallToolParams{Name: name, Arguments: a})
	switch {
	case err != nil:
		c.t.Fatalf("%s: %v", name, err)
	case res.IsError:
		c.t.Fatalf("%s: %s", name, text(res))
	case out == nil:
		return
	}
	data, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(data, out)
	}
	if err != nil {
		c.t.Fatalf("%s: decoding its result: %v", name, err)
	}
}

// fx makes fixtures on one instance, through its tools, as one caller.
type fx struct {
	t       testing.TB
	p       *proof
	s       session
	connect func(context.Context) session
}

// setup is the Setup of an example whose fixtures build makes, and
// returns its arguments.
func setup(build func(f *fx) args) func(testing.TB, *proof, *mcpeffecttest.Session) any {
	return func(t testing.TB, p *proof, s *mcpeffecttest.Session) any {
		connect := func(ctx context.Context) session { return s.Connect(ctx) }
		return build(&fx{t, p, s, connect})
	}
}

func (f *fx) call(tool string, a args) { f.s.CallTool(tool, a, nil) }

// as returns a maker of fixtures that calls as the token labelled label.
func (f *fx) as(label string) *fx {
	return &fx{f.t, f.p, f.connect(f.p.connection(f.t.Context(), label)), f.connect}
}

// agent mints a token of the agent name, labelled label, and returns a
// maker of fixtures that calls as it.
func (f *fx) agent(label, name string, scope mcpeffect.Scope) *fx {
	f.p.mint(f.t, label, name, store.Agent, scope)
	return f.as(label)
}

func (f *fx) project(a args) string {
	var p store.Project
	f.s.CallTool("create_project", a, &p)
	return p.ID
}

func (f *fx) task(a args) string {
	var task store.Task
	f.s.CallTool("create_task", a, &task)
	return task.ID
}

func (f *fx) step(taskID, text string) string {
	var st store.Step
	f.s.CallTool("add_step", args{"task_id": taskID, "text": text}, &st)
	return st.ID
}

func (f *fx) comment(taskID, body string) string {
	var c store.Comment
	f.s.CallTool("comment_on_task", args{"task_id": taskID, "body": body}, &c)
	return c.ID
}

func (f *fx) label(name string) string {
	var l store.Label
	f.s.CallTool("create_label", args{"name": name, "color": "#336699"}, &l)
	return l.ID
}

// queuedRun queues a run of agent on the task.
func (f *fx) queuedRun(taskID, agent string) string {
	var r store.Run
	f.s.CallTool("start_run", args{"task_id": taskID, "agent": agent, "instructions": "Keep it short."}, &r)
	return r.ID
}

// runningRun queues a run of the agent whose maker is agent on the task,
// and has the agent start it by claiming the task.
func (f *fx) runningRun(taskID, agentName string, agent *fx) string {
	id := f.queuedRun(taskID, agentName)
	agent.call("claim_task", args{"task_id": taskID})
	return id
}

// pendingApproval returns the id of the approval request a task waits on.
func (f *fx) pendingApproval(taskID string) string {
	var d store.TaskDetail
	f.s.CallTool("get_task", args{"task_id": taskID}, &d)
	if d.Approval == nil {
		f.t.Fatalf("task %s has no pending approval", taskID)
	}
	return d.Approval.ID
}

func (f *fx) link(a args) string {
	var l calendarLinkResult
	f.s.CallTool("create_calendar_link", a, &l)
	return l.Link.ID
}

// doc writes a document into the context folder, as its owner would,
// and returns its ref.
func (f *fx) doc(id, text string) string {
	path := filepath.Join(f.p.dir, "context", filepath.FromSlash(id))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return "local:" + id
}

// A workspace is a Done in use, for the reads to read: projects, tasks in
// every status, steps, comments, labels, dependencies, approvals, runs of
// agents, a calendar link, documents, things in the Trash.
type workspace struct {
	project, archived                   string
	task, other, subtask, blocked       string
	awaiting, approval, otherApproval   string
	step, trashedStep, comment, label   string
	doc                                 string
	run, runTask, failedRun, failedTask string
	queuedRun, queuedTask               string
	link                                string
}

// workspace fills the instance, through its tools: alice, a person, does
// most of it, the agent "runner" works in a run and failed another, a run
// of the agent "night-bot" waits in the queue, and the agent "idle-bot"
// is paused.
func (f *fx) workspace() workspace {
	var w workspace
	w.project = f.project(args{"name": "Launch", "description": "the first release"})
	w.archived = f.project(args{"name": "Old"})
	f.call("archive_project", args{"project_id": w.archived})
	w.task = f.task(args{"title": "Write the README", "project_id": w.project, "assignee": "alice", "due": "2025-06-04", "description": "Install, use, contribute."})
	w.other = f.task(args{"title": "Tag the release", "project_id": w.project})
	f.call("add_task_dependency", args{"task_id": w.task, "depends_on": w.other})
	f.call("schedule_task", args{"task_id": w.other, "start": "2025-06-03"})
	w.subtask = f.task(args{"title": "Draft the examples", "parent_id": w.task})
	w.awaiting = f.task(args{"title": "Announce it", "project_id": w.project})
	f.call("close_task", args{"task_id": w.awaiting})
	w.approval = f.pendingApproval(w.awaiting)
	w.blocked = f.task(args{"title": "Publish the binaries", "project_id": w.project})
	f.call("block_task", args{"task_id": w.blocked, "reason": "no signing key yet"})
	w.step = f.step(w.task, "Draft the install section")
	f.step(w.task, "Add examples")
	w.trashedStep = f.step(w.task, "A step deleted since")
	f.call("delete_step", args{"step_id": w.trashedStep})
	w.comment = f.comment(w.task, "Keep it short.")
	w.label = f.label("docs")
	f.call("add_label_to_task", args{"task_id": w.task, "label_id": w.label})
	w.doc = f.doc("notes/plan.md", "# Plan\n\nShip the README first, then tag the release.\n")
	f.call("attach_context_to_task", args{"task_id": w.task, "ref": w.doc, "title": "Plan"})
	var a store.Approval
	f.s.CallTool("request_approval", args{"task_id": w.task, "step_id": w.step, "reason": "The install section names a paid service."}, &a)
	w.otherApproval = a.ID
	f.call("delete_task", args{"task_id": f.task(args{"title": "A task deleted since"})})

	runner := f.agent("runner", "runner", mcpeffect.Full)
	f.agent("idle-bot", "idle-bot", mcpeffect.NonDestructive)
	f.call("pause_agent", args{"agent": "idle-bot", "reason": "out of credits"})
	w.failedTask = f.task(args{"title": "Try the migration"})
	w.failedRun = f.runningRun(w.failedTask, "runner", runner)
	runner.call("complete_run", args{"run_id": w.failedRun, "outcome": "failed", "summary": "the copy is locked"})
	w.runTask = f.task(args{"title": "Run the benchmarks"})
	w.run = f.runningRun(w.runTask, "runner", runner)
	runner.call("report_run_progress", args{"run_id": w.run, "message": "half the suites", "progress": 50,
		"artifacts": []args{{"kind": "link", "uri": "https://example.com/bench/1", "title": "first results"}}})
	f.agent("night-bot", "night-bot", mcpeffect.Full)
	w.queuedTask = f.task(args{"title": "Rebuild the index"})
	w.queuedRun = f.queuedRun(w.queuedTask, "night-bot")

	w.link = f.link(args{"project_id": w.project})
	f.call("mark_digest_read", args{"digest_id": "day-2025-06-02"})
	return w
}

// read is an example of a read of the workspace: a returns its
// arguments.
func read(tool, name string, a func(w workspace) args) mcpeffecttest.Example[*proof] {
	return mcpeffecttest.Example[*proof]{Tool: tool, Name: name,
		Setup: func(_ testing.TB, p *proof, _ *mcpeffecttest.Session) any { return a(p.w) }}
}

// readAs is read, called by the token labelled label.
func readAs(label, tool, name string, a func(w workspace) args) mcpeffecttest.Example[*proof] {
	ex := read(tool, name, a)
	ex.Caller = as(label)
	return ex
}

func none(workspace) args { return nil }

// effectExamples are the examples of every tool of Done, by group: what
// each does, shown on the data it does it to.
var effectExamples = []mcpeffecttest.Example[*proof]{
	// Reads, on a workspace in use: each changes nothing, not even when
	// an agent asks for its next task.
	read("list_my_tasks", "a person's", none),
	readAs("runner", "list_my_tasks", "an agent's", none),
	read("list_tasks", "a project's", func(w workspace) args { return args{"project_id": w.project} }),
	read("list_tasks", "blocked, everywhere", func(w workspace) args { return args{"status": "blocked"} }),
	read("search_tasks", "a word", func(w workspace) args { return args{"query": "readme"} }),
	read("get_task", "with steps, labels, dependency, approval", func(w workspace) args { return args{"task_id": w.task} }),
	read("get_task", "awaiting approval", func(w workspace) args { return args{"task_id": w.awaiting} }),
	read("get_task_activity", "a task's history", func(w workspace) args { return args{"task_id": w.task} }),
	read("list_subtasks", "of a task", func(w workspace) args { return args{"task_id": w.task} }),
	read("get_next_task", "a person's", none),
	readAs("night-bot", "get_next_task", "an agent's queued run: offered, not claimed", none),
	readAs("runner", "get_next_task", "an agent in a run", none),
	readAs("idle-bot", "get_next_task", "a paused agent's: nothing", none),
	read("list_projects", "archived too", func(w workspace) args { return args{"include_archived": true} }),
	read("get_project", "with its settings", func(w workspace) args { return args{"project_id": w.project} }),
	read("get_project_progress", "counts, blocked, approvals", func(w workspace) args { return args{"project_id": w.project} }),
	read("list_steps", "in order", func(w workspace) args { return args{"task_id": w.task} }),
	read("get_step", "with its last status change", func(w workspace) args { return args{"step_id": w.step} }),
	read("list_comments", "a thread", func(w workspace) args { return args{"task_id": w.task} }),
	read("fleet_status", "online, busy, paused, failing", none),
	read("list_agents", "every agent", none),
	read("get_agent", "a busy agent", func(w workspace) args { return args{"agent": "runner"} }),
	read("list_runs", "newest first", none),
	read("get_run", "a running run", func(w workspace) args { return args{"run_id": w.run} }),
	read("get_run", "a queued run", func(w workspace) args { return args{"run_id": w.queuedRun} }),
	read("get_run_logs", "queued, started, progress", func(w workspace) args { return args{"run_id": w.run} }),
	read("list_run_artifacts", "a run's outputs", func(w workspace) args { return args{"run_id": w.run} }),
	read("get_digest", "today's", none),
	read("get_digest", "this week's", func(w workspace) args { return args{"digest_id": "week-2025-W23"} }),
	read("list_digests", "daily", none),
	read("list_calendar_links", "a person's", none),
	read("get_agenda", "this week", func(w workspace) args { return args{"from": "2025-06-02", "to": "2025-06-08"} }),
	read("list_connectors", "the local folder", none),
	read("search_context", "the local folder", func(w workspace) args { return args{"query": "readme"} }),
	read("read_context", "a document", func(w workspace) args { return args{"ref": w.doc} }),
	read("list_task_context", "a task's references", func(w workspace) args { return args{"task_id": w.task} }),
	read("list_pending_approvals", "close and other", none),
	read("get_approval", "a close request", func(w workspace) args { return args{"approval_id": w.approval} }),
	read("list_trash", "a task and a step", none),
	read("list_labels", "by name", none),
	read("whoami", "a person", none),
	readAs("runner", "whoami", "an agent", none),
	read("list_tokens", "a person's: every agent's too", none),
	readAs("runner", "list_tokens", "an agent's own", none),

	// Tasks.
	{Tool: "create_task", Name: "in a project", Setup: setup(func(f *fx) args {
		return args{"title": "Write the README", "project_id": f.project(args{"name": "Launch"}), "due": "2025-06-30"}
	})},
	{Tool: "create_task", Name: "filed by an agent that may only add", Caller: as("scout"), Setup: setup(func(f *fx) args {
		f.agent("scout", "scout", mcpeffect.NonDestructive)
		return args{"title": "Flaky test in CI", "description": "TestLoad timed out twice."}
	})},
	{Tool: "create_task", Name: "auto-close, refused to an agent", Caller: as("builder"), WantError: "only a human may make a task auto-close",
		Setup: setup(func(f *fx) args {
			f.agent("builder", "builder", mcpeffect.Full)
			return args{"title": "Merge when green", "auto_close": true}
		})},
	{Tool: "update_task", Name: "a new title", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Write the README"}), "title": "Write a short README"}
	})},
	{Tool: "update_task", Name: "a due date where there was none", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Write the README"}), "due": "2025-06-30"}
	})},
	{Tool: "delete_task", Name: "to the Trash, with its subtask, steps and comments", Undo: true, Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Write the README"})
		f.task(args{"title": "Draft the examples", "parent_id": task})
		f.step(task, "Draft the install section")
		f.comment(task, "Keep it short.")
		return args{"task_id": task}
	})},
	{Tool: "move_task", Name: "to another project", Setup: setup(func(f *fx) args {
		from, to := f.project(args{"name": "Launch"}), f.project(args{"name": "Docs"})
		return args{"task_id": f.task(args{"title": "Write the README", "project_id": from}), "project_id": to}
	})},
	{Tool: "assign_task", Name: "from a person to an agent", Setup: setup(func(f *fx) args {
		f.agent("builder", "builder", mcpeffect.Full)
		return args{"task_id": f.task(args{"title": "Run the benchmarks", "assignee": "alice"}), "assignee": "builder"}
	})},
	{Tool: "claim_task", Name: "an agent starts the run queued for it", Caller: as("builder"), Setup: setup(func(f *fx) args {
		f.agent("builder", "builder", mcpeffect.Full)
		task := f.task(args{"title": "Run the benchmarks"})
		f.queuedRun(task, "builder")
		return args{"task_id": task}
	})},
	{Tool: "claim_task", Name: "a person takes an unassigned task", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Write the README"})}
	})},
	{Tool: "block_task", Name: "an open task", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Publish the binaries"}), "reason": "no signing key yet"}
	})},
	{Tool: "block_task", Name: "by another task", Setup: setup(func(f *fx) args {
		key := f.task(args{"title": "Get a signing key"})
		return args{"task_id": f.task(args{"title": "Publish the binaries"}), "reason": "needs the key", "blocked_by": key}
	})},
	{Tool: "unblock_task", Name: "a blocked task", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Publish the binaries"})
		f.call("block_task", args{"task_id": task, "reason": "no signing key yet"})
		return args{"task_id": task}
	})},
	{Tool: "close_task", Name: "auto-close: done", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Water the plants", "auto_close": true})}
	})},
	{Tool: "close_task", Name: "gated: awaiting approval, with one request", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Write the README"})}
	})},
	{Tool: "close_task", Name: "an agent's task: awaiting a person", Caller: as("builder"), Setup: setup(func(f *fx) args {
		f.agent("builder", "builder", mcpeffect.Full)
		return args{"task_id": f.task(args{"title": "Run the benchmarks", "assignee": "builder"})}
	})},
	{Tool: "close_task", Name: "refused to an agent that may only add", Caller: as("scout"), WantError: "is refused",
		Setup: setup(func(f *fx) args {
			f.agent("scout", "scout", mcpeffect.NonDestructive)
			return args{"task_id": f.task(args{"title": "Run the benchmarks", "assignee": "scout"})}
		})},
	{Tool: "close_task", Name: "a blocked task, refused", WantError: "is blocked",
		Setup: func(_ testing.TB, p *proof, _ *mcpeffecttest.Session) any { return args{"task_id": p.w.blocked} }},
	{Tool: "reopen_task", Name: "awaiting approval: its request withdrawn", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Write the README"})
		f.call("close_task", args{"task_id": task})
		return args{"task_id": task}
	})},
	{Tool: "reopen_task", Name: "done", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Water the plants", "auto_close": true})
		f.call("close_task", args{"task_id": task})
		return args{"task_id": task}
	})},
	{Tool: "add_task_dependency", Name: "a new dependency", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Tag the release"}), "depends_on": f.task(args{"title": "Write the README"})}
	})},
	{Tool: "add_task_dependency", Name: "a cycle, refused", WantError: "would make a cycle", Setup: setup(func(f *fx) args {
		a, b := f.task(args{"title": "Tag the release"}), f.task(args{"title": "Write the README"})
		f.call("add_task_dependency", args{"task_id": a, "depends_on": b})
		return args{"task_id": b, "depends_on": a}
	})},
	{Tool: "remove_task_dependency", Name: "a dependency", Setup: setup(func(f *fx) args {
		a, b := f.task(args{"title": "Tag the release"}), f.task(args{"title": "Write the README"})
		f.call("add_task_dependency", args{"task_id": a, "depends_on": b})
		return args{"task_id": a, "depends_on": b}
	})},

	// Steps.
	{Tool: "decompose_task", Name: "two subtasks and a step", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Write the README", "project_id": f.project(args{"name": "Launch"})}),
			"subtasks": []args{{"title": "Install section"}, {"title": "Usage section", "assignee": "alice"}},
			"steps":    []string{"Proofread"}}
	})},
	{Tool: "add_step", Name: "to a checklist", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Write the README"})
		f.step(task, "Draft the install section")
		return args{"task_id": task, "text": "Add examples", "notes": "one per command"}
	})},
	{Tool: "update_step", Name: "new text", Setup: setup(func(f *fx) args {
		return args{"step_id": f.step(f.task(args{"title": "Write the README"}), "Draft the install section"), "text": "Draft the install and upgrade sections"}
	})},
	{Tool: "set_step_status", Name: "todo to done", Setup: setup(func(f *fx) args {
		return args{"step_id": f.step(f.task(args{"title": "Write the README"}), "Draft the install section"), "status": "done"}
	})},
	{Tool: "reorder_steps", Name: "reversed", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Write the README"})
		a, b, c := f.step(task, "Draft"), f.step(task, "Review"), f.step(task, "Publish")
		return args{"task_id": task, "step_ids": []string{c, b, a}}
	})},
	{Tool: "delete_step", Name: "to the Trash", Undo: true, Setup: setup(func(f *fx) args {
		return args{"step_id": f.step(f.task(args{"title": "Write the README"}), "Draft the install section")}
	})},

	// Comments.
	{Tool: "comment_on_task", Name: "by a person", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Write the README"})
		f.comment(task, "Keep it short.")
		return args{"task_id": task, "body": "And link the examples."}
	})},
	{Tool: "comment_on_task", Name: "by an agent that may only add", Caller: as("scout"), Setup: setup(func(f *fx) args {
		f.agent("scout", "scout", mcpeffect.NonDestructive)
		return args{"task_id": f.task(args{"title": "Write the README"}), "body": "The install section is out of date."}
	})},
	{Tool: "edit_comment", Name: "one's own", Setup: setup(func(f *fx) args {
		return args{"comment_id": f.comment(f.task(args{"title": "Write the README"}), "Keep it shrot."), "body": "Keep it short."}
	})},
	{Tool: "edit_comment", Name: "another's, refused", Caller: as("builder"), WantError: "only its author may edit it",
		Setup: setup(func(f *fx) args {
			f.agent("builder", "builder", mcpeffect.Full)
			return args{"comment_id": f.comment(f.task(args{"title": "Write the README"}), "Keep it short."), "body": "Make it long."}
		})},
	{Tool: "delete_comment", Name: "to the Trash", Undo: true, Setup: setup(func(f *fx) args {
		return args{"comment_id": f.comment(f.task(args{"title": "Write the README"}), "Keep it short.")}
	})},

	// Projects.
	{Tool: "create_project", Name: "with defaults for its tasks", Setup: setup(func(f *fx) args {
		f.agent("builder", "builder", mcpeffect.Full)
		return args{"name": "Benchmarks", "description": "numbers for the release", "default_assignee": "builder"}
	})},
	{Tool: "update_project", Name: "renamed", Setup: setup(func(f *fx) args {
		return args{"project_id": f.project(args{"name": "Launch"}), "name": "Launch v1"}
	})},
	{Tool: "archive_project", Name: "a live project", Setup: setup(func(f *fx) args {
		p := f.project(args{"name": "Launch"})
		f.task(args{"title": "Write the README", "project_id": p})
		return args{"project_id": p}
	})},
	{Tool: "unarchive_project", Name: "an archived project", Setup: setup(func(f *fx) args {
		p := f.project(args{"name": "Launch"})
		f.call("archive_project", args{"project_id": p})
		return args{"project_id": p}
	})},
	{Tool: "delete_project", Name: "to the Trash, with its tasks", Undo: true, Setup: setup(func(f *fx) args {
		p := f.project(args{"name": "Launch"})
		f.task(args{"title": "Write the README", "project_id": p})
		f.task(args{"title": "Tag the release", "project_id": p})
		return args{"project_id": p}
	})},

	// Agents and runs.
	{Tool: "start_run", Name: "an agent on an unassigned task", Setup: setup(func(f *fx) args {
		f.agent("builder", "builder", mcpeffect.Full)
		return args{"task_id": f.task(args{"title": "Run the benchmarks"}), "agent": "builder", "instructions": "Only the fast suites."}
	})},
	{Tool: "start_run", Name: "an agent starts one for itself, adding only", Caller: as("scout"), Setup: setup(func(f *fx) args {
		f.agent("scout", "scout", mcpeffect.NonDestructive)
		return args{"task_id": f.task(args{"title": "Run the benchmarks", "assignee": "scout"})}
	})},
	{Tool: "retry_run", Name: "a failed run", Setup: setup(func(f *fx) args {
		builder := f.agent("builder", "builder", mcpeffect.Full)
		run := f.runningRun(f.task(args{"title": "Try the migration"}), "builder", builder)
		builder.call("complete_run", args{"run_id": run, "outcome": "failed", "summary": "the copy is locked"})
		return args{"run_id": run}
	})},
	{Tool: "cancel_run", Name: "a queued run", Setup: setup(func(f *fx) args {
		f.agent("builder", "builder", mcpeffect.Full)
		return args{"run_id": f.queuedRun(f.task(args{"title": "Run the benchmarks"}), "builder"), "reason": "not needed"}
	})},
	{Tool: "cancel_run", Name: "a running run", Setup: setup(func(f *fx) args {
		builder := f.agent("builder", "builder", mcpeffect.Full)
		return args{"run_id": f.runningRun(f.task(args{"title": "Run the benchmarks"}), "builder", builder)}
	})},
	{Tool: "report_run_progress", Name: "the first report, by a token that may only add", Caller: as("builder-reports"),
		Setup: setup(func(f *fx) args {
			builder := f.agent("builder", "builder", mcpeffect.Full)
			run := f.runningRun(f.task(args{"title": "Run the benchmarks"}), "builder", builder)
			f.p.mint(f.t, "builder-reports", "builder", store.Agent, mcpeffect.NonDestructive)
			return args{"run_id": run, "message": "the fast suites pass", "progress": 30,
				"artifacts": []args{{"kind": "link", "uri": "https://example.com/bench/1"}}}
		})},
	{Tool: "report_run_progress", Name: "a later report, further along", Caller: as("builder"), Setup: setup(func(f *fx) args {
		builder := f.agent("builder", "builder", mcpeffect.Full)
		run := f.runningRun(f.task(args{"title": "Run the benchmarks"}), "builder", builder)
		builder.call("report_run_progress", args{"run_id": run, "message": "the fast suites pass", "progress": 30})
		return args{"run_id": run, "message": "the slow suites pass", "progress": 70}
	})},
	{Tool: "complete_run", Name: "succeeded, with its cost", Caller: as("builder"), Setup: setup(func(f *fx) args {
		builder := f.agent("builder", "builder", mcpeffect.Full)
		run := f.runningRun(f.task(args{"title": "Run the benchmarks"}), "builder", builder)
		return args{"run_id": run, "outcome": "succeeded", "summary": "all suites pass", "cost_usd": 0.42,
			"artifacts": []args{{"kind": "file", "uri": "bench/results.txt"}}}
	})},
	{Tool: "pause_agent", Name: "by a person", Setup: setup(func(f *fx) args {
		f.agent("builder", "builder", mcpeffect.Full)
		return args{"agent": "builder", "reason": "out of credits"}
	})},
	{Tool: "pause_agent", Name: "an agent pauses itself", Caller: as("scout"), Setup: setup(func(f *fx) args {
		f.agent("scout", "scout", mcpeffect.Full)
		return args{"agent": "scout", "reason": "waiting for a person"}
	})},
	{Tool: "resume_agent", Name: "by a person", Setup: setup(func(f *fx) args {
		f.agent("builder", "builder", mcpeffect.Full)
		f.call("pause_agent", args{"agent": "builder", "reason": "out of credits"})
		return args{"agent": "builder"}
	})},
	{Tool: "resume_agent", Name: "refused to the agent itself", Caller: as("builder"), WantError: "only a human may resume an agent",
		Setup: setup(func(f *fx) args {
			f.agent("builder", "builder", mcpeffect.Full)
			f.call("pause_agent", args{"agent": "builder", "reason": "out of credits"})
			return args{"agent": "builder"}
		})},

	// Digests.
	{Tool: "mark_digest_read", Name: "this week's, the first time", Args: args{"digest_id": "week-2025-W23"}},
	{Tool: "mark_digest_read", Name: "today's again, after new changes", Setup: setup(func(f *fx) args {
		f.task(args{"title": "Write the README"})
		f.call("mark_digest_read", args{"digest_id": "day-2025-06-02"})
		f.task(args{"title": "Tag the release"})
		return args{"digest_id": "day-2025-06-02"}
	})},

	// Calendar.
	{Tool: "create_calendar_link", Name: "a project's", Setup: setup(func(f *fx) args {
		return args{"project_id": f.project(args{"name": "Launch"})}
	})},
	{Tool: "create_calendar_link", Name: "the caller's own tasks", Setup: setup(func(f *fx) args {
		return args{"name": "My tasks"}
	})},
	{Tool: "rotate_calendar_link", Name: "a live link", Setup: setup(func(f *fx) args {
		return args{"link_id": f.link(args{"project_id": f.project(args{"name": "Launch"})})}
	})},
	{Tool: "revoke_calendar_link", Name: "a live link", Setup: setup(func(f *fx) args {
		return args{"link_id": f.link(args{"name": "My tasks"})}
	})},
	{Tool: "revoke_calendar_link", Name: "an agent's, by a person", Setup: setup(func(f *fx) args {
		var l calendarLinkResult
		f.agent("builder", "builder", mcpeffect.NonDestructive).s.CallTool("create_calendar_link", args{"name": "builder's tasks"}, &l)
		return args{"link_id": l.Link.ID}
	})},
	{Tool: "schedule_task", Name: "on two days", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Tag the release"}), "start": "2025-06-03", "end": "2025-06-04"}
	})},
	{Tool: "schedule_task", Name: "moved to an hour", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Tag the release"})
		f.call("schedule_task", args{"task_id": task, "start": "2025-06-03"})
		return args{"task_id": task, "start": "2025-06-05T14:00:00Z"}
	})},

	// Context: the local folder is the connector.
	{Tool: "save_context", Name: "a new note", Setup: setup(func(f *fx) args {
		return args{"title": "Release notes", "text": "What changed in v1.", "folder": "notes"}
	})},
	{Tool: "save_context", Name: "a title taken: a new file beside it, the first untouched", Setup: setup(func(f *fx) args {
		f.doc("notes/ideas.md", "# Ideas\n\nA plugin for Drive.\n")
		return args{"title": "Ideas", "text": "More ideas.", "folder": "notes"}
	})},
	{Tool: "attach_context_to_task", Name: "a document found by search_context", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Write the README"}), "ref": f.doc("notes/ideas.md", "# Ideas\n"), "title": "Ideas"}
	})},
	{Tool: "detach_context_from_task", Name: "a reference, the document untouched", Setup: setup(func(f *fx) args {
		task, ref := f.task(args{"title": "Write the README"}), f.doc("notes/ideas.md", "# Ideas\n")
		f.call("attach_context_to_task", args{"task_id": task, "ref": ref, "title": "Ideas"})
		return args{"task_id": task, "ref": ref}
	})},

	// Approvals: the gate.
	{Tool: "request_approval", Name: "before a risky step", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Migrate the database"})
		return args{"task_id": task, "step_id": f.step(task, "Drop the old table"), "reason": "It cannot be undone."}
	})},
	{Tool: "request_approval", Name: "to close, by an agent that may only add", Caller: as("scout"), Setup: setup(func(f *fx) args {
		f.agent("scout", "scout", mcpeffect.NonDestructive)
		return args{"task_id": f.task(args{"title": "Run the benchmarks", "assignee": "scout"}), "kind": "close", "reason": "All suites pass."}
	})},
	{Tool: "approve_task", Name: "a close request: the task done", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Write the README"})
		f.call("close_task", args{"task_id": task})
		return args{"task_id": task, "approval_id": f.pendingApproval(task), "note": "Reads well."}
	})},
	{Tool: "approve_task", Name: "refused to an agent, whatever its scope", Caller: as("builder"), WantError: "only a human may approve",
		Setup: setup(func(f *fx) args {
			builder := f.agent("builder", "builder", mcpeffect.Full)
			task := f.task(args{"title": "Run the benchmarks", "assignee": "builder"})
			builder.call("close_task", args{"task_id": task})
			return args{"task_id": task, "approval_id": f.pendingApproval(task)}
		})},
	{Tool: "approve_task", Name: "a request replaced since, refused", WantError: "can no longer be decided", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Write the README"})
		f.call("close_task", args{"task_id": task})
		reviewed := f.pendingApproval(task)
		f.call("reopen_task", args{"task_id": task})
		f.call("close_task", args{"task_id": task})
		return args{"task_id": task, "approval_id": reviewed}
	})},
	{Tool: "reject_task", Name: "a close request: the task open again", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Write the README"})
		f.call("close_task", args{"task_id": task})
		return args{"task_id": task, "approval_id": f.pendingApproval(task), "reason": "The install section is missing."}
	})},

	// The Trash.
	{Tool: "restore_from_trash", Name: "a task, whole", Setup: setup(func(f *fx) args {
		task := f.task(args{"title": "Write the README"})
		f.step(task, "Draft the install section")
		f.comment(task, "Keep it short.")
		f.call("delete_task", args{"task_id": task})
		return args{"item_id": task}
	})},
	{Tool: "restore_from_trash", Name: "a project, with its tasks", Setup: setup(func(f *fx) args {
		p := f.project(args{"name": "Docs"})
		f.task(args{"title": "Write the README", "project_id": p})
		f.call("delete_project", args{"project_id": p})
		return args{"item_id": p}
	})},

	// Labels.
	{Tool: "create_label", Name: "a new name", Setup: setup(func(f *fx) args {
		f.label("ops")
		return args{"name": "urgent", "color": "#cc0000"}
	})},
	{Tool: "add_label_to_task", Name: "a label not there", Setup: setup(func(f *fx) args {
		return args{"task_id": f.task(args{"title": "Write the README"}), "label_id": f.label("ops")}
	})},
	{Tool: "remove_label_from_task", Name: "a label there", Setup: setup(func(f *fx) args {
		task, label := f.task(args{"title": "Write the README"}), f.label("ops")
		f.call("add_label_to_task", args{"task_id": task, "label_id": label})
		return args{"task_id": task, "label_id": label}
	})},

	// Tokens.
	{Tool: "create_token", Name: "a person mints for an agent", Setup: setup(func(f *fx) args {
		return args{"name": "builder", "kind": "agent", "scope": "non-destructive", "expires_in_days": 30}
	})},
	{Tool: "create_token", Name: "wider than the caller's, refused", Caller: as("scout"), WantError: "wider than",
		Setup: setup(func(f *fx) args {
			f.agent("scout", "scout", mcpeffect.NonDestructive)
			return args{"name": "scout", "kind": "agent", "scope": "full"}
		})},
	{Tool: "revoke_token", Name: "an agent's, with what it minted and its links", Setup: setup(func(f *fx) args {
		builder := f.agent("builder", "builder", mcpeffect.Full)
		builder.call("create_token", args{"name": "builder", "kind": "agent", "scope": "read-only"})
		builder.call("create_calendar_link", args{"name": "builder's tasks"})
		return args{"token_id": f.p.tokenID("builder")}
	})},
}

// TestEffectsState holds the state the proof compares to what it must
// be: it fails on a table or a column that is neither mapped nor left out
// as bookkeeping, and on a mapping or a bookkeeping entry that names what
// is gone, and shows as values the states that an empty column stands
// for, a task in the Trash and an agent never paused.
func TestEffectsState(t *testing.T) {
	sqliteOnly(t, "the verifier reads the state from the file")
	for _, c := range []struct {
		name   string
		change string // SQL run on the database first
		want   string // the error of State, or "" for none
	}{
		{"as it is", "", ""},
		{"a new column", "ALTER TABLE tasks ADD COLUMN colour TEXT", "column colour must be either mapped in tables or left out in bookkeeping, not neither"},
		{"a new table", "CREATE TABLE reminders (id TEXT PRIMARY KEY, at TEXT)", "table reminders: it is neither mapped"},
		{"a mapped column gone", "ALTER TABLE tasks DROP COLUMN closed_at", "tables maps column closed_at, which the table does not have"},
		{"a column left out gone", "ALTER TABLE tokens DROP COLUMN last_used_at", "bookkeeping leaves out tokens.last_used_at, which the database does not have"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			st, _, err := store.Open(t.Context(), dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			alice, _, err := st.MintToken(t.Context(), store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := st.MintToken(t.Context(), store.NewToken{Name: "runner", Kind: store.Agent, Scope: mcpeffect.Full}); err != nil {
				t.Fatal(err)
			}
			task, err := st.CreateTask(t.Context(), alice.Actor(), store.NewTask{Title: "Write the README"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.DeleteTask(t.Context(), alice.Actor(), task.ID); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if c.change != "" {
				db, err := sql.Open("sqlite", filepath.Join(dir, store.FileName))
				if err != nil {
					t.Fatal(err)
				}
				_, err = db.Exec(c.change)
				db.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			state, err := openState(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer state.close()
			got, err := state.State(t.Context())
			switch {
			case c.want != "":
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("State: err = %v, want one saying %q", err, c.want)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if rec := got["task/"+task.ID]; rec["in_trash"] != true || rec["trash_id"] == nil {
				t.Errorf("a task in the Trash: %v, want in_trash true", rec)
			}
			if rec, ok := got["agent/runner"]; !ok || rec["paused"] != false {
				t.Errorf("an agent never paused: %v (recorded %t), want paused false", rec, ok)
			}
		})
	}
}
