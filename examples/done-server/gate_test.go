package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAutoCloseIsAHumanDecision tries every way an agent could make a task
// skip the approval gate by making it, or the default it takes,
// auto-close: each is refused, and changes nothing.
func TestAutoCloseIsAHumanDecision(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.NonDestructive))
	admin := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	agent := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	plain := must[store.Project](t, alice, "create_project", args{"name": "Plain"})
	task := must[store.Task](t, alice, "create_task", args{"title": "Gated", "project_id": plain.ID})

	for _, c := range []struct {
		name, tool string
		args       args
	}{
		{"create_project auto_close", "create_project", args{"name": "Fast lane", "auto_close": true}},
		{"update_project auto_close", "update_project", args{"project_id": plain.ID, "auto_close": true}},
		{"create_task auto_close", "create_task", args{"title": "Mine", "auto_close": true}},
		{"create_task auto_close in a project", "create_task", args{"title": "Mine", "project_id": plain.ID, "auto_close": true}},
		{"create_task auto_close under a parent", "create_task", args{"title": "Mine", "parent_id": task.ID, "auto_close": true}},
		{"update_task auto_close", "update_task", args{"task_id": task.ID, "auto_close": true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.dump()
			_, err := call[map[string]any](t, agent, c.tool, c.args)
			if !errors.Is(err, errToolFailed) || !strings.Contains(err.Error(), "only a human may make a") {
				t.Errorf("%s by an agent: err = %v, want a refusal saying only a human may", c.tool, err)
			}
			if after := e.dump(); after != before {
				t.Errorf("the refused %s changed the database:\n%s", c.tool, lineDiff(before, after))
			}
		})
	}

	// What a person decided, agents inherit, and the task names that
	// person; turning auto-close off only puts the gate back, so an agent
	// may.
	fast := must[store.Project](t, alice, "create_project", args{"name": "Fast lane", "auto_close": true})
	if !fast.AutoClose || fast.AutoCloseBy != "alice" {
		t.Fatalf("a person's auto-close project: %+v", fast)
	}
	inherited := must[store.Task](t, agent, "create_task", args{"title": "Tidy", "project_id": fast.ID})
	if !inherited.AutoClose || inherited.AutoCloseBy != "alice" {
		t.Errorf("an agent's task in alice's auto-close project: %+v, want auto-close by alice", inherited)
	}
	sub := must[store.Decomposition](t, agent, "decompose_task", args{"task_id": inherited.ID, "subtasks": []args{{"title": "part"}}}).Subtasks[0]
	if !sub.AutoClose || sub.AutoCloseBy != "alice" {
		t.Errorf("an agent's subtask of alice's auto-close task: %+v", sub)
	}
	if got := must[store.Task](t, agent, "update_task", args{"task_id": inherited.ID, "auto_close": false}); got.AutoClose || got.AutoCloseBy != "" {
		t.Errorf("an agent turning auto-close off: %+v", got)
	}
	if got := must[store.Task](t, agent, "create_task", args{"title": "Gated too", "project_id": fast.ID, "auto_close": false}); got.AutoClose {
		t.Errorf("an agent's task with auto_close false: %+v", got)
	}
	if got := must[store.Project](t, admin, "update_project", args{"project_id": plain.ID, "auto_close": true}); got.AutoCloseBy != "alice" {
		t.Errorf("a person making a project auto-close: %+v", got)
	}
}

