package web

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// TestAt shows a stored time as a person reads it, in their zone, and
// keeps the stamp.
func TestAt(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		zone *time.Location
		want string
	}{
		{"2026-12-01T21:40:21.816Z", time.UTC, "1 Dec 2026, 21:40"},
		{"2026-12-01T21:40:21.816Z", paris, "1 Dec 2026, 22:40"},
		{"2026-06-30T23:30:00.000Z", paris, "1 Jul 2026, 01:30"},
		{"not a time", paris, "not a time"},
		{"", paris, ""},
	} {
		if got := at(c.zone, c.in); got.Text != c.want || got.Stamp != c.in {
			t.Errorf("at(%s, %q) = %+v, want %q", c.zone, c.in, got, c.want)
		}
	}
}

// TestLoadZone takes the IANA names of time zones and nothing else.
func TestLoadZone(t *testing.T) {
	for _, ok := range []string{"Europe/Paris", "UTC", "America/Argentina/Buenos_Aires", "Etc/GMT+3"} {
		if _, err := loadZone(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Local", "../../etc/passwd", "Europe/Nowhere", "Europe/Paris\x00", strings.Repeat("A", 65), "Europe/Pa ris"} {
		if _, err := loadZone(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
	for _, z := range commonZones {
		if _, err := loadZone(z); err != nil {
			t.Errorf("the offered zone %s: %v", z, err)
		}
	}
}

// TestDidEveryAction holds the words of the activity log to the store:
// every action it records, read from its source (the literal names and
// those it makes of a verb), reads as words, not as the name of the
// action.
func TestDidEveryAction(t *testing.T) {
	files, err := filepath.Glob("../store/*.go")
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]bool{
		// Made at run time: approve_task and reject_task of a verb,
		// archive_project, start_run and the others of a variable.
		"approve_task": true, "reject_task": true, "archive_project": true, "unarchive_project": true,
		"start_run": true, "retry_run": true, "assign_task": true, "claim_task": true, "confirm_call": true, "decline_call": true,
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "record" {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				actions[s] = true
			}
			return true
		})
	}
	if len(actions) < 50 {
		t.Fatalf("only %d actions found in the store's source", len(actions))
	}
	for action := range actions {
		words := did(store.Activity{Action: action, SubjectKind: "task", Actor: "bot"})
		if strings.Contains(words, "_") || strings.Contains(words, "(") || words == "" {
			t.Errorf("%s reads %q", action, words)
		}
	}
	for _, c := range []struct {
		a    store.Activity
		want string
	}{
		{store.Activity{Action: "request_approval", Details: map[string]any{"kind": "close"}}, "asked to close the task"},
		{store.Activity{Action: "set_step_status", Details: map[string]any{"status": map[string]any{"old": "todo", "new": "done"}}}, "marked a step done"},
		{store.Activity{Action: "claim_task", Actor: "bot", Details: map[string]any{"assignee": map[string]any{"old": "", "new": "bot"}}}, "took the task"},
		{store.Activity{Action: "assign_task", Actor: "alice", Details: map[string]any{"assignee": map[string]any{"old": "", "new": "bot"}}}, "assigned the task to bot"},
		{store.Activity{Action: "restore_from_trash", SubjectKind: "step"}, "restored a step from the Trash"},
		{store.Activity{Action: "frobnicate_task", SubjectKind: "task"}, "frobnicate task (task)"},
	} {
		if got := did(c.a); got != c.want {
			t.Errorf("did(%+v) = %q, want %q", c.a, got, c.want)
		}
	}
}
