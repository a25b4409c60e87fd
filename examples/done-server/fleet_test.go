package main

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mustFail calls a tool that must answer with a tool error saying want.
func mustFail(t *testing.T, cs *mcp.ClientSession, tool string, a args, want string) {
	t.Helper()
	_, err := call[map[string]any](t, cs, tool, a)
	if !errors.Is(err, errToolFailed) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s(%v): err = %v, want a tool error saying %q", tool, a, err, want)
	}
}

// TestRunLifecycle follows a run from start_run to complete_run: the
// agent finds it, claims the task to start it, reports progress, asks for
// an approval from it, and completes it; the task and the approval show
// the run, and its log and artifacts are kept.
func TestRunLifecycle(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	builder := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	task := must[store.Task](t, alice, "create_task", args{"title": "Port the parser"})

	run := must[store.Run](t, alice, "start_run", args{"task_id": task.ID, "agent": "builder", "instructions": "Keep the old API."})
	if run.Status != store.RunQueued || run.Agent != "builder" || run.QueuedBy != "alice" || run.TaskTitle != task.Title {
		t.Fatalf("start_run: %+v", run)
	}
	if got := must[store.TaskDetail](t, alice, "get_task", args{"task_id": task.ID}); got.Assignee != "builder" || got.CurrentRun == nil || got.CurrentRun.ID != run.ID {
		t.Errorf("get_task after start_run: assignee %q, current run %+v", got.Assignee, got.CurrentRun)
	}
	// Each start_run queues a new run: the second waits behind the first,
	// which stays the task's current run.
	second := must[store.Run](t, alice, "start_run", args{"task_id": task.ID, "agent": "builder", "instructions": "Then the tests."})
	if second.ID == run.ID || second.Status != store.RunQueued {
		t.Fatalf("a second start_run: %+v, want a new queued run", second)
	}
	if got := must[store.TaskDetail](t, alice, "get_task", args{"task_id": task.ID}); got.CurrentRun == nil || got.CurrentRun.ID != run.ID {
		t.Errorf("get_task with two runs queued: current run %+v, want the first", got.CurrentRun)
	}
	must[store.Run](t, alice, "cancel_run", args{"run_id": second.ID, "reason": "one is enough"})
	mustFail(t, alice, "start_run", args{"task_id": task.ID, "agent": "alice"}, "is a person, not an agent")

	next := must[nextTaskResult](t, builder, "get_next_task", nil)
	if !next.Found || next.Task.ID != task.ID || next.Run == nil || next.Run.ID != run.ID {
		t.Fatalf("get_next_task for the agent: %+v", next)
	}
	mustFail(t, builder, "report_run_progress", args{"run_id": run.ID, "message": "early"}, "claim_task its task")
	must[store.Task](t, builder, "claim_task", args{"task_id": task.ID})
	if got := must[store.Run](t, builder, "get_run", args{"run_id": run.ID}); got.Status != store.RunRunning || got.StartedAt == "" {
		t.Fatalf("after claim_task: %+v, want running", got)
	}

	e.clock.Advance(5 * time.Minute)
	mustFail(t, alice, "report_run_progress", args{"run_id": run.ID}, "only that agent reports on it")
	got := must[store.Run](t, builder, "report_run_progress", args{"run_id": run.ID, "message": "lexer done", "progress": 40,
		"artifacts": []args{{"kind": "link", "uri": "https://ci.example.com/build/7", "title": "CI"}}})
	if got.Progress == nil || *got.Progress != 40 || got.LastProgressAt == "" {
		t.Errorf("report_run_progress: %+v", got)
	}
	mustFail(t, builder, "report_run_progress", args{"run_id": run.ID, "progress": 140}, "out of range")

	approval := must[store.Approval](t, builder, "request_approval", args{"task_id": task.ID, "reason": "The new parser drops a deprecated syntax."})
	detail := must[store.ApprovalDetail](t, alice, "get_approval", args{"approval_id": approval.ID})
	if detail.RunID != run.ID || detail.RequesterRun == nil || detail.RequesterRun.Status != store.RunRunning ||
		len(detail.Evidence) != 1 || detail.Evidence[0].URI != "https://ci.example.com/build/7" {
		t.Errorf("get_approval of a request made from a run: %+v", detail)
	}

	e.clock.Advance(5 * time.Minute)
	done := args{"run_id": run.ID, "outcome": "succeeded", "summary": "parser ported", "cost_usd": 0.42,
		"artifacts": []args{{"kind": "pull_request", "uri": "https://example.com/pr/12"}}}
	got = must[store.Run](t, builder, "complete_run", done)
	if got.Status != store.RunSucceeded || got.Summary != "parser ported" || got.CostUSD == nil || *got.CostUSD != 0.42 ||
		got.DurationMS == nil || *got.DurationMS != (10*time.Minute).Milliseconds() {
		t.Errorf("complete_run: %+v", got)
	}
	if again := must[store.Run](t, builder, "complete_run", done); mustJSON(t, again) != mustJSON(t, got) {
		t.Errorf("complete_run again: %+v, want the same run", again)
	}
	mustFail(t, builder, "complete_run", args{"run_id": run.ID, "outcome": "failed"}, "already succeeded")

	// Completing the run leaves the task to close_task and its gate.
	if got := must[store.TaskDetail](t, alice, "get_task", args{"task_id": task.ID}); got.Status != store.StatusOpen || got.CurrentRun != nil {
		t.Errorf("get_task after the run: status %s, current run %+v", got.Status, got.CurrentRun)
	}
	if got := must[store.Task](t, builder, "close_task", args{"task_id": task.ID}); got.Status != store.StatusAwaitingApproval {
		t.Errorf("close_task by the agent after its run: %s, want awaiting_approval", got.Status)
	}

	var kinds []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 2 {
			t.Fatal("more pages than 4 entries in pages of 2 make")
		}
		a := args{"run_id": run.ID, "limit": 2}
		if cursor != "" {
			a["cursor"] = cursor
		}
		log := must[store.RunLog](t, alice, "get_run_logs", a)
		for _, ev := range log.Events {
			kinds = append(kinds, ev.Kind)
		}
		if cursor = log.NextCursor; cursor == "" {
			break
		}
	}
	if want := []string{"queued", "started", "progress", "succeeded"}; !slices.Equal(kinds, want) {
		t.Errorf("get_run_logs: %v, want %v", kinds, want)
	}
	if a := must[artifactsResult](t, alice, "list_run_artifacts", args{"run_id": run.ID}).Artifacts; len(a) != 2 || a[1].Kind != "pull_request" {
		t.Errorf("list_run_artifacts: %+v", a)
	}
	for _, c := range []struct {
		filter args
		want   int
	}{
		// The run that succeeded, and the second, cancelled.
		{args{"agent": "builder"}, 2},
		{args{"task_id": task.ID, "status": "succeeded"}, 1},
		{args{"task_id": task.ID, "status": "cancelled"}, 1},
		{args{"status": "queued"}, 0},
		{args{"since": "2025-06-02"}, 2},
		{args{"until": "2025-06-02"}, 0},
	} {
		if page := must[store.RunPage](t, alice, "list_runs", c.filter); len(page.Runs) != c.want {
			t.Errorf("list_runs %v: %d runs, want %d", c.filter, len(page.Runs), c.want)
		}
	}
}

