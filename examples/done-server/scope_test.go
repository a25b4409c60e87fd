package main

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

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
		"approve_task":           {"task_id": s.awaiting, "approval_id": s.approval},
		"reject_task":            {"task_id": s.awaiting, "approval_id": s.approval, "reason": "Not announced yet."},
		"restore_from_trash":     {"item_id": s.trashed},
		"create_token":           {"name": "helper", "kind": "agent", "scope": "read-only"},
		"revoke_token":           {"token_id": own.token},
		"start_run":              {"task_id": s.task, "agent": "runner", "instructions": "Proofread it."},
		"retry_run":              {"run_id": s.failedRun},
		"cancel_run":             {"run_id": s.run, "reason": "wrong branch"},
		"report_run_progress":    {"run_id": s.run, "message": "half way", "progress": 50},
		"complete_run": {"run_id": s.run, "outcome": "succeeded", "summary": "all green",
			"artifacts": []args{{"kind": "pull_request", "uri": "https://example.com/pr/1"}}},
		"pause_agent":              {"agent": "runner", "reason": "maintenance"},
		"resume_agent":             {"agent": "idle-bot"},
		"mark_digest_read":         {"digest_id": "day-2025-06-02"},
		"create_calendar_link":     {"project_id": s.project},
		"rotate_calendar_link":     {"link_id": own.calendarLink},
		"revoke_calendar_link":     {"link_id": own.calendarLink},
		"schedule_task":            {"task_id": s.task, "start": "2025-06-03T14:00:00+02:00", "end": "2025-06-03T16:00:00+02:00"},
		"save_context":             {"title": "Release notes", "text": "What changed in 1.0.", "folder": "notes"},
		"attach_context_to_task":   {"task_id": s.other, "ref": s.contextRef, "title": "Plan"},
		"detach_context_from_task": {"task_id": s.task, "ref": s.contextRef},
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
// and the agent "runner", with a token of each scope.
type scopeEnv struct {
	*env
	seed   seed
	own    owned
	bob    map[mcpeffect.Scope]string // bob's secret for each scope
	runner map[mcpeffect.Scope]string // runner's secret for each scope
}

// caller returns the secret of the given scope that calls the write tool
// name: runner's for the tools in byAgent, bob's for the others.
func (e *scopeEnv) caller(name string, scope mcpeffect.Scope) string {
	if byAgent[name] {
		return e.runner[scope]
	}
	return e.bob[scope]
}

// owned holds the ids of what belongs to bob: only its owner may edit a
// comment, revoke a token, or rotate or revoke a calendar link.
type owned struct {
	token        string // another token of bob's
	comment      string
	calendarLink string
}

func newScopeEnv(t *testing.T) *scopeEnv {
	t.Helper()
	f := loadFixture(t)
	dir := t.TempDir()
	copyStore(t, f.dir, dir)
	return &scopeEnv{env: openEnv(t, dir), seed: f.seed, own: f.own, bob: f.bob, runner: f.runner}
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
		lastingStore(t, dir)
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
	e := newScopeEnv(t)
	ro := mcpeffect.ReadOnly
	sessions := map[string]*mcp.ClientSession{e.bob[ro]: e.connectHTTP(e.bob[ro]), e.runner[ro]: e.connectHTTP(e.runner[ro])}
	calls := writeCalls(e.seed, e.own)
	before := e.dump()
	for name := range writeTools(t, e.env) {
		t.Run(name, func(t *testing.T) {
			a, ok := calls[name]
			if !ok {
				t.Fatalf("no arguments for write tool %s in writeCalls", name)
			}
			_, err := sessions[e.caller(name, ro)].CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: a})
			d, ok := mcpeffect.AsDeniedError(err)
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

// TestWritesByScope calls each write tool, with the arguments of
// writeCalls, on a fresh workspace, first with the scope just below the
// least one that may call it, then with that one. The first call must be
// refused and change nothing (a destructive write with a non-destructive
// token; the read-only token is TestReadOnlySweep's), the second must
// make its change: which also shows that the arguments are real, so that
// the refusals are refusals of real changes.
//
// It is also the test of convergence: each idempotent write that made its
// change is called again with the same arguments, and must answer the
// same and change nothing, not even the activity log. The checks share
// the workspace because making one costs most of the time of this test.
func TestWritesByScope(t *testing.T) {
	for name, effect := range writeTools(t, newEnv(t)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newScopeEnv(t)
			a, ok := writeCalls(e.seed, e.own)[name]
			if !ok {
				t.Fatalf("no arguments for write tool %s in writeCalls", name)
			}
			required, _ := e.registry.Required(name)
			if below := required - 1; below > mcpeffect.ReadOnly {
				cs := e.connect(e.caller(name, below))
				before := e.dump()
				_, err := call[map[string]any](t, cs, name, a)
				if _, ok := mcpeffect.AsDeniedError(err); !ok {
					t.Fatalf("%s (%s) with scope %s: err = %v, want a refusal", name, effect, below, err)
				}
				if after := e.dump(); after != before {
					t.Errorf("a refused %s changed the database:\n%s", name, lineDiff(before, after))
				}
			}

			cs := e.connect(e.caller(name, required))
			e.clock.Advance(1)
			before := e.dump()
			first, err := call[map[string]any](t, cs, name, a)
			if err != nil {
				t.Fatalf("%s with scope %s: %v", name, required, err)
			}
			changed := e.dump()
			if changed == before {
				t.Errorf("%s with scope %s changed nothing: the arguments of writeCalls make no change", name, required)
			}
			if effect&mcpeffect.Idempotent != mcpeffect.Idempotent {
				return
			}
			// Within the same minute, so that the token's last use stays;
			// any timestamp a repeated call wrote would differ.
			e.clock.Advance(time.Second)
			second, err := call[map[string]any](t, cs, name, a)
			if after := e.dump(); after != changed {
				t.Errorf("%s, idempotent, changed the database when called again:\n%s", name, lineDiff(changed, after))
			}
			if refused := refusedWhenRepeated[name]; refused != "" {
				if !errors.Is(err, errToolFailed) || !strings.Contains(err.Error(), refused) {
					t.Errorf("%s, idempotent by refusing a repeat, called again: err = %v, want a tool error saying %q", name, err, refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s, idempotent, called again: %v", name, err)
			}
			if a, b := mustJSON(t, first), mustJSON(t, second); a != b && name != "restore_from_trash" {
				t.Errorf("%s, idempotent, answered differently when called again:\n%s\n%s", name, a, b)
			}
		})
	}
}

// refusedWhenRepeated are the idempotent writes that converge by refusing
// the same call again, rather than by answering it as the first: what the
// first made (a label of that name, a link rotated) stands in the way of
// another, and the refusal says so, as this text.
var refusedWhenRepeated = map[string]string{
	"create_label":         "already exists",
	"rotate_calendar_link": "already rotated into",
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
