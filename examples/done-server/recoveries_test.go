package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// trashingTools returns the tools that the specification (tools.tsv)
// describes as moving something to the Trash.
func trashingTools(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("testdata/tools.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) == 7 && strings.Contains(fields[6], "to the Trash") {
			names = append(names, fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// TestTrashRecoveries: every tool of Done that moves something to the
// Trash, as the specification describes them, publishes its undo
// (SEP-3172) in its listing, and no other tool does; and for each, on a
// real call through the protocol (in memory as over stdio, and Streamable
// HTTP with 2026-07-28), Recovery.Bind on the call's arguments and
// answer gives the arguments with which restore_from_trash brings the
// item back: out of the Trash, and live again.
func TestTrashRecoveries(t *testing.T) {
	spec := trashingTools(t)
	if got := slices.Sorted(maps.Keys(trashDeletions)); !slices.Equal(got, spec) {
		t.Fatalf("trashDeletions %v; the specification's deletions to the Trash %v", got, spec)
	}
	e := newEnv(t)
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	stdio, _ := e.connectCarried(secret)
	stateless, _ := e.connectKeyed(secret, "2026-07-28")
	for name, cs := range map[string]*mcp.ClientSession{"stdio": stdio, "2026-07-28": stateless} {
		t.Run(name, func(t *testing.T) {
			recoveries := map[string]*mcpeffect.Recovery{}
			for tool, err := range cs.Tools(t.Context(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				rec, err := host.RecoveryOf(tool)
				if err != nil {
					t.Errorf("%s: %v", tool.Name, err)
				}
				if rec != nil {
					recoveries[tool.Name] = rec
				}
			}
			if got := slices.Sorted(maps.Keys(recoveries)); !slices.Equal(got, spec) {
				t.Fatalf("tools that publish an undo: %v, want %v", got, spec)
			}
			for _, tool := range spec {
				rec := recoveries[tool]
				if rec.Strategy != mcpeffect.RecoveryCompensation || rec.CompensatingOperation.OperationID != undoTool {
					t.Errorf("%s: recovery %+v, want a compensation by %s", tool, rec, undoTool)
					continue
				}
				t.Run(tool, func(t *testing.T) { undoOnce(t, cs, tool, rec) })
			}
		})
	}
}

// undoOnce makes an item for tool to delete, deletes it through cs, binds
// rec on the call's arguments and answer, and checks that
// restore_from_trash, called with what Bind gives, restores it.
func undoOnce(t *testing.T, cs *mcp.ClientSession, tool string, rec *mcpeffect.Recovery) {
	task := must[store.Task](t, cs, "create_task", args{"title": "undo " + tool})
	var id string
	live := func() error { _, err := call[map[string]any](t, cs, "get_task", args{"task_id": id}); return err }
	switch tool {
	case "delete_task":
		id = task.ID
	case "delete_project":
		id = must[store.Project](t, cs, "create_project", args{"name": "undo " + tool}).ID
		live = func() error { _, err := call[map[string]any](t, cs, "get_project", args{"project_id": id}); return err }
	case "delete_step":
		id = must[store.Step](t, cs, "add_step", args{"task_id": task.ID, "text": "a step"}).ID
		live = func() error { _, err := call[map[string]any](t, cs, "get_step", args{"step_id": id}); return err }
	case "delete_comment":
		id = must[store.Comment](t, cs, "comment_on_task", args{"task_id": task.ID, "body": "a comment"}).ID
		live = func() error {
			for _, c := range must[commentsResult](t, cs, "list_comments", args{"task_id": task.ID}).Comments {
				if c.ID == id {
					return nil
				}
			}
			return errors.New("not among the task's comments")
		}
	default:
		t.Fatalf("no item to make for %s", tool)
	}
	inTrash := func() bool {
		for _, it := range must[trashResult](t, cs, "list_trash", args{"limit": 200}).Items {
			if it.ItemID == id {
				return true
			}
		}
		return false
	}

	request := args{trashDeletions[tool]: id}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: request})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %v", tool, err, res)
	}
	if !inTrash() || live() == nil {
		t.Fatalf("%s: the item is not in the Trash, or still live", tool)
	}
	reqJSON, _ := json.Marshal(request)
	resJSON, _ := json.Marshal(res.StructuredContent)
	bound, err := rec.Bind(reqJSON, resJSON)
	if err != nil {
		t.Fatalf("Bind: %v", err)
	}
	undo := map[string]any{}
	for k, v := range bound {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			t.Fatal(err)
		}
		undo[k] = x
	}
	restored := must[store.Restored](t, cs, rec.CompensatingOperation.OperationID, undo)
	if !restored.Restored || restored.ItemID != id {
		t.Errorf("%s with %v: %+v, want %s restored", undoTool, undo, restored, id)
	}
	if inTrash() {
		t.Errorf("after the undo, %s is still in the Trash", id)
	}
	if err := live(); err != nil {
		t.Errorf("after the undo, %s is not live: %v", id, err)
	}
}

// TestTrashRecoveryOfANoOp: delete_task on a task already in the Trash
// with its project does nothing, and answers with the project's entry;
// its undo, bound to the task it names, is refused, saying to restore the
// project, rather than restore the project that this call did not delete.
func TestTrashRecoveryOfANoOp(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connectCarried(e.mint("alice", store.Human, mcpeffect.Full))
	project := must[store.Project](t, cs, "create_project", args{"name": "Old"})
	task := must[store.Task](t, cs, "create_task", args{"title": "in Old", "project_id": project.ID})
	must[store.TrashItem](t, cs, "delete_project", args{"project_id": project.ID})
	request := args{"task_id": task.ID}
	item := must[store.TrashItem](t, cs, "delete_task", request)
	if item.ItemID != project.ID {
		t.Fatalf("delete_task on a task in the Trash with its project answered %+v", item)
	}
	rec, ok := e.registry.Recovery("delete_task")
	if !ok {
		t.Fatal("delete_task has no recovery")
	}
	reqJSON, _ := json.Marshal(request)
	resJSON, _ := json.Marshal(item)
	bound, err := rec.Bind(reqJSON, resJSON)
	if err != nil {
		t.Fatal(err)
	}
	var itemID string
	if err := json.Unmarshal(bound["item_id"], &itemID); err != nil || itemID != task.ID {
		t.Fatalf("bound %s, want the task", bound["item_id"])
	}
	_, err = call[store.Restored](t, cs, undoTool, args{"item_id": itemID})
	if !errors.Is(err, errToolFailed) || !strings.Contains(err.Error(), "restore that instead") {
		t.Errorf("the undo of the no-op: %v, want it refused, naming the project", err)
	}
	if got := must[trashResult](t, cs, "list_trash", args{}).Items; len(got) != 1 || got[0].ItemID != project.ID {
		t.Errorf("the Trash holds %+v, want the project still", got)
	}
}
