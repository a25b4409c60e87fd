package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// TestBadInput sends malformed arguments: each gets a tool error that
// names the problem, and none writes anything.
func TestBadInput(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	s := e.newSeed(cs)
	const unknownID = "01977a2b-3c4d-7e5f-8a9b-0c1d2e3f4a5b"

	for _, c := range []struct {
		name string
		tool string
		args any
		want string
	}{
		{"wrong type", "create_task", args{"title": 42}, "validating"},
		{"missing argument", "create_task", args{}, "title"},
		{"unknown argument", "create_task", args{"title": "x", "colour": "red"}, "colour"},
		{"value outside an enum", "set_step_status", args{"step_id": s.step, "status": "finished"}, "validating"},
		{"id of nothing", "update_task", args{"task_id": unknownID, "title": "x"}, `task "` + unknownID + `" does not exist`},
		{"malformed id", "close_task", args{"task_id": "42"}, `task_id "42" is not a valid id`},
		{"label of nothing", "add_label_to_task", args{"task_id": s.task, "label_id": unknownID}, "does not exist"},
		{"empty title", "create_task", args{"title": "  "}, "title must not be empty"},
		{"two-line title", "create_task", args{"title": "a\nb"}, "one line"},
		{"huge title", "create_task", args{"title": strings.Repeat("é", store.MaxName+1)}, "201 characters long; at most 200"},
		{"huge comment", "comment_on_task", args{"task_id": s.task, "body": strings.Repeat("x", 1<<20)}, "at most 20000"},
		{"invalid UTF-8", "create_task", json.RawMessage("{\"title\":\"caf\xe9\"}"), "title is not valid UTF-8"},
		{"lone surrogate", "comment_on_task", json.RawMessage(`{"task_id":"` + s.task + `","body":"\udc00"}`), "body is not valid UTF-8"},
		{"bad date", "create_task", args{"title": "x", "due": "2025-02-30"}, "not a date"},
		{"bad priority", "update_task", args{"task_id": s.task, "priority": "asap"}, "validating"},
		{"limit out of range", "list_tasks", args{"limit": 100000}, "limit 100000 is out of range"},
		{"forbidden state change", "close_task", args{"task_id": s.blocked}, "is blocked (no signing key yet): unblock it first"},
		{"dependency cycle", "add_task_dependency", args{"task_id": s.other, "depends_on": s.task}, "would make a cycle"},
		{"write in an archived project", "create_task", args{"title": "x", "project_id": s.archived}, "archived"},
		{"steps of another task", "reorder_steps", args{"task_id": s.other, "step_ids": []string{s.step}}, "exactly once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.dump()
			_, err := call[map[string]any](t, cs, c.tool, c.args)
			if !errors.Is(err, errToolFailed) {
				t.Fatalf("err = %v, want a tool error", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if after := e.dump(); after != before {
				t.Errorf("a refused call changed the database:\n%s", lineDiff(before, after))
			}
		})
	}
}
