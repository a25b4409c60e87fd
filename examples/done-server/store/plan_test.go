package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// TestPagesReadByKey asks SQLite how it runs the queries of the lists (of
// tasks, whole and filtered, of a task's comments, subtasks and steps, of
// the pending approvals, of the Trash, the search and the agenda), as the
// store sends them: each reads in the list's order, from an index whose
// last column is the order's, and stops at the page's end, rather than
// reading every match and sorting them, or every row in order for a
// filter that matches few. (An index of trash_id once let the planner
// take "trash_id IS NULL" for a selective test, and sort every live
// task.) It runs them on one connection, whose compiled statements are
// the store's own texts.
func TestPagesReadByKey(t *testing.T) {
	sqliteOnly(t)
	ctx := t.Context()
	s, k, _ := openWithToken(t, &Options{Readers: 1})
	project, err := s.CreateProject(ctx, k.Actor(), NewProject{Name: "Launch"})
	if err != nil {
		t.Fatal(err)
	}
	var task Task
	for i := range 50 {
		if task, err = s.CreateTask(ctx, k.Actor(), NewTask{Title: fmt.Sprintf("task %d", i), Due: "2025-06-10", ProjectID: project.ID, Assignee: "alice"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		run   func() error
		query string // a part of the text of the query
		want  string // in its plan
	}{
		{"list_tasks", func() error { _, err := s.ListTasks(ctx, TaskFilter{Limit: 10}); return err },
			"ORDER BY t.id LIMIT", "SCAN t USING INDEX sqlite_autoindex_tasks_1"},
		{"list_tasks of a project", func() error { _, err := s.ListTasks(ctx, TaskFilter{ProjectID: project.ID, Limit: 10}); return err },
			"t.project_id = ? ORDER BY", "SEARCH t USING INDEX tasks_project (project_id=?)"},
		{"list_tasks of an assignee", func() error { _, err := s.ListTasks(ctx, TaskFilter{Assignee: "alice", Limit: 10}); return err },
			"t.assignee = ? ORDER BY", "SEARCH t USING INDEX tasks_assignee (assignee=?)"},
		{"list_tasks of a status", func() error { _, err := s.ListTasks(ctx, TaskFilter{Status: StatusBlocked, Limit: 10}); return err },
			"t.status = ? ORDER BY", "SEARCH t USING INDEX tasks_status (status=?)"},
		{"list_my_tasks", func() error { _, err := s.ListMyTasks(ctx, k.Actor(), TaskFilter{Limit: 10}); return err },
			"t.assignee = ? AND t.status <> 'done' ORDER BY", "SEARCH t USING INDEX tasks_assignee_open (assignee=?)"},
		{"list_comments", func() error { _, err := s.ListComments(ctx, task.ID, Page{Limit: 10}); return err },
			"c.task_id = ? AND c.trash_id IS NULL AND c.id > ? ORDER BY", "SEARCH c USING INDEX comments_task (task_id=? AND id>?)"},
		{"list_subtasks", func() error { _, err := s.ListSubtasks(ctx, task.ID, Page{Limit: 10}); return err },
			"t.parent_id = ? AND", "SEARCH t USING INDEX tasks_parent (parent_id=? AND id>?)"},
		{"list_steps", func() error { _, err := s.ListSteps(ctx, task.ID, Page{Limit: 10}); return err },
			"ORDER BY s.position, s.id LIMIT +?", "SEARCH s USING INDEX steps_task (task_id=?"},
		{"list_pending_approvals", func() error { _, err := s.ListPendingApprovals(ctx, Page{Limit: 10}); return err },
			"a.status = 'pending' AND t.trash_id IS NULL AND a.id > ? ORDER BY", "SEARCH a USING INDEX approvals_status (status=? AND id>?)"},
		{"list_trash", func() error { _, err := s.ListTrash(ctx, Page{Limit: 10}); return err },
			"FROM trash\n", "SEARCH trash USING INDEX trash_deleted ((deleted_at,id)<(?,?))"},
		{"the activity since a request", func() error {
			_, err := s.TaskActivitySince(ctx, task.ID, "2025-01-01T00:00:00.000Z", Page{Limit: 10})
			return err
		}, "(at, id) > (?, ?) ORDER BY at, id", "SEARCH activity USING INDEX activity_task_at (task_id=? AND at>?)"},
		{"search_tasks", func() error { _, err := s.SearchTasks(ctx, "task", Page{Limit: 10}); return err },
			"LIKE +?1", "SEARCH t USING INDEX sqlite_autoindex_tasks_1 (id>?)"},
		{"get_agenda", func() error {
			_, err := s.Agenda(ctx, k.Actor(), AgendaFilter{From: "2025-06-10", To: "2025-06-11"})
			return err
		}, "UNION ALL", "MERGE (UNION ALL)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.run(); err != nil {
				t.Fatal(err)
			}
			conn, err := s.reader.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var query string
			err = conn.Raw(func(dc any) error {
				for text := range dc.(*stmtCacheConn).stmts {
					if strings.Contains(text, c.query) {
						query = text
					}
				}
				return nil
			})
			if err != nil || query == "" {
				t.Fatalf("no query holding %q ran (%v)", c.query, err)
			}
			// The plan does not depend on the arguments' values.
			args := make([]any, maxParam(query))
			for i := range args {
				args[i] = ""
			}
			got := queryPlan(t, conn, query, args...)
			// The agenda sorts only the entries of one task on one day, the
			// last term of its order (due before scheduled).
			sorts := strings.ReplaceAll(got, "USE TEMP B-TREE FOR LAST TERM OF ORDER BY", "")
			if !strings.Contains(got, c.want) || strings.Contains(sorts, "TEMP B-TREE") || c.name != "get_agenda" && sorts != got {
				t.Errorf("the plan of\n%s\nis\n%s\nwant %q, and no sort", query, got, c.want)
			}
		})
	}
}