// TestRetryAndCancel retries a failed run, cancels the retry, and shows
// which runs fleet_status counts as failing.
func TestRetryAndCancel(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	builder := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	task := must[store.Task](t, alice, "create_task", args{"title": "Migrate the data"})
	run := must[store.Run](t, alice, "start_run", args{"task_id": task.ID, "agent": "builder", "instructions": "Dry run first."})
	mustFail(t, alice, "retry_run", args{"run_id": run.ID}, "only a failed or cancelled run can be retried")
	must[store.Task](t, builder, "claim_task", args{"task_id": task.ID})
	must[store.Run](t, builder, "complete_run", args{"run_id": run.ID, "outcome": "failed", "summary": "disk full"})

	failing := must[store.Fleet](t, alice, "fleet_status", nil).FailingRuns
	if len(failing) != 1 || failing[0].ID != run.ID {
		t.Errorf("failing runs: %+v, want the failed run", failing)
	}
	retry := must[store.Run](t, alice, "retry_run", args{"run_id": run.ID})
	if retry.RetryOf != run.ID || retry.Instructions != "Dry run first." || retry.Agent != "builder" || retry.Status != store.RunQueued {
		t.Errorf("retry_run: %+v", retry)
	}
	if failing := must[store.Fleet](t, alice, "fleet_status", nil).FailingRuns; len(failing) != 0 {
		t.Errorf("failing runs after a retry: %+v, want none", failing)
	}
	// Each retry_run queues another run: the retry of a retry and a
	// second retry of the same run alike.
	again := must[store.Run](t, alice, "retry_run", args{"run_id": run.ID})
	if again.ID == retry.ID || again.RetryOf != run.ID || again.Status != store.RunQueued {
		t.Errorf("a second retry_run: %+v, want another queued run", again)
	}
	must[store.Run](t, alice, "cancel_run", args{"run_id": again.ID, "reason": "one is enough"})

	cancelled := must[store.Run](t, alice, "cancel_run", args{"run_id": retry.ID, "reason": "not now"})
	if cancelled.Status != store.RunCancelled || cancelled.CancelledBy != "alice" || cancelled.CancelReason != "not now" || cancelled.DurationMS != nil {
		t.Errorf("cancel_run of a queued run: %+v", cancelled)
	}
	if again := must[store.Run](t, alice, "cancel_run", args{"run_id": retry.ID, "reason": "really"}); again.CancelReason != "not now" {
		t.Errorf("cancel_run of a cancelled run changed it: %+v", again)
	}
	mustFail(t, builder, "report_run_progress", args{"run_id": retry.ID}, "is cancelled")
	if again := must[store.Run](t, alice, "retry_run", args{"run_id": retry.ID}); again.RetryOf != retry.ID {
		t.Errorf("retry_run of a cancelled run: %+v", again)
	}
}