// TestCloseRequest shows how a caller that may only add asks for a task
// to be closed: close_task changes the task's status, so a non-destructive
// token may not call it, but request_approval with kind close only asks,
// and the task is done once a person approves.
func TestCloseRequest(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	helper := e.connect(e.mint("helper", store.Agent, mcpeffect.NonDestructive))
	builder := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	task := must[store.Task](t, helper, "create_task", args{"title": "Write the changelog"})

	if _, err := call[store.Task](t, helper, "close_task", args{"task_id": task.ID}); err == nil {
		t.Fatal("a non-destructive token closed a task")
	} else if d, ok := mcpeffect.AsDeniedError(err); !ok || d.Required != mcpeffect.Full {
		t.Fatalf("close_task by a non-destructive token: err = %v, want a refusal by the scope check", err)
	}
	before := e.dumpData()
	req := must[store.Approval](t, helper, "request_approval", args{"task_id": task.ID, "kind": "close", "reason": "The changelog lists every merged change."})
	if req.Kind != store.ApprovalClose || req.Status != "pending" || req.RequestedBy != "helper" {
		t.Fatalf("request_approval kind close: %+v", req)
	}
	// Asking adds a request and changes nothing that was there.
	for line := range strings.Lines(lineDiff(before, e.dumpData())) {
		if !strings.HasPrefix(line, "+ ") {
			t.Errorf("request_approval changed what existed: %s", line)
		}
	}
	if got := must[store.TaskDetail](t, alice, "get_task", args{"task_id": task.ID}); got.Status != store.StatusOpen || got.Approval == nil || got.Approval.ID != req.ID {
		t.Errorf("the task after a close request: %+v", got)
	}
	mustFail(t, helper, "request_approval", args{"task_id": task.ID, "kind": "close", "reason": "again"}, "already has close request")
	mustFail(t, helper, "request_approval", args{"task_id": task.ID, "kind": "close", "step_id": task.ID, "reason": "x"}, "leave step_id out")

	// close_task by a full token takes the pending request rather than
	// making a second one.
	if got := must[store.Task](t, builder, "close_task", args{"task_id": task.ID}); got.Status != store.StatusAwaitingApproval {
		t.Errorf("close_task with a close request pending: %+v", got)
	}
	if pending := must[approvalsResult](t, alice, "list_pending_approvals", nil).Approvals; len(pending) != 1 || pending[0].ID != req.ID {
		t.Errorf("pending approvals: %+v, want only %s", pending, req.ID)
	}
	dec := must[store.Verdict](t, alice, "approve_task", args{"task_id": task.ID, "approval_id": req.ID})
	if dec.Task.Status != store.StatusDone || dec.Approval.DecidedBy != "alice" {
		t.Errorf("approving the close request: %+v", dec)
	}

	// A close request on an open task, approved: done without close_task.
	other := must[store.Task](t, helper, "create_task", args{"title": "Tag it"})
	req = must[store.Approval](t, helper, "request_approval", args{"task_id": other.ID, "kind": "close", "reason": "tagged"})
	if dec := must[store.Verdict](t, alice, "approve_task", args{"task_id": other.ID, "approval_id": req.ID}); dec.Task.Status != store.StatusDone {
		t.Errorf("approving a close request of an open task: %+v", dec)
	}
	// One blocked since it asked cannot be approved until unblocked.
	third := must[store.Task](t, helper, "create_task", args{"title": "Ship it"})
	req = must[store.Approval](t, helper, "request_approval", args{"task_id": third.ID, "kind": "close", "reason": "shipped"})
	must[store.Task](t, builder, "block_task", args{"task_id": third.ID, "reason": "the build is red"})
	mustFail(t, alice, "approve_task", args{"task_id": third.ID, "approval_id": req.ID}, "is blocked")
	// Rejecting it leaves the task as it is: it never awaited approval.
	if dec := must[store.Verdict](t, alice, "reject_task", args{"task_id": third.ID, "approval_id": req.ID, "reason": "red"}); dec.Task.Status != store.StatusBlocked {
		t.Errorf("rejecting the close request of a blocked task: %+v", dec)
	}
}

