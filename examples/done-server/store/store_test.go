package store

import (
	"io/fs"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

// TestReopen shows that the database is created once, in WAL mode, with
// every migration, and that data and the schema version survive reopening.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	s, created, err := openAt(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Error("a new database was not reported created")
	}
	k, _, err := s.MintToken(t.Context(), NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	task, err := s.CreateTask(t.Context(), k.Actor(), NewTask{Title: "persist"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, created, err = openAt(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if created {
		t.Error("an existing database was reported created")
	}
	got, err := s.GetTask(t.Context(), task.ID)
	if err != nil || got.Title != "persist" {
		t.Errorf("after reopening: %+v, %v", got, err)
	}
	var version int
	if s.Shared() {
		if err := s.reader.QueryRow("SELECT version FROM schema_version").Scan(&version); err != nil || version != lastMigration(t) {
			t.Errorf("schema_version %d (%v), want %d", version, err, lastMigration(t))
		}
		return
	}
	var mode string
	if err := s.reader.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q (%v), want wal", mode, err)
	}
	if err := s.reader.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != lastMigration(t) {
		t.Errorf("user_version %d (%v), want %d", version, err, lastMigration(t))
	}
}

// lastMigration is the number of the last migration.
func lastMigration(t *testing.T) int {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil || len(names) == 0 {
		t.Fatal(names, err)
	}
	n, err := strconv.Atoi(strings.SplitN(path.Base(names[len(names)-1]), "_", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWriteNeedsAnActor shows the safety net under the tools: a change
// recorded in the activity log without anyone behind it is refused.
func TestWriteNeedsAnActor(t *testing.T) {
	s, _, err := openAt(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateTask(t.Context(), Actor{}, NewTask{Title: "orphan"}); err == nil {
		t.Error("CreateTask without an actor succeeded")
	}
	page, err := s.ListTasks(t.Context(), TaskFilter{})
	if err != nil || len(page.Tasks) != 0 {
		t.Errorf("tasks after the refused write: %v, %v", page.Tasks, err)
	}
}