// TestOneRunAtATime shows that an agent works one run at a time, and that
// get_next_task sends it back to the run it is in.
func TestOneRunAtATime(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	builder := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	first := must[store.Task](t, alice, "create_task", args{"title": "First", "priority": "low"})
	second := must[store.Task](t, alice, "create_task", args{"title": "Second", "priority": "urgent"})
	must[store.Task](t, alice, "create_task", args{"title": "Unassigned and urgent", "priority": "urgent"})
	run := must[store.Run](t, alice, "start_run", args{"task_id": first.ID, "agent": "builder"})
	must[store.Run](t, alice, "start_run", args{"task_id": second.ID, "agent": "builder"})

	if next := must[nextTaskResult](t, builder, "get_next_task", nil); next.Task == nil || next.Task.ID != second.ID {
		t.Errorf("get_next_task with two queued runs: %+v, want the more urgent", next.Task)
	}
	must[store.Task](t, builder, "claim_task", args{"task_id": first.ID})
	mustFail(t, builder, "claim_task", args{"task_id": second.ID}, "works 1 run at a time")
	if next := must[nextTaskResult](t, builder, "get_next_task", nil); next.Task == nil || next.Task.ID != first.ID || next.Run.Status != store.RunRunning {
		t.Errorf("get_next_task while running: %+v, want the task of the running run", next)
	}
	other := e.connect(e.mint("other-bot", store.Agent, mcpeffect.Full))
	mustFail(t, other, "claim_task", args{"task_id": second.ID}, `already assigned to "builder"`)
	must[store.Task](t, alice, "assign_task", args{"task_id": second.ID})
	mustFail(t, other, "claim_task", args{"task_id": second.ID}, `for agent "builder"`)

	must[store.Run](t, builder, "complete_run", args{"run_id": run.ID, "outcome": "succeeded"})
	if got := must[store.Task](t, builder, "claim_task", args{"task_id": second.ID}); got.Assignee != "builder" {
		t.Errorf("claim_task after completing the first run: %+v", got)
	}
}

