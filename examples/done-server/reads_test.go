package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func ids(tasks []store.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}

// TestListTasksPages walks list_tasks page by page: every task once, in
// creation order.
func TestListTasksPages(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.mint("alice", store.Human, mcpeffect.NonDestructive))
	var want []string
	for i := range 7 {
		want = append(want, must[store.Task](t, cs, "create_task", args{"title": fmt.Sprintf("task %d", i)}).ID)
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("more pages than 7 tasks in pages of 3 make")
		}
		a := args{"limit": 3}
		if cursor != "" {
			a["cursor"] = cursor
		}
		page := must[store.TaskPage](t, cs, "list_tasks", a)
		got = append(got, ids(page.Tasks)...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages gave %v, want %v", got, want)
	}
}

// TestNextTaskAndClaim shows an agent finding its next task, claiming it,
// and the order get_next_task follows.
func TestNextTaskAndClaim(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.NonDestructive))
	bot := e.connect(e.mint("bot", store.Agent, mcpeffect.Full))
	e.mint("other-bot", store.Agent, mcpeffect.ReadOnly)

	if got := must[nextTaskResult](t, bot, "get_next_task", nil); got.Found {
		t.Fatalf("get_next_task in an empty workspace: %+v", got)
	}
	low := must[store.Task](t, alice, "create_task", args{"title": "low", "priority": "low"})
	urgent := must[store.Task](t, alice, "create_task", args{"title": "urgent", "priority": "urgent"})
	waiting := must[store.Task](t, alice, "create_task", args{"title": "waits for low", "priority": "urgent"})
	must[store.Task](t, alice, "add_task_dependency", args{"task_id": waiting.ID, "depends_on": low.ID})
	taken := must[store.Task](t, alice, "create_task", args{"title": "someone else's", "priority": "urgent", "assignee": "other-bot"})

	if got := must[nextTaskResult](t, bot, "get_next_task", nil); !got.Found || got.Task.ID != urgent.ID {
		t.Fatalf("get_next_task: %+v, want the urgent ready task", got)
	}
	// get_next_task does not claim: asking again gives the same.
	if got := must[nextTaskResult](t, bot, "get_next_task", nil); got.Task == nil || got.Task.ID != urgent.ID {
		t.Fatalf("get_next_task again: %+v", got)
	}
	if got := must[store.Task](t, bot, "claim_task", args{"task_id": urgent.ID}); got.Assignee != "bot" {
		t.Fatalf("claim_task: %+v", got)
	}
	if _, err := call[store.Task](t, bot, "claim_task", args{"task_id": taken.ID}); err == nil || !strings.Contains(err.Error(), `assigned to "other-bot"`) {
		t.Errorf("claiming another's task: err = %v", err)
	}
	mine := must[store.TaskPage](t, bot, "list_my_tasks", nil)
	if len(mine.Tasks) != 1 || mine.Tasks[0].ID != urgent.ID {
		t.Errorf("list_my_tasks: %v, want the claimed task", ids(mine.Tasks))
	}
	// The bot's own tasks come first, even when less urgent ones are
	// waiting.
	if got := must[nextTaskResult](t, bot, "get_next_task", nil); got.Task == nil || got.Task.ID != urgent.ID {
		t.Errorf("get_next_task after claiming: %+v, want the claimed task", got)
	}
	must[store.Task](t, bot, "close_task", args{"task_id": urgent.ID})
	if got := must[nextTaskResult](t, bot, "get_next_task", nil); got.Task == nil || got.Task.ID != low.ID {
		t.Errorf("get_next_task after closing: %+v, want low (the urgent one waits for it)", got)
	}
}

// TestSearchAndProgress checks search_tasks (titles, descriptions and
// comments, wildcards taken literally) and get_project_progress.
func TestSearchAndProgress(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	s := e.newSeed(cs)

	for _, c := range []struct {
		query string
		want  []string
	}{
		{"readme", []string{s.task}},
		{"KEEP IT", []string{s.task}}, // in a comment
		{"first release", nil},        // in the project, not a task
		{"%", nil},
		{"_", nil},
	} {
		got := ids(must[tasksResult](t, cs, "search_tasks", args{"query": c.query}).Tasks)
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("search_tasks %q: %v, want %v", c.query, got, c.want)
		}
	}

	e.clock.Advance(60 * 24 * time.Hour) // past the seed task's due date
	p := must[store.Progress](t, cs, "get_project_progress", args{"project_id": s.project})
	want := map[store.Status]int{store.StatusOpen: 2, store.StatusBlocked: 1, store.StatusAwaitingApproval: 1, store.StatusDone: 0}
	if p.Total != 4 || fmt.Sprint(p.ByStatus) != fmt.Sprint(want) || len(p.Blocked) != 1 || p.Blocked[0].ID != s.blocked ||
		p.Overdue != 1 || p.PendingApprovals != 1 {
		t.Errorf("get_project_progress: %+v", p)
	}
}
