package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDump reads a real SQLite database: a record for each row, keyed by
// its primary key, a composite one, or its rowid; a blob in base64; and a
// record for each thing of the schema, an empty table's too.
func TestDump(t *testing.T) {
	file := filepath.Join(t.TempDir(), "db.sqlite")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE tasks (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT, done INTEGER)`,
		`CREATE TABLE labels (task INTEGER, label TEXT, PRIMARY KEY (task, label)) WITHOUT ROWID`,
		`CREATE TABLE log (what TEXT, data BLOB)`,
		`CREATE TABLE "odd ""name""" (k TEXT PRIMARY KEY)`,
		`CREATE INDEX tasks_done ON tasks (done)`,
		`INSERT INTO tasks (title, done) VALUES ('Milk', 0), ('Eggs', 1)`,
		`INSERT INTO labels VALUES (1, 'urgent')`,
		`INSERT INTO log VALUES ('made', x'ff00')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	var out bytes.Buffer
	if err := dump(&out, file, defaultBounds); err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"tasks/1":                  `{"done":0,"id":1,"title":"Milk"}`,
		"tasks/2":                  `{"done":1,"id":2,"title":"Eggs"}`,
		"labels/1/urgent":          `{"label":"urgent","task":1}`,
		"log/1":                    `{"data":"/wA=","what":"made"}`,
		"schema/index/tasks_done":  `{"sql":"CREATE INDEX tasks_done ON tasks (done)","table":"tasks"}`,
		`schema/table/odd "name"`:  `{"sql":"CREATE TABLE \"odd \"\"name\"\"\" (k TEXT PRIMARY KEY)","table":"odd \"name\""}`,
		"schema/table/labels":      "",
		"schema/table/log":         "",
		"schema/table/tasks":       "",
		"schema/index/sqlite_auto": "-", // SQLite's own index is left out
	}
	for key, w := range want {
		rec, ok := got[key]
		switch {
		case w == "-":
			continue
		case !ok:
			t.Errorf("no record %q in %s", key, out.String())
		case w != "":
			raw, _ := json.Marshal(rec)
			if string(raw) != w {
				t.Errorf("record %q = %s, want %s", key, raw, w)
			}
		}
	}
	for key := range got {
		if strings.Contains(key, "sqlite_") {
			t.Errorf("SQLite's own record %q is in the state", key)
		}
	}
	if len(got) != len(want)-1 {
		t.Errorf("%d records, want %d: %s", len(got), len(want)-1, out.String())
	}
}

func TestDumpNotADatabase(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := dump(&out, filepath.Join(dir, "none.sqlite"), defaultBounds); err != nil || strings.TrimSpace(out.String()) != "{}" {
		t.Errorf("a database not yet made: %q, %v; want {}", out.String(), err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := dump(&out, filepath.Join(dir, "pipe"), defaultBounds); err == nil {
		t.Error("a FIFO read as a database")
	}
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte("not a database"), 0o644)
	if err := dump(&out, text, defaultBounds); err == nil {
		t.Error("a text file read as a database")
	}
}