// TestPauseAgent shows that a paused agent gets no work until a human
// resumes it, and who may pause and resume whom.
func TestPauseAgent(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	builder := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	e.mint("other-bot", store.Agent, mcpeffect.Full)
	task := must[store.Task](t, alice, "create_task", args{"title": "Index the docs"})
	must[store.Run](t, alice, "start_run", args{"task_id": task.ID, "agent": "builder"})

	a := must[store.AgentInfo](t, alice, "pause_agent", args{"agent": "builder", "reason": "budget"})
	if a.State != "paused" || a.Paused == nil || a.Paused.By != "alice" || a.QueuedRuns != 1 {
		t.Errorf("pause_agent: %+v", a)
	}
	next := must[nextTaskResult](t, builder, "get_next_task", nil)
	if next.Found || next.Paused == nil || next.Paused.Reason != "budget" {
		t.Errorf("get_next_task for a paused agent: %+v", next)
	}
	mustFail(t, builder, "claim_task", args{"task_id": task.ID}, "is paused")
	mustFail(t, builder, "resume_agent", args{"agent": "builder"}, "only a human may resume")
	mustFail(t, builder, "pause_agent", args{"agent": "other-bot"}, "may pause only itself")
	mustFail(t, alice, "pause_agent", args{"agent": "alice"}, "is a person, not an agent")
	mustFail(t, alice, "pause_agent", args{"agent": "nobody"}, "nobody Done knows")

	if a := must[store.AgentInfo](t, alice, "resume_agent", args{"agent": "builder"}); a.Paused != nil {
		t.Errorf("resume_agent: %+v", a)
	}
	if next := must[nextTaskResult](t, builder, "get_next_task", nil); !next.Found || next.Task.ID != task.ID {
		t.Errorf("get_next_task after resume_agent: %+v", next)
	}
	must[store.Task](t, builder, "claim_task", args{"task_id": task.ID})
	// An agent may pause itself; its running run goes on.
	if a := must[store.AgentInfo](t, builder, "pause_agent", args{"agent": "builder"}); a.State != "paused" || !a.Busy {
		t.Errorf("an agent pausing itself in a run: %+v", a)
	}
}

// TestFleetStatus counts agents online, busy, paused and idle, the queue,
// and stalled runs, as the clock moves.
func TestFleetStatus(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	e.connect(e.mint("gone-bot", store.Agent, mcpeffect.ReadOnly)) // seen now, offline later
	e.clock.Advance(10 * time.Minute)
	busy := e.connect(e.mint("busy-bot", store.Agent, mcpeffect.Full))
	e.connect(e.mint("idle-bot", store.Agent, mcpeffect.ReadOnly))
	e.mint("paused-bot", store.Agent, mcpeffect.NonDestructive)
	e.mint("never-bot", store.Agent, mcpeffect.NonDestructive)

	var tasks []string
	for _, title := range []string{"one", "two", "three"} {
		tasks = append(tasks, must[store.Task](t, alice, "create_task", args{"title": title}).ID)
	}
	run := must[store.Run](t, alice, "start_run", args{"task_id": tasks[0], "agent": "busy-bot"})
	must[store.Task](t, busy, "claim_task", args{"task_id": tasks[0]})
	must[store.Run](t, alice, "start_run", args{"task_id": tasks[1], "agent": "paused-bot"})
	must[store.Run](t, alice, "start_run", args{"task_id": tasks[2], "agent": "never-bot"})
	must[store.AgentInfo](t, alice, "pause_agent", args{"agent": "paused-bot"})

	f := must[store.Fleet](t, alice, "fleet_status", nil)
	got := []int{f.Agents, f.Online, f.Busy, f.Paused, f.Idle, f.QueueDepth, f.QueuedForPaused}
	if want := []int{5, 2, 1, 1, 1, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("agents, online, busy, paused, idle, queue depth, queued for paused = %v, want %v", got, want)
	}
	if len(f.StalledRuns) != 0 {
		t.Errorf("stalled runs right after the start: %+v", f.StalledRuns)
	}
	agents := must[agentsResult](t, alice, "list_agents", nil).Agents
	states := map[string]string{}
	for _, a := range agents {
		states[a.Name] = a.State
	}
	want := map[string]string{"busy-bot": "busy", "gone-bot": "offline", "idle-bot": "online", "never-bot": "offline", "paused-bot": "paused"}
	if len(states) != len(want) {
		t.Errorf("list_agents: %v, want %v", states, want)
	}
	for name, state := range want {
		if states[name] != state {
			t.Errorf("list_agents: %s is %q, want %q", name, states[name], state)
		}
	}

	detail := must[store.AgentDetail](t, alice, "get_agent", args{"agent": "busy-bot"})
	if detail.CurrentRun == nil || detail.CurrentRun.ID != run.ID || len(detail.RecentRuns) != 1 ||
		detail.Scope != mcpeffect.Full || detail.Limits.MaxRunningRuns != 1 {
		t.Errorf("get_agent: %+v", detail)
	}

	e.clock.Advance(store.StallAfter + time.Minute)
	f = must[store.Fleet](t, alice, "fleet_status", nil)
	if len(f.StalledRuns) != 1 || f.StalledRuns[0].ID != run.ID {
		t.Errorf("stalled runs without progress for %s: %+v", store.StallAfter, f.StalledRuns)
	}
	if f.Online != 0 {
		t.Errorf("%d agents online after %s without a call, want 0", f.Online, store.StallAfter)
	}
	must[store.Run](t, busy, "report_run_progress", args{"run_id": run.ID})
	if f := must[store.Fleet](t, alice, "fleet_status", nil); len(f.StalledRuns) != 0 || f.Online != 1 {
		t.Errorf("after a heartbeat: %d stalled, %d online, want 0 and 1", len(f.StalledRuns), f.Online)
	}
}