// TestApproveBindsToReviewedRequest shows that a decision is bound to the
// request the person reviewed: once it is replaced, deciding it is
// refused with the id of the request in its place, and nothing changes.
func TestApproveBindsToReviewedRequest(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	agent := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	task := must[store.Task](t, agent, "create_task", args{"title": "Migrate the data"})
	other := must[store.Approval](t, agent, "request_approval", args{"task_id": task.ID, "reason": "May I drop the old table?"})
	must[store.Task](t, agent, "close_task", args{"task_id": task.ID})
	// get_task shows the close request, even with an older request of
	// another kind pending.
	pending := must[store.TaskDetail](t, alice, "get_task", args{"task_id": task.ID}).Approval
	if pending == nil || pending.Kind != store.ApprovalClose || pending.ID == other.ID {
		t.Fatalf("get_task of a task awaiting approval: approval %+v, want its close request", pending)
	}
	reviewed := pending.ID

	// While alice reads the evidence, the agent reopens and closes again.
	must[store.Task](t, agent, "reopen_task", args{"task_id": task.ID})
	must[store.Task](t, agent, "close_task", args{"task_id": task.ID})
	current := must[store.TaskDetail](t, alice, "get_task", args{"task_id": task.ID}).Approval.ID
	if current == reviewed {
		t.Fatal("closing again kept the withdrawn request")
	}
	for _, c := range []struct {
		name, tool string
		args       args
		want       string
	}{
		{"approve the replaced request", "approve_task", args{"task_id": task.ID, "approval_id": reviewed},
			fmt.Sprintf("now has close request %q in its place", current)},
		{"reject the replaced request", "reject_task", args{"task_id": task.ID, "approval_id": reviewed, "reason": "no"},
			fmt.Sprintf("now has close request %q in its place", current)},
		{"approve another task's request", "approve_task", args{"task_id": must[store.Task](t, agent, "create_task", args{"title": "x"}).ID, "approval_id": current},
			"is about task"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.dump()
			mustFail(t, alice, c.tool, c.args, c.want)
			if after := e.dump(); after != before {
				t.Errorf("a refused %s changed the database:\n%s", c.tool, lineDiff(before, after))
			}
		})
	}
	// Without the request's id there is no decision at all.
	if _, err := call[store.Verdict](t, alice, "approve_task", args{"task_id": task.ID}); err == nil {
		t.Error("approve_task without approval_id succeeded")
	}
	if dec := must[store.Verdict](t, alice, "approve_task", args{"task_id": task.ID, "approval_id": current}); dec.Task.Status != store.StatusDone {
		t.Errorf("approving the current request: %+v", dec)
	}
}

// gateActor is one caller of TestGateInvariant.
type gateActor struct {
	name  string
	human bool
	cs    *mcp.ClientSession
}

// gateWorld is what TestGateInvariant's callers know of the workspace:
// the ids they have seen, to make calls about.
type gateWorld struct {
	t                                 *testing.T
	rand                              *rand.Rand
	projects, tasks, runs, approvals  []string
	steps                             []string
	closeCalls, approveCalls, refused int
}

func (w *gateWorld) pick(ids []string) string {
	if len(ids) == 0 {
		return "00000000-0000-7000-8000-000000000000"
	}
	return ids[w.rand.IntN(len(ids))]
}

func (w *gateWorld) coin() bool { return w.rand.IntN(2) == 0 }

