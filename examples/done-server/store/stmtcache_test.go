package store

import (
	"context"
	"database/sql"
	"fmt"
	"go/ast"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestStmtCache runs queries through a connection that keeps compiled
// statements: a text is compiled once and reused, a second query of a
// text whose rows are still open gets a statement of its own (and both
// read what they should), and a full cache still runs every query.
func TestStmtCache(t *testing.T) {
	sqliteOnly(t)
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

// TestParametersPlannedWithoutValues holds every SQL text of the store to
// the rule of stmtcache.go: a parameter that SQLite would plan with its
// value (LIMIT ?, LIKE ?) is written +?, since SQLite compiles such a
// statement again each time a value is bound to it, cache or no cache.
// It reads the package's source: no run of SQLite shows how often a
// statement was compiled.
func TestParametersPlannedWithoutValues(t *testing.T) {
	sqliteOnly(t)
	bare := regexp.MustCompile(`(?i)\b(LIMIT|OFFSET|LIKE|GLOB|MATCH)\s+\?`)
	fset, files := storeSource(t)
	texts := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
			}
			if strings.Contains(s, "LIMIT") {
				texts++
			}
			if m := bare.FindString(s); m != "" {
				t.Errorf("%s: %q: write the parameter +? (see stmtcache.go)", fset.Position(lit.Pos()), m)
			}
			return true
		})
	}
	if texts < 20 {
		t.Errorf("only %d texts with a LIMIT found: is the source where the test looks?", texts)
	}
}

// BenchmarkParameterPlannedWithValue runs the query of a page of
// list_tasks and that of search_tasks as the store writes them (LIMIT +?,
// LIKE +?1) and with their parameters bare (LIMIT ?, LIKE ?1), which
// SQLite compiles again at each run, on one connection that keeps both
// compiled. Compare the two: go test -run '^$' -bench ParameterPlanned.
func BenchmarkParameterPlannedWithValue(b *testing.B) {
	ctx := b.Context()
	s, k, _ := openWithToken(b, &Options{Readers: 1})
	for i := range 200 {
		if _, err := s.CreateTask(ctx, k.Actor(), NewTask{Title: fmt.Sprintf("task %d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []struct {
		name  string
		run   func() error
		query string // a part of the query's text
		args  []any
	}{
		{"list_tasks", func() error { _, err := s.ListTasks(ctx, TaskFilter{Limit: 10}); return err }, "ORDER BY t.id LIMIT", []any{11}},
		{"search_tasks", func() error { _, err := s.SearchTasks(ctx, "task 1", Page{Limit: 10}); return err }, "LIKE +?1", []any{"%task 1%", "", 11}},
	} {
		if err := q.run(); err != nil {
			b.Fatal(err)
		}
		conn, err := s.reader.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var text string
		conn.Raw(func(dc any) error {
			for t := range dc.(*stmtCacheConn).stmts {
				if strings.Contains(t, q.query) {
					text = t
				}
			}
			return nil
		})
		if text == "" {
			b.Fatalf("%s: no query holding %q ran", q.name, q.query)
		}
		for _, v := range []struct{ name, text string }{
			{"as written", text},
			{"bare", strings.ReplaceAll(text, "+?", "?")},
		} {
			b.Run(q.name+"/"+v.name, func(b *testing.B) {
				for b.Loop() {
					rows, err := conn.QueryContext(ctx, v.text, q.args...)
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for rows.Next() {
						n++
					}
					if err := rows.Close(); err != nil || n != 11 {
						b.Fatalf("%d rows, %v", n, err)
					}
				}
			})
		}
		conn.Close()
	}
}
