package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConnectorTools searches, reads and saves documents of the default
// connector, the context folder, and keeps references to them on a task;
// the closed-world tools of the group never call the connector.
func TestConnectorTools(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	folder := filepath.Join(e.dir, "context")
	writeFile(t, filepath.Join(folder, "notes", "plan.md"), "# Launch plan\n\nShip on Friday, after the review.\n")
	writeFile(t, filepath.Join(folder, "todo.txt"), "call the venue\n")
	writeFile(t, filepath.Join(e.dir, "outside.md"), "# Outside\n\nFriday is a secret.\n")
	task := must[store.Task](t, alice, "create_task", args{"title": "Prepare the launch"})

	status := func() connectorStatus {
		t.Helper()
		list := must[connectorsResult](t, alice, "list_connectors", nil).Connectors
		if len(list) != 1 || list[0].Name != "local" || list[0].Kind != "folder" || strings.Contains(list[0].Location, e.dir) {
			t.Fatalf("list_connectors: %+v", list)
		}
		return list[0]
	}

	// References are kept without calling the connector.
	ref := "local:notes/plan.md"
	refs := must[taskContextResult](t, alice, "attach_context_to_task", args{"task_id": task.ID, "ref": ref, "title": "Launch plan"}).Refs
	if len(refs) != 1 || refs[0].Ref != ref || refs[0].AttachedBy != "alice" {
		t.Errorf("attach_context_to_task: %+v", refs)
	}
	before := e.dump()
	must[taskContextResult](t, alice, "attach_context_to_task", args{"task_id": task.ID, "ref": ref, "title": "Launch plan"})
	if e.dump() != before {
		t.Error("attaching a reference again changed something")
	}
	if refs := must[taskContextResult](t, alice, "list_task_context", args{"task_id": task.ID}).Refs; len(refs) != 1 {
		t.Errorf("list_task_context: %+v", refs)
	}
	mustFail(t, alice, "attach_context_to_task", args{"task_id": task.ID, "ref": "drive:1x2y"}, `no connector is called "drive"`)
	mustFail(t, alice, "attach_context_to_task", args{"task_id": task.ID, "ref": "local:"}, "is not a reference")
	mustFail(t, alice, "attach_context_to_task", args{"task_id": task.ID, "ref": "notes/plan.md"}, "is not a reference")
	if refs := must[taskContextResult](t, alice, "detach_context_from_task", args{"task_id": task.ID, "ref": ref}).Refs; len(refs) != 0 {
		t.Errorf("detach_context_from_task: %+v", refs)
	}
	if s := status(); s.Status != "unused" || s.LastCallAt != "" {
		t.Errorf("the closed-world tools called the connector: %+v", s)
	}

	found := must[searchContextResult](t, alice, "search_context", args{"query": "friday"}).Results
	if len(found) != 1 || found[0].Ref != ref || found[0].Title != "Launch plan" || !strings.Contains(found[0].Snippet, "Ship on Friday") {
		t.Errorf("search_context: %+v", found)
	}
	if s := status(); s.Status != "ok" || s.LastCallAt == "" {
		t.Errorf("list_connectors after a search: %+v", s)
	}
	doc := must[contextDocument](t, alice, "read_context", args{"ref": ref})
	if doc.Connector != "local" || doc.ID != "notes/plan.md" || doc.Text != "# Launch plan\n\nShip on Friday, after the review.\n" {
		t.Errorf("read_context: %+v", doc)
	}
	for _, c := range []struct{ ref, want string }{
		{"local:../outside.md", "not a path inside the folder"},
		{"local:/etc/hostname.txt", "not a path inside the folder"},
		{"local:../done.db", "not a path inside the folder"},
		{"local:notes/none.md", "does not exist"},
		{"drive:1x2y", `no connector is called "drive"`},
		{"plan.md", "is not a reference"},
	} {
		mustFail(t, alice, "read_context", args{"ref": c.ref}, c.want)
	}
	mustFail(t, alice, "search_context", args{"query": "x", "connector": "slack"}, `no connector is called "slack"`)
	mustFail(t, alice, "search_context", args{"query": "x", "limit": 51}, "out of range")
	mustFail(t, alice, "search_context", args{"query": " "}, "query is empty")

	// save_context makes new files, and never overwrites one.
	saved := must[contextDocument](t, alice, "save_context", args{"title": "Meeting notes", "text": "Venue booked.", "folder": "notes"})
	again := must[contextDocument](t, alice, "save_context", args{"title": "Meeting notes", "text": "Second meeting.", "folder": "notes"})
	if saved.Ref != "local:notes/meeting-notes.md" || again.Ref != "local:notes/meeting-notes-2.md" {
		t.Errorf("save_context twice: %s, %s", saved.Ref, again.Ref)
	}
	if data, err := os.ReadFile(filepath.Join(folder, "notes", "meeting-notes.md")); err != nil || string(data) != "# Meeting notes\n\nVenue booked.\n" {
		t.Errorf("the first saved file: %q, %v", data, err)
	}
	d := must[store.Digest](t, alice, "get_digest", nil)
	if d.Changes.ByAction["save_context"] != 2 || d.Changes.Items[0].SubjectID != again.Ref || d.Changes.Items[0].Actor != "alice" {
		t.Errorf("the activity of save_context: %v, newest %+v", d.Changes.ByAction, d.Changes.Items[0].Activity)
	}
	mustFail(t, alice, "save_context", args{"title": "Escape", "text": "x", "folder": "../.."}, "not a folder inside")
	if _, err := os.Stat(filepath.Join(e.dir, "..", "escape.md")); err == nil {
		t.Error("save_context wrote outside the folder")
	}
	if found := must[searchContextResult](t, alice, "search_context", args{"query": "venue", "connector": "local"}).Results; len(found) != 2 {
		t.Errorf("searching for what was saved and what was there: %+v", found)
	}
}