// gateCalls are the calls TestGateInvariant makes at random, each as
// often as its weight says: every tool that changes a task, its project,
// its approvals or its runs, with arguments drawn from what the callers
// have seen. A caller that is not allowed one gets an error, which is part
// of the test too.
var gateCalls = []struct {
	weight int
	call   func(w *gateWorld, a *gateActor) (string, args)
}{
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		return "create_project", args{"name": "p", "auto_close": w.coin()}
	}},
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		return "update_project", args{"project_id": w.pick(w.projects), "auto_close": w.coin()}
	}},
	{8, func(w *gateWorld, _ *gateActor) (string, args) {
		a := args{"title": "t"}
		if len(w.projects) > 0 && w.rand.IntN(3) != 0 {
			a["project_id"] = w.pick(w.projects)
		}
		if len(w.tasks) > 0 && w.rand.IntN(5) == 0 {
			a["parent_id"] = w.pick(w.tasks)
		}
		if w.coin() {
			a["auto_close"] = w.coin()
		}
		return "create_task", a
	}},
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		return "update_task", args{"task_id": w.pick(w.tasks), "auto_close": w.coin()}
	}},
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		return "decompose_task", args{"task_id": w.pick(w.tasks), "subtasks": []args{{"title": "s"}}, "steps": []string{"step"}}
	}},
	{8, func(w *gateWorld, _ *gateActor) (string, args) {
		w.closeCalls++
		return "close_task", args{"task_id": w.pick(w.tasks)}
	}},
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		return "reopen_task", args{"task_id": w.pick(w.tasks)}
	}},
	{3, func(w *gateWorld, _ *gateActor) (string, args) {
		kind := "other"
		if w.rand.IntN(3) != 0 {
			kind = "close"
		}
		return "request_approval", args{"task_id": w.pick(w.tasks), "kind": kind, "reason": "r"}
	}},
	{8, func(w *gateWorld, a *gateActor) (string, args) {
		// Approving what waits, as a person reviewing the list does;
		// or, one time in four, a request seen earlier, maybe replaced.
		if w.rand.IntN(4) != 0 {
			res, err := call[approvalsResult](w.t, a.cs, "list_pending_approvals", nil)
			if err == nil && len(res.Approvals) > 0 {
				p := res.Approvals[w.rand.IntN(len(res.Approvals))]
				w.approveCalls++
				return "approve_task", args{"task_id": p.TaskID, "approval_id": p.ID}
			}
		}
		return "approve_task", args{"task_id": w.pick(w.tasks), "approval_id": w.pick(w.approvals)}
	}},
	{1, func(w *gateWorld, _ *gateActor) (string, args) {
		return "reject_task", args{"task_id": w.pick(w.tasks), "approval_id": w.pick(w.approvals), "reason": "no"}
	}},
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		return "move_task", args{"task_id": w.pick(w.tasks), "project_id": w.pick(w.projects)}
	}},
	{1, func(w *gateWorld, _ *gateActor) (string, args) {
		return "delete_task", args{"task_id": w.pick(w.tasks)}
	}},
	{1, func(w *gateWorld, _ *gateActor) (string, args) {
		return "delete_project", args{"project_id": w.pick(w.projects)}
	}},
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		ids := w.tasks
		if w.coin() {
			ids = w.projects
		}
		return "restore_from_trash", args{"item_id": w.pick(ids)}
	}},
	{1, func(w *gateWorld, _ *gateActor) (string, args) {
		return "block_task", args{"task_id": w.pick(w.tasks), "reason": "r"}
	}},
	{1, func(w *gateWorld, _ *gateActor) (string, args) {
		return "unblock_task", args{"task_id": w.pick(w.tasks)}
	}},
	{1, func(w *gateWorld, _ *gateActor) (string, args) {
		return "add_task_dependency", args{"task_id": w.pick(w.tasks), "depends_on": w.pick(w.tasks)}
	}},
	{1, func(w *gateWorld, _ *gateActor) (string, args) {
		return "archive_project", args{"project_id": w.pick(w.projects)}
	}},
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		return "unarchive_project", args{"project_id": w.pick(w.projects)}
	}},
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		return "start_run", args{"task_id": w.pick(w.tasks), "agent": "builder"}
	}},
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		return "claim_task", args{"task_id": w.pick(w.tasks)}
	}},
	{2, func(w *gateWorld, _ *gateActor) (string, args) {
		outcome := "succeeded"
		if w.coin() {
			outcome = "failed"
		}
		return "complete_run", args{"run_id": w.pick(w.runs), "outcome": outcome}
	}},
	{1, func(w *gateWorld, _ *gateActor) (string, args) {
		return "retry_run", args{"run_id": w.pick(w.runs)}
	}},
	{1, func(w *gateWorld, _ *gateActor) (string, args) {
		return "set_step_status", args{"step_id": w.pick(w.steps), "status": "done"}
	}},
}

// next draws a call from gateCalls.
func (w *gateWorld) next(a *gateActor) (string, args) {
	total := 0
	for _, c := range gateCalls {
		total += c.weight
	}
	n := w.rand.IntN(total)
	for _, c := range gateCalls {
		if n -= c.weight; n < 0 {
			return c.call(w, a)
		}
	}
	panic("unreachable")
}

