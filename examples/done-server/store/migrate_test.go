package store

import (
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// legacyDB makes, in dir, a database as Done left it with the migrations
// up to version upTo applied, holding what legacy inserts: the data that a
// later migration finds there.
func legacyDB(t *testing.T, dir string, upTo int, legacy string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	for _, name := range names {
		n, err := strconv.Atoi(strings.SplitN(filepath.Base(name), "_", 2)[0])
		if err != nil || n > upTo {
			continue
		}
		script, err := migrations.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(script)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", upTo)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(legacy); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateAutoClose opens a database of before migration 7, made when
// agents could make tasks and projects auto-close and nothing recorded
// who did: the settings the activity log traces to a person keep, naming
// them, and the others are turned off, so that closing those tasks asks a
// person again.
func TestMigrateAutoClose(t *testing.T) {
	sqliteOnly(t)
	dir := t.TempDir()
	legacyDB(t, dir, 6, `
INSERT INTO tokens (id, secret_hash, name, kind, scope, created_at) VALUES
	('k-alice', x'01', 'alice', 'human', 'full', '2025-06-01T00:00:00.000Z'),
	('k-bot', x'02', 'bot', 'agent', 'full', '2025-06-01T00:00:00.000Z');
INSERT INTO projects (id, name, auto_close, created_at, updated_at) VALUES
	('p-alice', 'made by alice', 1, '2025-06-01T00:00:00.000Z', '2025-06-01T00:00:00.000Z'),
	('p-bot', 'made by bot', 1, '2025-06-01T00:00:00.000Z', '2025-06-01T00:00:00.000Z'),
	('p-changed', 'made by alice, set by bot', 1, '2025-06-01T00:00:00.000Z', '2025-06-01T00:00:00.000Z'),
	('p-off', 'not auto-close', 0, '2025-06-01T00:00:00.000Z', '2025-06-01T00:00:00.000Z');
INSERT INTO tasks (id, project_id, title, status, priority, auto_close, created_at, created_by, updated_at) VALUES
	('t-alice', NULL, 'alice, her argument', 'open', 'normal', 1, '2025-06-01T00:00:00.000Z', 'alice', '2025-06-01T00:00:00.000Z'),
	('t-bot', NULL, 'bot, its argument', 'open', 'normal', 1, '2025-06-01T00:00:00.000Z', 'bot', '2025-06-01T00:00:00.000Z'),
	('t-inherited', 'p-alice', 'alice, from a project', 'open', 'normal', 1, '2025-06-01T00:00:00.000Z', 'alice', '2025-06-01T00:00:00.000Z'),
	('t-updated', NULL, 'bot, then alice', 'open', 'normal', 1, '2025-06-01T00:00:00.000Z', 'bot', '2025-06-01T00:00:00.000Z'),
	('t-off', NULL, 'not auto-close', 'open', 'normal', 0, '2025-06-01T00:00:00.000Z', 'alice', '2025-06-01T00:00:00.000Z');
INSERT INTO activity (at, token_id, actor, actor_kind, action, subject_kind, subject_id, task_id, details) VALUES
	('2025-06-01T00:00:00.000Z', 'k-alice', 'alice', 'human', 'create_project', 'project', 'p-alice', NULL, '{"name":"x"}'),
	('2025-06-01T00:00:00.000Z', 'k-bot', 'bot', 'agent', 'create_project', 'project', 'p-bot', NULL, '{"name":"x"}'),
	('2025-06-01T00:00:00.000Z', 'k-alice', 'alice', 'human', 'create_project', 'project', 'p-changed', NULL, '{"name":"x"}'),
	('2025-06-01T00:00:01.000Z', 'k-bot', 'bot', 'agent', 'update_project', 'project', 'p-changed', NULL, '{"auto_close":{"old":false,"new":true}}'),
	('2025-06-01T00:00:02.000Z', 'k-alice', 'alice', 'human', 'update_project', 'project', 'p-changed', NULL, '{"name":{"old":"a","new":"b"}}'),
	('2025-06-01T00:00:00.000Z', 'k-alice', 'alice', 'human', 'create_task', 'task', 't-alice', 't-alice', '{"title":"x"}'),
	('2025-06-01T00:00:00.000Z', 'k-bot', 'bot', 'agent', 'create_task', 'task', 't-bot', 't-bot', '{"title":"x"}'),
	('2025-06-01T00:00:00.000Z', 'k-alice', 'alice', 'human', 'create_task', 'task', 't-inherited', 't-inherited', '{"title":"x"}'),
	('2025-06-01T00:00:00.000Z', 'k-bot', 'bot', 'agent', 'create_task', 'task', 't-updated', 't-updated', '{"title":"x"}'),
	('2025-06-01T00:00:01.000Z', 'k-alice', 'alice', 'human', 'update_task', 'task', 't-updated', 't-updated', '{"auto_close":{"old":false,"new":true}}');
`)
	s, _, err := Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		kind, id string
		by       string // "" for no longer auto-close
	}{
		{"project", "p-alice", "alice"},
		{"project", "p-bot", ""},
		{"project", "p-changed", ""},
		{"project", "p-off", ""},
		{"task", "t-alice", "alice"},
		{"task", "t-bot", ""},
		{"task", "t-inherited", ""},
		{"task", "t-updated", "alice"},
		{"task", "t-off", ""},
	} {
		var autoClose bool
		var by string
		err := s.reader.QueryRow(`SELECT auto_close, auto_close_by FROM `+c.kind+`s WHERE id = ?`, c.id).Scan(&autoClose, &by)
		if err != nil {
			t.Fatal(err)
		}
		if autoClose != (c.by != "") || by != c.by {
			t.Errorf("%s %s: auto_close %t by %q, want by %q", c.kind, c.id, autoClose, by, c.by)
		}
	}
	// The database keeps the rule from now on.
	if _, err := s.writer.Exec(`UPDATE tasks SET auto_close = 1 WHERE id = 't-off'`); err == nil {
		t.Error("the database took an auto-close task that names no one")
	}
}

// TestMigrateOrigins opens a database of before migration 8, where minted
// tokens could outlive their parents and links their tokens: the tokens
// and links already there come under the rule.
func TestMigrateOrigins(t *testing.T) {
	sqliteOnly(t)
	dir := t.TempDir()
	legacyDB(t, dir, 7, `
INSERT INTO tokens (id, secret_hash, name, kind, scope, created_at, created_by, expires_at, revoked_at) VALUES
	('k-root', x'01', 'alice', 'human', 'full', '2025-06-01T00:00:00.000Z', NULL, '2025-07-01T00:00:00.000Z', '2025-06-10T00:00:00.000Z'),
	('k-child', x'02', 'bot', 'agent', 'full', '2025-06-02T00:00:00.000Z', 'k-root', NULL, NULL),
	('k-grandchild', x'03', 'bot', 'agent', 'full', '2025-06-03T00:00:00.000Z', 'k-child', '2026-01-01T00:00:00.000Z', NULL),
	('k-live', x'04', 'carol', 'human', 'full', '2025-06-01T00:00:00.000Z', NULL, '2025-08-01T00:00:00.000Z', NULL),
	('k-live-child', x'05', 'robot', 'agent', 'full', '2025-06-02T00:00:00.000Z', 'k-live', NULL, NULL),
	('k-short', x'06', 'robot', 'agent', 'full', '2025-06-02T00:00:00.000Z', 'k-live', '2025-07-01T00:00:00.000Z', NULL);
INSERT INTO calendar_links (id, secret_hash, owner, name, created_at, created_by) VALUES
	('l-dead', x'11', 'bot', 'feed of a revoked chain', '2025-06-03T00:00:00.000Z', 'k-grandchild'),
	('l-live', x'12', 'robot', 'feed of a live chain', '2025-06-03T00:00:00.000Z', 'k-live-child');
`)
	s, _, err := Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		table, id        string
		expires, revoked string
	}{
		{"tokens", "k-child", "2025-07-01T00:00:00.000Z", "2025-06-10T00:00:00.000Z"},
		{"tokens", "k-grandchild", "2025-07-01T00:00:00.000Z", "2025-06-10T00:00:00.000Z"},
		{"tokens", "k-live-child", "2025-08-01T00:00:00.000Z", ""},
		{"tokens", "k-short", "2025-07-01T00:00:00.000Z", ""},
		{"calendar_links", "l-dead", "", "2025-06-10T00:00:00.000Z"},
		{"calendar_links", "l-live", "", ""},
	} {
		expiry := "''"
		if c.table == "tokens" {
			expiry = "COALESCE(expires_at, '')"
		}
		var expires, revoked string
		err := s.reader.QueryRow(`SELECT `+expiry+`, COALESCE(revoked_at, '') FROM `+c.table+` WHERE id = ?`, c.id).Scan(&expires, &revoked)
		if err != nil {
			t.Fatal(err)
		}
		if expires != c.expires || revoked != c.revoked {
			t.Errorf("%s %s: expires %q, revoked %q; want %q, %q", c.table, c.id, expires, revoked, c.expires, c.revoked)
		}
	}
}

// TestMigrateRunProgress opens a database of before migration 9, whose
// runs kept their progress in a column that each report overwrote: the
// column is gone, and a run's progress is its last report's, from its
// log, which every report wrote to as well.
func TestMigrateRunProgress(t *testing.T) {
	sqliteOnly(t)
	dir := t.TempDir()
	legacyDB(t, dir, 8, `
INSERT INTO tasks (id, title, status, priority, auto_close, created_at, created_by, updated_at) VALUES
	('t', 'a task', 'open', 'normal', 0, '2025-06-01T00:00:00.000Z', 'alice', '2025-06-01T00:00:00.000Z');
INSERT INTO runs (id, task_id, agent, status, queued_at, queued_by, started_at, last_progress_at, progress) VALUES
	('0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a01', 't', 'bot', 'running', '2025-06-01T00:00:00.000Z', 'alice', '2025-06-01T00:00:01.000Z', '2025-06-01T00:00:04.000Z', 70),
	('0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a02', 't', 'bot', 'failed', '2025-06-01T00:00:00.000Z', 'alice', '2025-06-01T00:00:01.000Z', NULL, NULL);
INSERT INTO run_events (run_id, at, token_id, actor, kind, message, progress) VALUES
	('0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a01', '2025-06-01T00:00:02.000Z', 'k', 'bot', 'progress', 'a third', 30),
	('0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a01', '2025-06-01T00:00:03.000Z', 'k', 'bot', 'progress', 'most of it', 70),
	('0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a01', '2025-06-01T00:00:04.000Z', 'k', 'bot', 'progress', 'a heartbeat', NULL);
`)
	s, _, err := Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id, want := range map[string]string{"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a01": "70", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a02": "<nil>"} {
		r, err := s.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		got := "<nil>"
		if r.Progress != nil {
			got = strconv.Itoa(*r.Progress)
		}
		if got != want || r.LastProgressAt != map[string]string{"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a01": "2025-06-01T00:00:04.000Z", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a02": ""}[id] {
			t.Errorf("run %s: progress %s, last progress at %q; want %s", id, got, r.LastProgressAt, want)
		}
	}
	if _, err := s.writer.Exec(`UPDATE runs SET progress = 1`); err == nil {
		t.Error("the runs table still has a progress column")
	}
}

// TestMigrateDigestMarks opens a database of before migration 10, which
// kept one mark a reader and digest, written over: the marks there are
// kept, and a reader may now have several marks of a digest.
func TestMigrateDigestMarks(t *testing.T) {
	sqliteOnly(t)
	dir := t.TempDir()
	legacyDB(t, dir, 9, `
INSERT INTO digest_reads (reader, digest_id, read_at, token_id) VALUES
	('alice', 'day-2025-06-02', '2025-06-02T10:00:00.000Z', 'k-alice'),
	('bot', 'day-2025-06-02', '2025-06-02T11:00:00.000Z', 'k-bot');
`)
	s, _, err := Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.writer.Exec(`INSERT INTO digest_reads (reader, digest_id, read_at, token_id) VALUES
		('alice', 'day-2025-06-02', '2025-06-02T12:00:00.000Z', 'k-alice')`); err != nil {
		t.Fatalf("a second mark of alice's: %v", err)
	}
	rows, err := s.reader.Query(`SELECT reader || ' ' || read_at || ' ' || token_id FROM digest_reads ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	want := []string{
		"alice 2025-06-02T10:00:00.000Z k-alice",
		"alice 2025-06-02T12:00:00.000Z k-alice",
		"bot 2025-06-02T11:00:00.000Z k-bot",
	}
	if !slices.Equal(got, want) {
		t.Errorf("digest_reads after the migration:\n%v\nwant\n%v", got, want)
	}
}
