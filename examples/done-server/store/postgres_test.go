package store

import (
	"io/fs"
	"path"
	"slices"
	"testing"
)

// TestRewrite holds the rewriting of SQLite's queries for PostgreSQL to
// what the store's queries need.
func TestRewrite(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		args           []int
	}{
		{"bare", `SELECT 1 FROM t WHERE a = ? AND b = ?`, `SELECT 1 FROM t WHERE a = $1 AND b = $2`, []int{1, 2}},
		{"numbered, reused", `WHERE a = ?1 OR b = ?1 AND c > ?2`, `WHERE a = $1 OR b = $1 AND c > $2`, []int{1, 2}},
		{"a bare one after a number", `WHERE a = ?2 AND b = ?`, `WHERE a = $1 AND b = $2`, []int{2, 3}},
		{"an argument left unused", `WHERE l.id = ?3 AND l.owner = ?1`, `WHERE l.id = $1 AND l.owner = $2`, []int{3, 1}},
		{"hidden from the planner", `LIMIT +?`, `LIMIT $1`, []int{1}},
		{"addition stays", `SET n = n + ?`, `SET n = n + $1`, []int{1}},
		{"LIKE", `WHERE t.title LIKE +?1 ESCAPE '\' OR x like ?1`, `WHERE t.title ILIKE $1 ESCAPE '\' OR x ILIKE $1`, []int{1}},
		{"words with like in them", `SELECT likes, unlike FROM dislike`, `SELECT likes, unlike FROM dislike`, nil},
		{"quoted text", `SELECT 'a?b LIKE' FROM "x?" WHERE a = ?`, `SELECT 'a?b LIKE' FROM "x?" WHERE a = $1`, []int{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := rewrite(c.in)
			if p.text != c.want || !slices.Equal(p.args, c.args) {
				t.Errorf("rewrite(%q) = %q %v, want %q %v", c.in, p.text, p.args, c.want, c.args)
			}
		})
	}
	text, args := pgQuery(`WHERE a = ?2 AND b = ?1`, []any{true, "x"})
	if text != `WHERE a = $1 AND b = $2` || !slices.Equal(args, []any{"x", 1}) {
		t.Errorf("pgQuery = %q %v", text, args)
	}
}

// TestMigrationsPaired holds the layout of the migrations: from the
// schema PostgreSQL starts at, each number has one file for each store.
func TestMigrationsPaired(t *testing.T) {
	numbers := func(pattern string) []string {
		names, err := fs.Glob(migrations, pattern)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range names {
			out = append(out, path.Base(n)[:4])
		}
		return out
	}
	lite, pg := numbers("migrations/*.sql"), numbers("migrations/postgres/*.sql")
	if len(pg) == 0 || pg[0] != "0015" {
		t.Fatalf("PostgreSQL's migrations %v: want the schema at 0015 first", pg)
	}
	i := slices.Index(lite, "0015")
	if i < 0 || !slices.Equal(lite[i:], pg) {
		t.Errorf("SQLite's migrations from 0015 %v, PostgreSQL's %v: want one of each number", lite[max(i, 0):], pg)
	}
}