// gateSchema records, from inside the database, every change that can
// open the approval gate, with the step of the test that made it (the
// value of gate_step): triggers see every write whatever code path made
// it, so the check below does not trust the store's own bookkeeping.
const gateSchema = `
CREATE TABLE gate_step (step INTEGER NOT NULL);
INSERT INTO gate_step VALUES (0);
CREATE TABLE gate_events (
	seq INTEGER PRIMARY KEY, step INTEGER NOT NULL, what TEXT NOT NULL, id TEXT NOT NULL,
	auto_close INTEGER NOT NULL DEFAULT 0, project_id TEXT NOT NULL DEFAULT '', parent_id TEXT NOT NULL DEFAULT '', kind TEXT NOT NULL DEFAULT '');
CREATE TRIGGER gate_project_insert AFTER INSERT ON projects BEGIN
	INSERT INTO gate_events (step, what, id, auto_close) SELECT step, 'project', NEW.id, NEW.auto_close FROM gate_step;
END;
CREATE TRIGGER gate_project_auto_close AFTER UPDATE OF auto_close ON projects WHEN NEW.auto_close IS NOT OLD.auto_close BEGIN
	INSERT INTO gate_events (step, what, id, auto_close) SELECT step, 'project', NEW.id, NEW.auto_close FROM gate_step;
END;
CREATE TRIGGER gate_task_insert AFTER INSERT ON tasks BEGIN
	INSERT INTO gate_events (step, what, id, auto_close, project_id, parent_id)
		SELECT step, 'task', NEW.id, NEW.auto_close, COALESCE(NEW.project_id, ''), COALESCE(NEW.parent_id, '') FROM gate_step;
	INSERT INTO gate_events (step, what, id) SELECT step, 'done', NEW.id FROM gate_step WHERE NEW.status = 'done';
END;
CREATE TRIGGER gate_task_auto_close AFTER UPDATE OF auto_close ON tasks WHEN NEW.auto_close IS NOT OLD.auto_close BEGIN
	INSERT INTO gate_events (step, what, id, auto_close) SELECT step, 'task_auto_close', NEW.id, NEW.auto_close FROM gate_step;
END;
CREATE TRIGGER gate_task_done AFTER UPDATE OF status ON tasks WHEN NEW.status = 'done' AND OLD.status <> 'done' BEGIN
	INSERT INTO gate_events (step, what, id) SELECT step, 'done', NEW.id FROM gate_step;
END;
CREATE TRIGGER gate_approved AFTER UPDATE OF status ON approvals WHEN NEW.status = 'approved' AND OLD.status <> 'approved' BEGIN
	INSERT INTO gate_events (step, what, id, kind) SELECT step, 'approved', NEW.task_id, NEW.kind FROM gate_step;
END;
`

// gateSchemaPostgres is gateSchema for PostgreSQL, whose triggers run
// functions.
const gateSchemaPostgres = `
CREATE TABLE gate_step (step BIGINT NOT NULL);
INSERT INTO gate_step VALUES (0);
CREATE TABLE gate_events (
	seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, step BIGINT NOT NULL, what TEXT NOT NULL, id TEXT NOT NULL,
	auto_close BIGINT NOT NULL DEFAULT 0, project_id TEXT NOT NULL DEFAULT '', parent_id TEXT NOT NULL DEFAULT '', kind TEXT NOT NULL DEFAULT '');
CREATE FUNCTION gate_project() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
	IF TG_OP = 'INSERT' OR NEW.auto_close IS DISTINCT FROM OLD.auto_close THEN
		INSERT INTO gate_events (step, what, id, auto_close) SELECT step, 'project', NEW.id, NEW.auto_close FROM gate_step;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER gate_project AFTER INSERT OR UPDATE ON projects FOR EACH ROW EXECUTE FUNCTION gate_project();
CREATE FUNCTION gate_task() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO gate_events (step, what, id, auto_close, project_id, parent_id)
			SELECT step, 'task', NEW.id, NEW.auto_close, COALESCE(NEW.project_id, ''), COALESCE(NEW.parent_id, '') FROM gate_step;
		IF NEW.status = 'done' THEN
			INSERT INTO gate_events (step, what, id) SELECT step, 'done', NEW.id FROM gate_step;
		END IF;
		RETURN NULL;
	END IF;
	IF NEW.auto_close IS DISTINCT FROM OLD.auto_close THEN
		INSERT INTO gate_events (step, what, id, auto_close) SELECT step, 'task_auto_close', NEW.id, NEW.auto_close FROM gate_step;
	END IF;
	IF NEW.status = 'done' AND OLD.status <> 'done' THEN
		INSERT INTO gate_events (step, what, id) SELECT step, 'done', NEW.id FROM gate_step;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER gate_task AFTER INSERT OR UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION gate_task();
CREATE FUNCTION gate_approval() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
	IF NEW.status = 'approved' AND OLD.status <> 'approved' THEN
		INSERT INTO gate_events (step, what, id, kind) SELECT step, 'approved', NEW.task_id, NEW.kind FROM gate_step;
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER gate_approval AFTER UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION gate_approval();
`