// maxParam returns how many arguments query takes: its highest ?N, or
// its count of ? if it numbers none.
func maxParam(query string) int {
	most := 0
	for i := 0; i < len(query); i++ {
		if query[i] != '?' {
			continue
		}
		n, j := 0, i+1
		for ; j < len(query) && query[j] >= '0' && query[j] <= '9'; j++ {
			n = n*10 + int(query[j]-'0')
		}
		if j == i+1 {
			return strings.Count(query, "?")
		}
		most = max(most, n)
	}
	return most
}

// TestGrantTreesReadByIndex asks SQLite how it walks the tree of tokens
// that one command-line token grew (the cap of live tokens, a revocation
// that ends all a token minted): each step down finds a token's children
// and calendar links by index, rather than reading every token and link
// there are once a level.
func TestGrantTreesReadByIndex(t *testing.T) {
	sqliteOnly(t)
	s, _, _ := openWithToken(t, &Options{Readers: 1})
	for _, c := range []struct {
		name, query string
		args        []any
		want        []string
	}{
		{"the cap of a tree", liveTreeCount, []any{"k", "now"}, []string{"SEARCH k USING INDEX tokens_created_by (created_by=?)"}},
		{"the tokens of a revocation", treeTokens, []any{"k"}, []string{"SEARCH k USING INDEX tokens_created_by (created_by=?)"}},
		{"the links of a revocation", treeLinks, []any{"k"}, []string{"SEARCH k USING INDEX tokens_created_by (created_by=?)", "SEARCH l USING INDEX calendar_links_created_by (created_by=?)"}},
		{"tokens revoked", revokeTreeTokens, []any{"k", "now"}, []string{"SEARCH k USING INDEX tokens_created_by (created_by=?)"}},
		{"links revoked", revokeTreeLinks, []any{"k", "now"}, []string{"SEARCH k USING INDEX tokens_created_by (created_by=?)", "SEARCH calendar_links USING INDEX calendar_links_created_by (created_by=?)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := queryPlan(t, s.reader, c.query, c.args...)
			for _, want := range c.want {
				if !strings.Contains(got, want) {
					t.Errorf("the plan of\n%s\nis\n%s\nwant %q", c.query, got, want)
				}
			}
		})
	}
}

// queryPlan returns how SQLite runs query with args on db, one step a
// line, as EXPLAIN QUERY PLAN says it.
func queryPlan(t *testing.T, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}
