package main

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeCalls returns, for every write tool of the server, arguments that
// make a real change to the workspace of s when the caller may make it.
// own holds ids of the caller's own. A write tool missing here
// fails the tests that use it, so that a new tool cannot escape them.
func writeCalls(s seed, own owned) map[string]args {
	return map[string]args{
		"create_task":            {"title": "Fix the build", "project_id": s.project},
		"update_task":            {"task_id": s.task, "title": "Write a better README"},
		"delete_task":            {"task_id": s.task},
		"move_task":              {"task_id": s.task},
		"assign_task":            {"task_id": s.task, "assignee": "alice"},
		"claim_task":             {"task_id": s.other},
		"block_task":             {"task_id": s.other, "reason": "waiting for review"},
		"unblock_task":           {"task_id": s.blocked},
		"close_task":             {"task_id": s.other},
		"reopen_task":            {"task_id": s.awaiting},
		"add_task_dependency":    {"task_id": s.other, "depends_on": s.awaiting},
		"remove_task_dependency": {"task_id": s.task, "depends_on": s.other},
		"decompose_task":         {"task_id": s.task, "subtasks": []args{{"title": "Install"}}, "steps": []string{"Proofread"}},
		"add_step":               {"task_id": s.task, "text": "Add a badge"},
		"update_step":            {"step_id": s.step, "notes": "see the wiki"},
		"set_step_status":        {"step_id": s.step, "status": "done"},
		"reorder_steps":          {"task_id": s.task, "step_ids": []string{s.step2, s.step}},
		"delete_step":            {"step_id": s.step},
		"comment_on_task":        {"task_id": s.task, "body": "Done soon?"},
		"edit_comment":           {"comment_id": own.comment, "body": "Keep it very short."},
		"delete_comment":         {"comment_id": s.comment},
		"create_project":         {"name": "Next"},
		"update_project":         {"project_id": s.project, "auto_close": true},
		"archive_project":        {"project_id": s.project},
		"unarchive_project":      {"project_id": s.archived},
		"delete_project":         {"project_id": s.project},
		"create_label":           {"name": "bug"},
		"add_label_to_task":      {"task_id": s.other, "label_id": s.label},
		"remove_label_from_task": {"task_id": s.task, "label_id": s.label},
		"request_approval":       {"task_id": s.task, "step_id": s.step, "reason": "This step deletes the old docs."},
		"approve_task":           {"task_id": s.awaiting},
		"reject_task":            {"task_id": s.awaiting, "reason": "Not announced yet."},
		"restore_from_trash":     {"item_id": s.trashed},
		"create_token":           {"name": "helper", "kind": "agent", "scope": "read-only"},
		"revoke_token":           {"token_id": own.token},
		"start_run":              {"task_id": s.task, "agent": "runner", "instructions": "Proofread it."},
		"retry_run":              {"run_id": s.failedRun},
		"cancel_run":             {"run_id": s.run, "reason": "wrong branch"},
		"report_run_progress":    {"run_id": s.run, "message": "half way", "progress": 50},
		"complete_run": {"run_id": s.run, "outcome": "succeeded", "summary": "all green",
			"artifacts": []args{{"kind": "pull_request", "uri": "https://example.com/pr/1"}}},
		"pause_agent":          {"agent": "runner", "reason": "maintenance"},
		"resume_agent":         {"agent": "idle-bot"},
		"mark_digest_read":     {"digest_id": "day-2025-06-02"},
		"create_calendar_link": {"project_id": s.project},
		"rotate_calendar_link": {"link_id": own.calendarLink},
		"revoke_calendar_link": {"link_id": own.calendarLink},
		"schedule_task":        {"task_id": s.task, "start": "2025-06-03T14:00:00+02:00", "end": "2025-06-03T16:00:00+02:00"},
	}
}

// byAgent are the write tools that only the agent of a run may call on it:
// the tests call them as the agent "runner" instead of bob.
var byAgent = map[string]bool{"report_run_progress": true, "complete_run": true}

// writeTools returns the names of the tools the registry classifies as
// writes, with their effects.
func writeTools(t *testing.T, e *env) map[string]mcpeffect.Effect {
	t.Helper()
	writes := map[string]mcpeffect.Effect{}
	for name, effect := range e.registry.All() {
		if effect&mcpeffect.Write != 0 {
			writes[name] = effect
		}
	}
	if len(writes) == 0 {
		t.Fatal("the registry has no writes")
	}
	return writes
}

// scopeEnv is an env with a seeded workspace and callers, the human "bob"
// and the agent "runner", whose tokens have the scope under test.
type scopeEnv struct {
	*env
	seed   seed
	own    owned
	bob    string // bob's secret
	runner string // runner's secret
}

// caller returns the secret that calls the write tool name: runner's for
// the tools in byAgent, bob's for the others.
func (e *scopeEnv) caller(name string) string {
	if byAgent[name] {
		return e.runner
	}
	return e.bob
}

// owned holds the ids of what belongs to bob: only its owner may edit a
// comment, revoke a token, or rotate or revoke a calendar link.
type owned struct {
	token        string // another token of bob's
	comment      string
	calendarLink string
}

func newScopeEnv(t *testing.T, scope mcpeffect.Scope) *scopeEnv {
	t.Helper()
	f := loadFixture(t)
	dir := t.TempDir()
	db, err := os.ReadFile(filepath.Join(f.dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.FileName), db, 0o600); err != nil {
		t.Fatal(err)
	}
	return &scopeEnv{env: openEnv(t, dir), seed: f.seed, own: f.own, bob: f.bob[scope], runner: f.runner[scope]}
}