// TestGateInvariant holds Done to the rule of its approval gate: no task
// reaches done without a human's approval unless a human made it
// auto-close. Two people and two agents, of full and non-destructive
// scope, make random calls over the protocol: every tool that touches
// tasks, projects, approvals and runs, including what only people may do.
// Triggers in the database record each task reaching done, each approval,
// and each auto_close set on a task or a project, with the call that did
// it; afterwards the record is replayed, and each time a task became done
// it must have been in a call where a person approved its close request,
// or while auto-close by a person's decision: set by a person on the task,
// or inherited, unchanged, from a project or parent task a person set.
func TestGateInvariant(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			runGateInvariant(t, seed, 400)
		})
	}
}

func runGateInvariant(t *testing.T, seed uint64, steps int) {
	e := newEnv(t)
	actors := []*gateActor{
		{name: "alice", human: true}, {name: "carol", human: true},
		{name: "builder"}, {name: "helper"},
	}
	scopes := []mcpeffect.Scope{mcpeffect.Full, mcpeffect.NonDestructive, mcpeffect.Full, mcpeffect.NonDestructive}
	for i, a := range actors {
		kind := store.Agent
		if a.human {
			kind = store.Human
		}
		a.cs = e.connect(e.mint(a.name, kind, scopes[i]))
	}

	// The triggers, and the step of the test, on a connection of the
	// test's own, beside the server's.
	schema, setStep := gateSchema, `UPDATE gate_step SET step = ?`
	driver, dsn := "sqlite", "file:"+filepath.Join(e.dir, store.FileName)+"?_pragma=busy_timeout(10000)"
	if e.store.Shared() {
		schema, setStep = gateSchemaPostgres, `UPDATE gate_step SET step = $1`
		driver, dsn = "pgx", storeURL(t, e.dir)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}

	w := &gateWorld{t: t, rand: rand.New(rand.NewPCG(seed, seed))}
	history := []gateStep{{}}
	for step := 1; step <= steps; step++ {
		a := actors[w.rand.IntN(len(actors))]
		tool, in := w.next(a)
		history = append(history, gateStep{a, tool, in})
		if _, err := db.Exec(setStep, step); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(1e9)
		res, err := a.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: in})
		if err != nil {
			if _, ok := mcpeffect.AsDeniedError(err); !ok && !strings.Contains(err.Error(), "validating") {
				t.Fatalf("step %d, %s by %s: %v", step, tool, a.name, err)
			}
			w.refused++
			continue
		}
		if res.IsError {
			if msg := text(res); strings.Contains(msg, "internal error") {
				t.Fatalf("step %d, %s(%v) by %s: %s", step, tool, in, a.name, msg)
			}
			w.refused++
			if testing.Verbose() {
				t.Logf("step %d %s by %s: %s", step, tool, a.name, text(res))
			}
			continue
		}
		w.learn(tool, res)
	}

	done, byApproval, byAutoClose := checkGateInvariant(t, db, history)
	t.Logf("%d steps: %d refused; %d tasks became done, %d by a person's approval, %d auto-close; %d close_task and %d approvals of pending requests tried",
		steps, w.refused, done, byApproval, byAutoClose, w.closeCalls, w.approveCalls)
	// A run in which the gate never opened would prove nothing.
	if byApproval == 0 || byAutoClose == 0 {
		t.Errorf("the run made %d tasks done by approval and %d by auto-close: too few to test the gate; change the seed or the steps", byApproval, byAutoClose)
	}
}

// gateStep is one call of the callers of the approval gate: who made it,
// the tool and its arguments. A step's number is its index in the
// history of a run, which the triggers of gateSchema record with each
// change (step 0 is before the first call).
type gateStep struct {
	actor *gateActor
	tool  string
	args  args
}