// TestRunProgressIsItsLastReport holds a run's progress to the last
// report that gave one, whoever reads the run: a report only adds to the
// run's log, so that an agent whose token may only add reports progress,
// and a bare heartbeat keeps the progress there is.
func TestRunProgressIsItsLastReport(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	builder := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	reporter := e.connect(e.mint("builder", store.Agent, mcpeffect.NonDestructive))
	task := must[store.Task](t, alice, "create_task", args{"title": "Port the parser"})
	run := must[store.Run](t, alice, "start_run", args{"task_id": task.ID, "agent": "builder"})
	must[store.Task](t, builder, "claim_task", args{"task_id": task.ID})

	progress := func(r store.Run) string {
		if r.Progress == nil {
			return "none"
		}
		return strconv.Itoa(*r.Progress)
	}
	for _, c := range []struct {
		name   string
		report args
		want   string
	}{
		{"no report yet", nil, "none"},
		{"a first report", args{"progress": 30, "message": "lexer done"}, "30"},
		{"a bare heartbeat", args{}, "30"},
		{"a report further along", args{"progress": 70}, "70"},
		{"a report going back", args{"progress": 60, "message": "a test fails again"}, "60"},
	} {
		if c.report != nil {
			c.report["run_id"] = run.ID
			if got := must[store.Run](t, reporter, "report_run_progress", c.report); progress(got) != c.want {
				t.Errorf("%s: report_run_progress answers progress %s, want %s", c.name, progress(got), c.want)
			}
		}
		if got := must[store.Run](t, alice, "get_run", args{"run_id": run.ID}); progress(got) != c.want {
			t.Errorf("%s: get_run shows progress %s, want %s", c.name, progress(got), c.want)
		}
		page := must[store.RunPage](t, alice, "list_runs", args{"task_id": task.ID})
		if len(page.Runs) != 1 || progress(page.Runs[0]) != c.want {
			t.Errorf("%s: list_runs shows %+v, want progress %s", c.name, page.Runs, c.want)
		}
	}
	var reported []string
	for _, ev := range must[store.RunLog](t, alice, "get_run_logs", args{"run_id": run.ID}).Events {
		if ev.Progress != nil {
			reported = append(reported, strconv.Itoa(*ev.Progress))
		}
	}
	if want := []string{"30", "70", "60"}; !slices.Equal(reported, want) {
		t.Errorf("get_run_logs holds the progress %v, want every report's: %v", reported, want)
	}
}
