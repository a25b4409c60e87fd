package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// TestApprovalGate shows that an agent, even with full scope, cannot get a
// task that is not auto-close to done without a human.
func TestApprovalGate(t *testing.T) {
	e := newEnv(t)
	human := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	agent := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))

	task := must[store.Task](t, agent, "create_task", args{"title": "Ship it"})
	if task.AutoClose {
		t.Fatal("a task without project is auto-close by default")
	}
	if got := must[store.Task](t, agent, "close_task", args{"task_id": task.ID}); got.Status != store.StatusAwaitingApproval {
		t.Fatalf("close_task by an agent: status %s, want awaiting_approval", got.Status)
	}
	must[store.Task](t, agent, "close_task", args{"task_id": task.ID})
	pending := must[approvalsResult](t, human, "list_pending_approvals", nil).Approvals
	if len(pending) != 1 || pending[0].TaskID != task.ID || pending[0].Kind != "close" || pending[0].RequestedBy != "builder" {
		t.Fatalf("pending approvals after closing twice: %+v, want one close request by builder", pending)
	}

	// Every way around the gate that the tools offer an agent.
	for _, c := range []struct {
		name, tool string
		args       args
		want       string
	}{
		{"approve", "approve_task", args{"task_id": task.ID, "approval_id": pending[0].ID}, "only a human may approve"},
		{"reject", "reject_task", args{"task_id": task.ID, "approval_id": pending[0].ID, "reason": "no"}, "only a human may reject"},
		{"make it auto-close", "update_task", args{"task_id": task.ID, "auto_close": true}, "only a human may make a task auto-close"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := call[map[string]any](t, agent, c.tool, c.args)
			if !errors.Is(err, errToolFailed) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s by an agent: err = %v, want a tool error saying %q", c.tool, err, c.want)
			}
		})
	}
	// Reopening and closing again only asks again.
	must[store.Task](t, agent, "reopen_task", args{"task_id": task.ID})
	must[store.Task](t, agent, "close_task", args{"task_id": task.ID})
	got := must[store.TaskDetail](t, agent, "get_task", args{"task_id": task.ID})
	if got.Status != store.StatusAwaitingApproval || got.Approval == nil {
		t.Fatalf("after reopen and close: %+v, want awaiting_approval with a pending request", got)
	}

	dec := must[store.Verdict](t, human, "approve_task", args{"task_id": task.ID, "approval_id": got.Approval.ID, "note": "looks good"})
	if dec.Task.Status != store.StatusDone || dec.Approval.Status != "approved" || dec.Approval.DecidedBy != "alice" {
		t.Fatalf("approve_task by a human: %+v", dec)
	}
	if n := len(must[approvalsResult](t, human, "list_pending_approvals", nil).Approvals); n != 0 {
		t.Errorf("%d pending approvals after the decision, want 0", n)
	}

	// A task a human made auto-close needs no one.
	quick := must[store.Task](t, human, "create_task", args{"title": "Tidy up", "auto_close": true})
	if got := must[store.Task](t, agent, "close_task", args{"task_id": quick.ID}); got.Status != store.StatusDone {
		t.Errorf("close_task on an auto-close task: status %s, want done", got.Status)
	}
}

// TestRejectReopens shows that a human's refusal sends the task back to
// open with the reason kept.
func TestRejectReopens(t *testing.T) {
	e := newEnv(t)
	human := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	agent := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	task := must[store.Task](t, agent, "create_task", args{"title": "Ship it"})
	must[store.Task](t, agent, "close_task", args{"task_id": task.ID})
	closed := must[store.TaskDetail](t, human, "get_task", args{"task_id": task.ID})
	dec := must[store.Verdict](t, human, "reject_task", args{"task_id": task.ID, "approval_id": closed.Approval.ID, "reason": "tests are red"})
	if dec.Task.Status != store.StatusOpen || dec.Approval.Status != "rejected" || dec.Approval.DecisionNote != "tests are red" {
		t.Fatalf("reject_task: %+v", dec)
	}
	if _, err := call[store.Verdict](t, human, "approve_task", args{"task_id": task.ID, "approval_id": dec.Approval.ID}); err == nil ||
		!strings.Contains(err.Error(), "already rejected") {
		t.Errorf("approving a rejected request: err = %v, want it refused as already rejected", err)
	}
}

