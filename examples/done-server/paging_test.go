package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEveryListIsPaged walks each tool that lists, in pages of two, over
// a list of at least five items that it makes first: the pages hold at
// most two items each and give, in order, exactly the list as one page
// of 200 gives it, the last page without a next_cursor. A cursor that the
// tool did not give and a limit out of range are refused. No list-like
// read answers whole: the last case fails when a tool that lists is
// added without paging.
func TestEveryListIsPaged(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	s := e.newSeed(alice)
	runner := e.connect(e.mint("runner", store.Agent, mcpeffect.Full))
	for i := range 5 {
		needle := must[store.Task](t, alice, "create_task", args{"title": fmt.Sprintf("needle %d", i), "due": fmt.Sprintf("2025-07-0%d", 5-i)})
		must[store.Run](t, alice, "start_run", args{"task_id": needle.ID, "agent": "runner"})
		must[store.Comment](t, alice, "comment_on_task", args{"task_id": s.task, "body": fmt.Sprintf("comment %d", i)})
		must[store.Project](t, alice, "create_project", args{"name": fmt.Sprintf("project %d", i)})
		// Names out of creation order: labels list by name.
		must[store.Label](t, alice, "create_label", args{"name": fmt.Sprintf("label %d", (i*3)%5)})
		must[store.Approval](t, alice, "request_approval", args{"task_id": s.other, "reason": fmt.Sprintf("reason %d", i)})
		e.mint(fmt.Sprintf("agent-%d", i), store.Agent, mcpeffect.ReadOnly)
		must[calendarLinkResult](t, alice, "create_calendar_link", args{"name": fmt.Sprintf("link %d", i)})
		must[taskContextResult](t, alice, "attach_context_to_task", args{"task_id": s.task, "ref": fmt.Sprintf("local:notes/%d.md", i)})
		must[store.Run](t, runner, "report_run_progress", args{"run_id": s.run, "artifacts": []any{args{"kind": "link", "uri": fmt.Sprintf("https://example.com/%d", i)}}})
		trashed := must[store.Task](t, alice, "create_task", args{"title": fmt.Sprintf("doomed %d", i)})
		must[store.TrashItem](t, alice, "delete_task", args{"task_id": trashed.ID})
		// Due and scheduled, whole days and times, several on a day: the
		// agenda's order has ties to break.
		must[store.Task](t, alice, "schedule_task", args{"task_id": needle.ID, "start": "2025-07-01", "end": "2025-07-02"})
	}
	dec := must[store.Decomposition](t, alice, "decompose_task", args{"task_id": s.other,
		"subtasks": []any{args{"title": "a"}, args{"title": "b"}, args{"title": "c"}, args{"title": "d"}, args{"title": "e"}},
		"steps":    []string{"one", "two", "three", "four", "five"}})
	// Steps list by position, not by id: reverse them.
	var reversed []string
	for i := range dec.Steps {
		reversed = append(reversed, dec.Steps[len(dec.Steps)-1-i].ID)
	}
	must[stepsResult](t, alice, "reorder_steps", args{"task_id": s.other, "step_ids": reversed})
	for i := range 3 {
		must[store.Task](t, alice, "schedule_task", args{"task_id": dec.Subtasks[i].ID, "start": fmt.Sprintf("2025-07-0%dT0%d:00:00Z", 1+i%2, 9-i)})
	}

	lists := []struct {
		tool, items string
		args        args
	}{
		{"search_tasks", "tasks", args{"query": "needle"}},
		{"get_task_activity", "activity", args{"task_id": s.task}},
		{"list_subtasks", "tasks", args{"task_id": s.other}},
		{"list_projects", "projects", args{"include_archived": true}},
		{"list_steps", "steps", args{"task_id": s.other}},
		{"list_comments", "comments", args{"task_id": s.task}},
		{"list_labels", "labels", nil},
		{"list_pending_approvals", "approvals", nil},
		{"list_trash", "items", nil},
		{"list_tokens", "tokens", nil},
		{"list_agents", "agents", nil},
		{"list_run_artifacts", "artifacts", args{"run_id": s.run}},
		{"list_calendar_links", "links", nil},
		{"get_agenda", "entries", args{"from": "2025-07-01", "to": "2025-07-10"}},
		{"list_task_context", "refs", args{"task_id": s.task}},
		{"list_tasks", "tasks", nil},
		{"list_my_tasks", "tasks", args{"status": "open"}},
		{"list_runs", "runs", nil},
		{"get_run_logs", "events", args{"run_id": s.run}},
		{"list_digests", "digests", nil},
	}
	for _, c := range lists {
		t.Run(c.tool, func(t *testing.T) {
			with := func(extra args) args {
				a := args{}
				for k, v := range c.args {
					a[k] = v
				}
				for k, v := range extra {
					a[k] = v
				}
				return a
			}
			whole, next := listPage(t, alice, c.tool, c.items, with(args{"limit": 200}))
			if next != "" {
				t.Fatalf("a page of 200 has a next_cursor")
			}
			if len(whole) < 5 && c.tool != "list_my_tasks" && c.tool != "list_digests" {
				t.Fatalf("the list holds %d items, want at least 5 to page through", len(whole))
			}
			var walked []string
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > len(whole) {
					t.Fatalf("more pages than items")
				}
				a := with(args{"limit": 2})
				if cursor != "" {
					a["cursor"] = cursor
				}
				page, next := listPage(t, alice, c.tool, c.items, a)
				if len(page) > 2 {
					t.Fatalf("a page of limit 2 holds %d items", len(page))
				}
				walked = append(walked, page...)
				if cursor = next; cursor == "" {
					break
				}
			}
			if strings.Join(walked, "\n") != strings.Join(whole, "\n") {
				t.Errorf("the pages give\n%s\nthe whole list is\n%s", strings.Join(walked, "\n"), strings.Join(whole, "\n"))
			}
			for _, bad := range []args{{"cursor": "not-a-cursor"}, {"limit": 201}, {"limit": -1}} {
				mustFail(t, alice, c.tool, with(bad), "")
			}
		})
	}

	// Every read of the server whose answer holds a list of what the
	// data holds is in the table above, or in notPaged with the reason.
	notPaged := map[string]string{
		"list_connectors": "the connectors are the server's configuration, not data",
		"search_context":  "a limit per source, each search bounded in what it reads (see connector.Connector)",
	}
	tested := map[string]bool{}
	for _, c := range lists {
		tested[c.tool] = true
	}
	for tool, err := range alice.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		_, excused := notPaged[tool.Name]
		if strings.HasPrefix(tool.Name, "list_") && !tested[tool.Name] && !excused {
			t.Errorf("%s lists, and is neither paged here nor excused", tool.Name)
		}
		if tested[tool.Name] && !strings.Contains(tool.Description, "next_cursor") {
			t.Errorf("%s: its description does not say how to page: %q", tool.Name, tool.Description)
		}
	}
}