// fixtureData is the workspace of a scopeEnv, made once in dir and copied
// for each test: those tests make one change each on a fresh copy, and
// building the workspace through the tools each time would cost most of
// their time.
type fixtureData struct {
	dir    string
	seed   seed
	own    owned
	bob    map[mcpeffect.Scope]string // bob's secret for each scope
	runner map[mcpeffect.Scope]string // runner's secret for each scope
}

var fixture struct {
	once  sync.Once
	data  *fixtureData // nil if making it failed
	clean func()       // removes dir; called by TestMain
}

func loadFixture(t *testing.T) *fixtureData {
	t.Helper()
	fixture.once.Do(func() {
		dir, err := os.MkdirTemp("", "done-fixture-")
		if err != nil {
			t.Fatal(err)
		}
		fixture.clean = func() { os.RemoveAll(dir) }
		f := &fixtureData{dir: dir, bob: map[mcpeffect.Scope]string{}, runner: map[mcpeffect.Scope]string{}}
		e := openEnv(t, dir)
		f.seed = e.newSeed(e.connect(e.mint("alice", store.Human, mcpeffect.Full)))
		for _, s := range []mcpeffect.Scope{mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full} {
			f.bob[s] = e.mint("bob", store.Human, s)
			f.runner[s] = e.mint("runner", store.Agent, s)
		}
		k, spare, err := e.store.MintToken(t.Context(), store.NewToken{Name: "bob", Kind: store.Human, Scope: mcpeffect.Full})
		if err != nil {
			t.Fatal(err)
		}
		f.own.token = k.ID
		bob := e.connect(spare)
		f.own.comment = must[store.Comment](t, bob, "comment_on_task", args{"task_id": f.seed.task, "body": "I can help."}).ID
		f.own.calendarLink = must[calendarLinkResult](t, bob, "create_calendar_link", nil).Link.ID
		// Closing the store folds the write-ahead log into the database
		// file, which is then the whole database.
		if err := e.store.Close(); err != nil {
			t.Fatal(err)
		}
		fixture.data = f
	})
	if fixture.data == nil {
		t.Fatal("making the fixture failed")
	}
	return fixture.data
}

// TestReadOnlySweep has a read-only token call every write tool over
// HTTP: each call is refused by the scope check, and the database is the
// same, byte for byte, afterwards.
func TestReadOnlySweep(t *testing.T) {
	e := newScopeEnv(t, mcpeffect.ReadOnly)
	sessions := map[string]*mcp.ClientSession{e.bob: e.connectHTTP(e.bob), e.runner: e.connectHTTP(e.runner)}
	calls := writeCalls(e.seed, e.own)
	before := e.dump()
	for name := range writeTools(t, e.env) {
		t.Run(name, func(t *testing.T) {
			a, ok := calls[name]
			if !ok {
				t.Fatalf("no arguments for write tool %s in writeCalls", name)
			}
			_, err := sessions[e.caller(name)].CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: a})
			d, ok := mcpeffect.AsDenial(err)
			if !ok {
				t.Fatalf("%s by a read-only token: err = %v, want a refusal by the scope check", name, err)
			}
			if d.Tool != name || d.Granted != mcpeffect.ReadOnly || d.Required < mcpeffect.NonDestructive {
				t.Errorf("%s: denial %+v", name, d)
			}
		})
	}
	if after := e.dump(); after != before {
		t.Errorf("refused calls changed the database:\n%s", lineDiff(before, after))
	}
}

// TestWritesByScope calls each write tool with the arguments of
// writeCalls on a fresh workspace, with a non-destructive and with a full
// token. A tool the scope allows must make its change; a tool it does not
// must be refused and change nothing. The full scope succeeding shows that
// the arguments are real, so that the refusals of TestReadOnlySweep are
// refusals of real changes.
func TestWritesByScope(t *testing.T) {
	for _, scope := range []mcpeffect.Scope{mcpeffect.NonDestructive, mcpeffect.Full} {
		t.Run(scope.String(), func(t *testing.T) {
			for name, effect := range writeTools(t, newEnv(t)) {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					e := newScopeEnv(t, scope)
					cs := e.connect(e.caller(name))
					a, ok := writeCalls(e.seed, e.own)[name]
					if !ok {
						t.Fatalf("no arguments for write tool %s in writeCalls", name)
					}
					e.clock.Advance(1)
					before := e.dump()
					_, err := call[map[string]any](t, cs, name, a)
					after := e.dump()
					if scope.Allows(effect) {
						if err != nil {
							t.Fatalf("%s with scope %s: %v", name, scope, err)
						}
						if after == before {
							t.Errorf("%s with scope %s changed nothing: the arguments of writeCalls make no change", name, scope)
						}
						return
					}
					if _, ok := mcpeffect.AsDenial(err); !ok {
						t.Fatalf("%s (%s) with scope %s: err = %v, want a refusal", name, effect, scope, err)
					}
					if after != before {
						t.Errorf("a refused %s changed the database:\n%s", name, lineDiff(before, after))
					}
				})
			}
		})
	}
}

// lineDiff returns the lines that are only in a or only in b.
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range splitLines(s) {
			m[l] = true
		}
		return m
	}
	ina, inb := in(a), in(b)
	var out []byte
	for _, l := range splitLines(a) {
		if !inb[l] {
			out = append(out, "- "+l+"\n"...)
		}
	}
	for _, l := range splitLines(b) {
		if !ina[l] {
			out = append(out, "+ "+l+"\n"...)
		}
	}
	return string(out)
}