// TestDeleteRestore deletes a task, and then a project, and restores them:
// the data comes back exactly as it was, steps, comments and labels
// included.
func TestDeleteRestore(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	s := e.newSeed(cs)
	sub := must[store.Decomposition](t, cs, "decompose_task", args{"task_id": s.task, "subtasks": []args{{"title": "Install section"}}}).Subtasks[0]

	snapshot := func() string {
		t.Helper()
		detail := must[store.TaskDetail](t, cs, "get_task", args{"task_id": s.task})
		comments := must[commentsResult](t, cs, "list_comments", args{"task_id": s.task})
		subtasks := must[tasksResult](t, cs, "list_subtasks", args{"task_id": s.task})
		js, _ := json.Marshal([]any{detail, comments, subtasks})
		return string(js) + "\n" + e.dumpData()
	}
	before := snapshot()

	item := must[store.TrashItem](t, cs, "delete_task", args{"task_id": s.task})
	if item.ItemID != s.task || item.ItemKind != "task" || item.DeletedBy != "alice" {
		t.Errorf("delete_task: %+v", item)
	}
	for _, c := range []struct{ tool, id, arg string }{
		{"get_task", s.task, "task_id"},
		{"list_steps", s.task, "task_id"},
		{"get_task", sub.ID, "task_id"},
		{"get_step", s.step, "step_id"},
	} {
		if _, err := call[map[string]any](t, cs, c.tool, args{c.arg: c.id}); err == nil || !strings.Contains(err.Error(), "in the Trash") {
			t.Errorf("%s of a deleted task's content: err = %v, want it in the Trash", c.tool, err)
		}
	}
	trash := must[trashResult](t, cs, "list_trash", nil).Items
	if len(trash) != 2 || trash[0].ItemID != s.task {
		t.Fatalf("list_trash: %+v, want the task above the step deleted before it", trash)
	}
	if _, err := call[store.Restored](t, cs, "restore_from_trash", args{"item_id": sub.ID}); err == nil || !strings.Contains(err.Error(), "went to the Trash with task") {
		t.Errorf("restoring a subtask deleted with its parent: err = %v, want it refused, naming the parent", err)
	}
	if r := must[store.Restored](t, cs, "restore_from_trash", args{"item_id": s.task}); !r.Restored {
		t.Errorf("restore_from_trash: %+v", r)
	}
	if after := snapshot(); after != before {
		t.Fatalf("after delete and restore of a task:\n%s", lineDiff(before, after))
	}
	// The step deleted before the task stays deleted.
	if trash := must[trashResult](t, cs, "list_trash", nil).Items; len(trash) != 1 || trash[0].ItemID != s.trashed {
		t.Errorf("list_trash after the restore: %+v, want only the step deleted on its own", trash)
	}

	must[store.TrashItem](t, cs, "delete_project", args{"project_id": s.project})
	for _, task := range must[store.TaskPage](t, cs, "list_tasks", nil).Tasks {
		if task.ProjectID == s.project {
			t.Errorf("list_tasks after delete_project lists %q of the deleted project", task.ID)
		}
	}
	if _, err := call[store.Restored](t, cs, "restore_from_trash", args{"item_id": s.other}); err == nil || !strings.Contains(err.Error(), "went to the Trash with project") {
		t.Errorf("restoring a task deleted with its project: err = %v, want it refused, naming the project", err)
	}
	must[store.Restored](t, cs, "restore_from_trash", args{"item_id": s.project})
	if after := snapshot(); after != before {
		t.Fatalf("after delete and restore of the project:\n%s", lineDiff(before, after))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// TestActivityKeepsOldValues shows that overwriting a task leaves its old
// values, and who changed them, in the activity log.
func TestActivityKeepsOldValues(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	agent := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	task := must[store.Task](t, alice, "create_task", args{"title": "Draft", "priority": "low"})
	e.clock.Advance(time.Hour)
	must[store.Task](t, agent, "update_task", args{"task_id": task.ID, "title": "Final", "priority": "high"})
	must[store.Comment](t, agent, "comment_on_task", args{"task_id": task.ID, "body": "renamed"})

	log := must[activityResult](t, alice, "get_task_activity", args{"task_id": task.ID}).Activity
	if len(log) != 3 {
		t.Fatalf("activity: %d entries, want 3: %+v", len(log), log)
	}
	want := []struct {
		action, actor string
		kind          store.Kind
		at            string
	}{
		{"create_task", "alice", store.Human, "2025-06-02T09:00:00.000Z"},
		{"update_task", "builder", store.Agent, "2025-06-02T10:00:00.000Z"},
		{"comment_on_task", "builder", store.Agent, "2025-06-02T10:00:00.000Z"},
	}
	for i, w := range want {
		if a := log[i]; a.Action != w.action || a.Actor != w.actor || a.ActorKind != w.kind || a.At != w.at {
			t.Errorf("activity[%d] = %s by %s (%s) at %s, want %s by %s (%s) at %s", i, a.Action, a.Actor, a.ActorKind, a.At, w.action, w.actor, w.kind, w.at)
		}
	}
	got := mustJSON(t, log[1].Details)
	if want := `{"priority":{"new":"high","old":"low"},"title":{"new":"Final","old":"Draft"}}`; got != want {
		t.Errorf("update_task details: %s, want %s", got, want)
	}
}

// TestFailedCallWritesNothing shows that a call failing halfway leaves no
// trace: decompose_task creates its subtasks before its steps, and a bad
// step undoes the subtasks.
func TestFailedCallWritesNothing(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	s := e.newSeed(cs)
	before := e.dump()
	_, err := call[store.Decomposition](t, cs, "decompose_task", args{
		"task_id":  s.task,
		"subtasks": []args{{"title": "one"}, {"title": "two"}},
		"steps":    []string{"fine", "   "},
	})
	if err == nil || !strings.Contains(err.Error(), "text must not be empty") {
		t.Fatalf("decompose_task with an empty step: err = %v", err)
	}
	if after := e.dump(); after != before {
		t.Errorf("a failed call changed the database:\n%s", lineDiff(before, after))
	}
}