// checkGateInvariant replays what the triggers of gateSchema (or
// gateSchemaPostgres) recorded in db, each change with the step of
// history that made it, and fails t for each task that became done
// without a person's approval in that step, unless it was auto-close by
// a person's decision; and where the store's own account disagrees with
// the record. It returns how many times a task became done, and of
// those, how many by a person's approval and how many auto-close.
func checkGateInvariant(t *testing.T, db *sql.DB, history []gateStep) (done, byApproval, byAutoClose int) {
	t.Helper()
	// The replay: what each task and project's auto_close is, and whether
	// a person decided it.
	type setting struct{ on, byHuman bool }
	projects, tasks := map[string]setting{}, map[string]setting{}
	type event struct {
		step                            int
		what, id, project, parent, kind string
		autoClose                       bool
	}
	var events []event
	rows, err := db.Query(`SELECT step, what, id, auto_close, project_id, parent_id, kind FROM gate_events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ev event
		if err := rows.Scan(&ev.step, &ev.what, &ev.id, &ev.autoClose, &ev.project, &ev.parent, &ev.kind); err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	// A person approved the close request of a task in a step, before or
	// after the task's row changed: the order of the writes within a call
	// is the store's business.
	type taskStep struct {
		task string
		step int
	}
	approved := map[taskStep]bool{}
	for _, ev := range events {
		if a := history[ev.step].actor; ev.what == "approved" && ev.kind == string(store.ApprovalClose) && a != nil && a.human {
			approved[taskStep{ev.id, ev.step}] = true
		}
	}
	for _, ev := range events {
		by := history[ev.step]
		human := by.actor != nil && by.actor.human
		switch ev.what {
		case "project":
			projects[ev.id] = setting{ev.autoClose, human}
		case "task_auto_close":
			tasks[ev.id] = setting{ev.autoClose, human}
		case "task":
			from := setting{}
			switch {
			case ev.parent != "":
				from = tasks[ev.parent]
			case ev.project != "":
				from = projects[ev.project]
			}
			if ev.autoClose != from.on {
				// Not what it would inherit: the caller chose it.
				from = setting{ev.autoClose, human}
			}
			tasks[ev.id] = from
		case "done":
			done++
			switch s := tasks[ev.id]; {
			case approved[taskStep{ev.id, ev.step}]:
				byApproval++
			case s.on && s.byHuman:
				byAutoClose++
			default:
				name := "no one" // step 0, before the first call
				if by.actor != nil {
					name = by.actor.name
				}
				t.Errorf("task %s became done in step %d, %s(%v) by %s, without a person's approval, and its auto-close (%t) was not a person's decision",
					ev.id, ev.step, by.tool, by.args, name, s.on)
			}
		}
	}

	// The store's own account agrees: every task done now was seen
	// becoming done, and every auto-close task names a person, the one
	// the replay found.
	var unseen int
	if err := db.QueryRow(`SELECT count(*) FROM tasks t WHERE t.status = 'done'
		AND NOT EXISTS (SELECT 1 FROM gate_events g WHERE g.what = 'done' AND g.id = t.id)`).Scan(&unseen); err != nil {
		t.Fatal(err)
	}
	if unseen != 0 {
		t.Errorf("%d tasks are done without the triggers seeing them become so", unseen)
	}
	rows2, err := db.Query(`SELECT t.id, t.auto_close_by, COALESCE(k.kind, '') FROM tasks t
		LEFT JOIN (SELECT DISTINCT name, kind FROM tokens) k ON k.name = t.auto_close_by WHERE t.auto_close = 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows2.Close()
	for rows2.Next() {
		var id, by, kind string
		if err := rows2.Scan(&id, &by, &kind); err != nil {
			t.Fatal(err)
		}
		if kind != string(store.Human) || !tasks[id].byHuman {
			t.Errorf("task %s is auto-close by %q (%s); the replay says a person decided it: %t", id, by, kind, tasks[id].byHuman)
		}
	}
	if err := rows2.Err(); err != nil {
		t.Fatal(err)
	}
	return done, byApproval, byAutoClose
}

// learn notes the ids a successful call made known.
func (w *gateWorld) learn(tool string, res *mcp.CallToolResult) {
	js, _ := json.Marshal(res.StructuredContent)
	var out struct {
		ID       string `json:"id"`
		Subtasks []struct {
			ID string `json:"id"`
		} `json:"subtasks"`
		Steps []struct {
			ID string `json:"id"`
		} `json:"steps"`
	}
	if json.Unmarshal(js, &out) != nil {
		return
	}
	switch tool {
	case "create_project":
		w.projects = append(w.projects, out.ID)
	case "create_task":
		w.tasks = append(w.tasks, out.ID)
	case "decompose_task":
		for _, s := range out.Subtasks {
			w.tasks = append(w.tasks, s.ID)
		}
		for _, s := range out.Steps {
			w.steps = append(w.steps, s.ID)
		}
	case "start_run", "retry_run":
		w.runs = append(w.runs, out.ID)
	case "request_approval":
		w.approvals = append(w.approvals, out.ID)
	}
}