// listPage calls a tool that lists and returns the items of the answer's
// field items, each as JSON, and the answer's next_cursor.
func listPage(t *testing.T, cs *mcp.ClientSession, tool, items string, a args) ([]string, string) {
	t.Helper()
	res := must[map[string]json.RawMessage](t, cs, tool, a)
	var list []json.RawMessage
	if err := json.Unmarshal(res[items], &list); err != nil {
		t.Fatalf("%s: %s is not a list: %s", tool, items, res[items])
	}
	out := make([]string, len(list))
	for i, it := range list {
		out[i] = string(it)
	}
	var next string
	if raw, ok := res["next_cursor"]; ok {
		json.Unmarshal(raw, &next)
	}
	return out, next
}

// TestTaskLinksAreBounded fills a task with as many labels, dependencies
// and references as a task may have: one more of each is refused with
// the limit it passes, one already there still changes nothing, and the
// lists that get_task and get_approval show inside their answer stop at
// store.MaxShown, saying that there are more.
func TestTaskLinksAreBounded(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	runner := e.connect(e.mint("runner", store.Agent, mcpeffect.Full))
	task := must[store.Task](t, alice, "create_task", args{"title": "busy"}).ID
	for _, c := range []struct {
		name, tool string
		max        int
		args       func(i int) args
	}{
		{"labels", "add_label_to_task", store.MaxTaskLabels, func(i int) args {
			l := must[store.Label](t, alice, "create_label", args{"name": fmt.Sprintf("label %d", i)})
			return args{"task_id": task, "label_id": l.ID}
		}},
		{"dependencies", "add_task_dependency", store.MaxDependencies, func(i int) args {
			other := must[store.Task](t, alice, "create_task", args{"title": fmt.Sprintf("before %d", i)})
			return args{"task_id": task, "depends_on": other.ID}
		}},
		{"references", "attach_context_to_task", store.MaxTaskRefs, func(i int) args {
			return args{"task_id": task, "ref": fmt.Sprintf("local:notes/%d.md", i)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var first args
			for i := range c.max {
				a := c.args(i)
				if i == 0 {
					first = a
				}
				must[map[string]any](t, alice, c.tool, a)
			}
			mustFail(t, alice, c.tool, c.args(c.max), fmt.Sprintf("has %d %s, the most a task may have", c.max, c.name))
			must[map[string]any](t, alice, c.tool, first)
		})
	}

	for i := range store.MaxShown + 1 {
		must[store.Step](t, alice, "add_step", args{"task_id": task, "text": fmt.Sprintf("step %d", i)})
	}
	if d := must[store.TaskDetail](t, alice, "get_task", args{"task_id": task}); len(d.Steps) != store.MaxShown || !d.MoreSteps ||
		len(d.Labels) != store.MaxTaskLabels || len(d.DependsOn) != store.MaxDependencies {
		t.Errorf("get_task shows %d steps (more: %t), %d labels, %d dependencies", len(d.Steps), d.MoreSteps, len(d.Labels), len(d.DependsOn))
	}

	run := must[store.Run](t, alice, "start_run", args{"task_id": must[store.Task](t, alice, "create_task", args{"title": "work"}).ID, "agent": "runner"})
	work := run.TaskID
	must[store.Task](t, runner, "claim_task", args{"task_id": work})
	for range 3 {
		var outputs []any
		for j := range 20 {
			outputs = append(outputs, args{"kind": "link", "uri": fmt.Sprintf("https://example.com/%d", j)})
		}
		must[store.Run](t, runner, "report_run_progress", args{"run_id": run.ID, "artifacts": outputs})
	}
	a := must[store.Approval](t, runner, "request_approval", args{"task_id": work, "reason": "look"})
	if d := must[store.ApprovalDetail](t, alice, "get_approval", args{"approval_id": a.ID}); len(d.Evidence) != store.MaxShown || !d.MoreEvidence {
		t.Errorf("get_approval shows %d artifacts of 60 (more: %t)", len(d.Evidence), d.MoreEvidence)
	}
	for i := range store.MaxShown {
		must[store.Approval](t, alice, "request_approval", args{"task_id": task, "reason": fmt.Sprintf("reason %d", i)})
	}
	if d := must[store.Digest](t, alice, "get_digest", nil); len(d.NeedsHuman.Approvals) != store.MaxShown || !d.NeedsHuman.MoreApprovals {
		t.Errorf("get_digest shows %d approvals of %d (more: %t)", len(d.NeedsHuman.Approvals), store.MaxShown+1, d.NeedsHuman.MoreApprovals)
	}
}