// TestSearchContextHostileText is the crash of issue 9 through MCP: a
// non-destructive agent saves a document whose text grows when
// lower-cased, and a read-only token searches it. The search answers, and
// the server serves the next call.
func TestSearchContextHostileText(t *testing.T) {
	e := newEnv(t)
	agent := e.connect(e.mint("planter", store.Agent, mcpeffect.NonDestructive))
	reader := e.connect(e.mint("rita", store.Human, mcpeffect.ReadOnly))
	for _, text := range []string{strings.Repeat("Ⱥ", 2000) + " the launch plan", strings.Repeat("\u212a", 2000) + " the launch plan", "plan"} {
		must[contextDocument](t, agent, "save_context", args{"title": "Note", "text": text})
	}
	for _, query := range []string{"plan", "PLAN", "ⱥⱥ the", "ȺȺȺ"} {
		found := must[searchContextResult](t, reader, "search_context", args{"query": query})
		if len(found.Results) == 0 || len(found.Incomplete) != 0 {
			t.Errorf("search_context %q: %+v", query, found)
		}
	}
	if me := must[whoamiResult](t, reader, "whoami", nil); me.Name != "rita" {
		t.Errorf("whoami after the searches: %+v", me)
	}
}

// TestConnectorFaultShowsNoPath breaks the context folder (a file where
// it should be): the search fails, and list_connectors tells a read-only
// caller that the connector is failing, without the error's text, which
// names the folder's path on the server's disk.
func TestConnectorFaultShowsNoPath(t *testing.T) {
	e := newEnv(t)
	reader := e.connect(e.mint("rita", store.Human, mcpeffect.ReadOnly))
	folder := filepath.Join(e.dir, "context")
	if err := os.RemoveAll(folder); err != nil {
		t.Fatal(err)
	}
	writeFile(t, folder, "not a folder")
	mustFail(t, reader, "search_context", args{"query": "plan"}, "no source could be searched")
	list := must[connectorsResult](t, reader, "list_connectors", nil).Connectors
	if len(list) != 1 || list[0].Status != "failing" || list[0].LastError == "" {
		t.Fatalf("list_connectors after a fault: %+v", list)
	}
	if s := fmt.Sprintf("%+v", list[0]); strings.Contains(s, e.dir) || strings.Contains(s, "not a directory") {
		t.Errorf("list_connectors shows the fault's text: %s", s)
	}
}
