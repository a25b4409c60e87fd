package store

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
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

// TestReplicasMigrateAtOnce starts several Stores at the same moment on
// one empty database, owned by an ordinary role: none fails, one makes
// the schema (a second run of a migration would fail, its tables being
// there), and all serve.
func TestReplicasMigrateAtOnce(t *testing.T) {
	if !pgtest.Postgres() {
		t.Skip("SQLite's file has one process migrating it at a time")
	}
	url := pgtest.NewDatabase(t)
	const replicas = 6
	var wg sync.WaitGroup
	start := make(chan struct{})
	stores := make([]*Store, replicas)
	created := make([]bool, replicas)
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Go(func() {
			<-start
			stores[i], created[i], errs[i] = OpenPostgres(t.Context(), url, nil)
		})
	}
	close(start)
	wg.Wait()
	made := 0
	for i := range replicas {
		if errs[i] != nil {
			t.Fatalf("replica %d: %v", i, errs[i])
		}
		defer stores[i].Close()
		if created[i] {
			made++
		}
		if _, _, err := stores[i].MintToken(t.Context(), NewToken{Name: fmt.Sprint("r", i), Kind: Agent, Scope: mcpeffect.Full}); err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	if made != 1 {
		t.Errorf("%d replicas made the schema, want 1", made)
	}
}

// TestRevokedAcrossStores: a token revoked through one Store is refused
// by another on the same database within a second, though the other
// keeps tokens in memory for an hour: the revocation is told to it.
func TestRevokedAcrossStores(t *testing.T) {
	if !pgtest.Postgres() {
		t.Skip("on SQLite, another process's revocation waits for the cache's ttl: TestAuthCache")
	}
	dir := t.TempDir()
	here, _, err := openAt(t, dir, &Options{AuthCache: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer here.Close()
	other, _, err := openAt(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for round := range 5 {
		k, secret, err := other.MintToken(t.Context(), NewToken{Name: "far", Kind: Agent, Scope: mcpeffect.Full})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := here.Authenticate(t.Context(), secret); err != nil {
			t.Fatal(err)
		}
		if _, err := other.RevokeAnyToken(t.Context(), k.ID); err != nil {
			t.Fatal(err)
		}
		revoked := time.Now()
		for {
			_, err := here.Authenticate(t.Context(), secret)
			if errors.Is(err, ErrBadToken) {
				t.Logf("round %d: refused %v after the revocation", round, time.Since(revoked))
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(revoked) > RevocationBound {
				t.Fatalf("round %d: a revoked token still works %v after its revocation", round, RevocationBound)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestOutage stops PostgreSQL under an open Store, as a crash of the
// server would: reads and writes are answered with ErrUnavailable, each
// within a bound, never a hang; once PostgreSQL is back, the same Store
// serves again, without being opened anew.
func TestOutage(t *testing.T) {
	if !pgtest.Postgres() {
		t.Skip("SQLite has no server to lose")
	}
	s, k, _ := openWithToken(t, nil)
	ctx := t.Context()
	if _, err := s.CreateTask(ctx, k.Actor(), NewTask{Title: "before"}); err != nil {
		t.Fatal(err)
	}
	const bound = connectTimeout + 2*time.Second
	err := pgtest.Start(t).Restart(func() {
		for _, call := range []struct {
			name string
			do   func() error
		}{
			{"a write", func() error { _, err := s.CreateTask(ctx, k.Actor(), NewTask{Title: "during"}); return err }},
			{"a read", func() error { _, err := s.ListTasks(ctx, TaskFilter{}); return err }},
		} {
			start := time.Now()
			err := call.do()
			if took := time.Since(start); !errors.Is(err, ErrUnavailable) || took > bound {
				t.Errorf("%s while PostgreSQL is down: %v after %v, want %v within %v", call.name, err, took, ErrUnavailable, bound)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := s.CreateTask(ctx, k.Actor(), NewTask{Title: "after"})
		if err == nil {
			break
		}
		if !errors.Is(err, ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("after PostgreSQL came back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
