package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// TestStmtCache runs queries through a connection that keeps compiled
// statements: a text is compiled once and reused, a second query of a
// text whose rows are still open gets a statement of its own (and both
// read what they should), and a full cache still runs every query.
func TestStmtCache(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name     string
		size     int
		want     int // statements kept after the queries below
		distinct int // texts run
	}{
		{"room for all", 16, 3, 3},
		{"full", 2, 2, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, k, _ := openWithToken(t, &Options{StmtCache: c.size})
			for i := range 3 {
				if _, err := s.CreateTask(ctx, k.Actor(), NewTask{Title: fmt.Sprintf("task %d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			conn, err := s.reader.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			const titles = `SELECT title FROM tasks ORDER BY id`
			outer, err := conn.QueryContext(ctx, titles)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for outer.Next() {
				var title string
				if err := outer.Scan(&title); err != nil {
					t.Fatal(err)
				}
				// The same text while the rows of the first are open.
				var n int
				if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM tasks WHERE title <= ?`, title).Scan(&n); err != nil {
					t.Fatal(err)
				}
				inner := mustTitles(ctx, t, conn, titles)
				got = append(got, fmt.Sprintf("%s %d %d", title, n, len(inner)))
			}
			if err := outer.Close(); err != nil {
				t.Fatal(err)
			}
			want := []string{"task 0 1 3", "task 1 2 3", "task 2 3 3"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got %v, want %v", got, want)
			}
			if again := mustTitles(ctx, t, conn, titles); len(again) != 3 {
				t.Errorf("after the rows closed: %v", again)
			}
			if _, err := conn.ExecContext(ctx, `SELECT 1`); err != nil {
				t.Fatal(err)
			}
			err = conn.Raw(func(dc any) error {
				cc, ok := dc.(*stmtCacheConn)
				if !ok {
					return fmt.Errorf("the connection is a %T, not a *stmtCacheConn", dc)
				}
				if len(cc.stmts) != c.want {
					return fmt.Errorf("%d statements kept after %d texts, want %d", len(cc.stmts), c.distinct, c.want)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
}

func mustTitles(ctx context.Context, t *testing.T, conn *sql.Conn, query string) []string {
	t.Helper()
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
