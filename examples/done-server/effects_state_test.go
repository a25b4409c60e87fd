package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
)

// This file is the state that TestEffectsProved holds Done's tools to:
// what Done's users see as data, as records by key ("task/<id>" and its
// fields), taken from the real tables of the database and from the files
// of the context folder, which the local connector reaches.
//
// Every table and every column of the database is either mapped below
// (tables) or left out as bookkeeping (bookkeeping), and the state fails
// on any other: a migration that adds a table or a column must say here
// what users see of it, so that nothing new escapes the proof unseen.

// bookkeeping is what the state leaves out, each with why users do not see
// it as data. It is the one list of what the proof cannot see: keep it
// short, and never add to it to make a tool pass.
var bookkeeping = map[string]string{
	"activity":     "the activity log itself: the record of changes, which every write appends to, not data of its own",
	"used_answers": "the nonces of the confirmations' answers already used, kept until they expire: the confirmation's bookkeeping, which no tool shows",

	"idempotency_records": "the calls made with an idempotency key and the answers kept for their retries (migration 0021), which no tool shows: the bookkeeping of SEP-3182",

	"tasks.updated_at":    "when a task last changed: a trace of the changes, which the task's other fields show",
	"projects.updated_at": "when a project last changed: a trace of the changes, which its other fields show",
	"steps.updated_at":    "when a step last changed: a trace of the changes, which its other fields show",

	"tokens.last_used_at":            "when a token was last used, to the minute: a heartbeat that any call writes, reads too",
	"calendar_links.last_fetched_at": "when a calendar application last polled a feed, to the minute: a heartbeat of the feed",
	"runs.last_progress_at":          "the time of a run's last heartbeat, which run_events keeps as records of their own",

	// Outside the database: list_connectors shows how the last call to
	// each connector went (unused, ok or failing, and when), which the
	// server keeps in memory for the time it runs. It is the health of a
	// source, as a heartbeat is, not data anyone made; search_context and
	// read_context update it.
	"memory: connector status": "the outcome and time of the last call to each connector, in memory: a health signal, lost at restart",
}

// A tableMap says how the rows of one table become records of the state.
type tableMap struct {
	// key returns the key of the record of a row.
	key func(row map[string]any) string
	// columns says how each column shows in the record. Every column of
	// the table must be here or in bookkeeping.
	columns map[string]column
}

// A column puts the value v of the column called name into rec.
type column func(rec mcpeffecttest.Record, name string, v any)

// field is a column that users see as it is.
func field(rec mcpeffecttest.Record, name string, v any) {
	if b, ok := v.([]byte); ok {
		v = hex.EncodeToString(b)
	}
	rec[name] = v
}

// inKey is a column that the record's key holds, and nothing else.
func inKey(mcpeffecttest.Record, string, any) {}

// asState returns a column that stands for a state when it is set (a
// deletion, an archive, a revocation, a pause): the record shows the
// state as the value flag, false or true, as well as the column itself.
// Without it, the column going from empty to set would look like a value
// added to an empty field, when users see something taken away: a task
// gone to the Trash, a token that no longer works.
func asState(flag string) column {
	return func(rec mcpeffecttest.Record, name string, v any) {
		field(rec, name, v)
		rec[flag] = v != nil
	}
}

// keyOf returns a key function that joins prefix and the named columns
// of a row: keyOf("task", "id") is task/<id>, and keyOf("task", "task_id",
// "label", "label_id") is task/<task_id>/label/<label_id>. An odd element
// is a literal, an even one a column.
func keyOf(parts ...string) func(map[string]any) string {
	return func(row map[string]any) string {
		var b strings.Builder
		for i, p := range parts {
			if i > 0 {
				b.WriteByte('/')
			}
			if i%2 == 0 {
				b.WriteString(p)
			} else {
				fmt.Fprint(&b, row[p])
			}
		}
		return b.String()
	}
}

// fields returns the columns named, each shown as it is.
func fields(names ...string) map[string]column {
	m := make(map[string]column, len(names))
	for _, n := range names {
		m[n] = field
	}
	return m
}

// with returns m with the columns of more added.
func with(m map[string]column, more map[string]column) map[string]column {
	maps.Copy(m, more)
	return m
}

// tables maps each table of Done's database to records.
var tables = map[string]tableMap{
	"projects": {keyOf("project", "id"), with(
		fields("id", "name", "description", "auto_close", "auto_close_by", "default_assignee", "created_at"),
		map[string]column{"archived_at": asState("archived"), "trash_id": asState("in_trash")})},
	"tasks": {keyOf("task", "id"), with(
		fields("id", "project_id", "parent_id", "title", "description", "status", "priority", "assignee",
			"auto_close", "auto_close_by", "due", "blocked_reason", "blocked_by", "scheduled_start", "scheduled_end",
			"created_at", "created_by", "closed_at"),
		map[string]column{"trash_id": asState("in_trash")})},
	"task_dependencies": {keyOf("task", "task_id", "depends_on", "depends_on"),
		map[string]column{"task_id": inKey, "depends_on": inKey}},
	"task_labels": {keyOf("task", "task_id", "label", "label_id"),
		map[string]column{"task_id": inKey, "label_id": inKey}},
	"task_context": {keyOf("task", "task_id", "context", "ref"), with(
		fields("title", "attached_at", "attached_by"),
		map[string]column{"task_id": inKey, "ref": inKey})},
	"steps": {keyOf("step", "id"), with(
		fields("id", "task_id", "position", "text", "notes", "status", "status_changed_at", "status_changed_by", "created_at"),
		map[string]column{"trash_id": asState("in_trash")})},
	"comments": {keyOf("comment", "id"), with(
		fields("id", "task_id", "author", "author_kind", "body", "created_at", "edited_at"),
		map[string]column{"trash_id": asState("in_trash")})},
	"labels": {keyOf("label", "id"), fields("id", "name", "color", "created_at")},
	"approvals": {keyOf("approval", "id"), fields("id", "task_id", "step_id", "kind", "reason", "status",
		"requested_by", "requested_by_kind", "requested_at", "decided_by", "decided_at", "decision_note", "run_id")},
	"trash": {keyOf("trash", "id"), fields("id", "item_kind", "item_id", "title", "deleted_at", "deleted_by", "deleted_by_kind")},
	"tokens": {keyOf("token", "id"), with(
		fields("id", "secret_hash", "name", "kind", "scope", "created_at", "created_by", "expires_at", "owner"),
		map[string]column{"revoked_at": asState("revoked")})},
	// An agent without a row is not paused: see agentsOfTokens.
	"agents": {keyOf("agent", "name"), with(
		fields("paused_by", "pause_reason"),
		map[string]column{"name": inKey, "paused_at": asState("paused")})},
	"runs": {keyOf("run", "id"), fields("id", "task_id", "agent", "status", "instructions", "retry_of",
		"queued_at", "queued_by", "started_at", "finished_at", "summary", "cost_usd", "cancelled_by", "cancel_reason")},
	"run_events": {keyOf("run", "run_id", "event", "id"), with(
		fields("at", "token_id", "actor", "kind", "message", "progress"),
		map[string]column{"run_id": inKey, "id": inKey})},
	"run_artifacts": {keyOf("run", "run_id", "artifact", "id"), with(
		fields("kind", "title", "uri", "added_at"),
		map[string]column{"run_id": inKey, "id": inKey})},
	"digest_reads": {keyOf("digest", "digest_id", "read_by", "reader", "at", "read_at"), with(
		fields("token_id"),
		map[string]column{"reader": inKey, "digest_id": inKey, "read_at": inKey})},
	"calendar_links": {keyOf("calendar_link", "id"), with(
		fields("id", "secret_hash", "owner", "project_id", "name", "created_at", "created_by", "replaces"),
		map[string]column{"revoked_at": asState("revoked")})},
	// The web page's (migration 0016): what signs a person in, their
	// sessions, and the calls that wait for their answer there. No tool
	// writes them but through -confirm url, which asks before the call.
	"web_signin_links": {keyOf("signin_link", "id"), with(
		fields("id", "secret_hash", "token_id", "created_at", "expires_at"),
		map[string]column{"used_at": asState("used")})},
	"web_sessions": {keyOf("web_session", "id"), with(
		fields("id", "secret_hash", "token_id", "created_at", "expires_at"),
		map[string]column{"ended_at": asState("ended")})},
	"web_confirmations": {keyOf("confirmation", "id"), with(
		fields("id", "token_id", "root", "person", "tool", "effect", "binding", "question", "created_at", "expires_at", "answer", "answered_by", "answered_at"),
		map[string]column{"used_at": asState("used")})},
	"web_confirmation_arguments": {keyOf("confirmation", "id", "arguments", "id"), with(
		fields("arguments"),
		map[string]column{"id": inKey})},
}

// A doneState captures the state of one Done instance: its database,
// read through a connection of its own, and its context folder.
type doneState struct {
	db     *sql.DB
	folder string
}

// openState opens the database in dir, read-only, for the state of the
// instance that serves it.
func openState(dir string) (*doneState, error) {
	path, err := filepath.Abs(filepath.Join(dir, store.FileName))
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: url.Values{"mode": {"ro"}, "_query_only": {"on"}}.Encode()}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path
	}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	return &doneState{db: db, folder: filepath.Join(dir, "context")}, nil
}

// State returns the records of every table, in one snapshot of the
// database, and of every file of the context folder.
func (s *doneState) State(ctx context.Context) (mcpeffecttest.State, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	names, err := tableNames(ctx, tx)
	if err != nil {
		return nil, err
	}
	st := make(mcpeffecttest.State)
	seen := map[string]bool{} // every table, and table.column
	for _, table := range names {
		cols, err := addTable(ctx, tx, st, table)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", table, err)
		}
		seen[table] = true
		for _, c := range cols {
			seen[table+"."+c] = true
		}
	}
	if err := checkStale(seen); err != nil {
		return nil, err
	}
	agentsOfTokens(st)
	if err := s.addDocuments(st); err != nil {
		return nil, fmt.Errorf("the context folder: %w", err)
	}
	return st, nil
}

// tableNames returns the tables of the database, SQLite's own left out.
func tableNames(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// checkStale returns an error if tables or bookkeeping names a table or
// a column that the database, whose tables and columns are seen, does not
// have: a list that names what is gone no longer says what it seems to.
func checkStale(seen map[string]bool) error {
	for table := range tables {
		if !seen[table] {
			return fmt.Errorf("tables maps table %s, which the database does not have", table)
		}
	}
	for name := range bookkeeping {
		if !strings.HasPrefix(name, "memory: ") && !seen[name] {
			return fmt.Errorf("bookkeeping leaves out %s, which the database does not have", name)
		}
	}
	return nil
}

// addTable adds the records of table to st and returns its columns, or
// returns an error if the table or one of its columns is neither mapped
// nor bookkeeping.
func addTable(ctx context.Context, tx *sql.Tx, st mcpeffecttest.State, table string) ([]string, error) {
	m, mapped := tables[table]
	_, left := bookkeeping[table]
	switch {
	case left && mapped:
		return nil, errors.New("it is both mapped and bookkeeping")
	case !left && !mapped:
		return nil, errors.New("it is neither mapped to records in tables nor left out in bookkeeping: say what users see of it")
	}
	rows, err := tx.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil || left {
		return cols, err
	}
	for _, c := range cols {
		_, left := bookkeeping[table+"."+c]
		if _, ok := m.columns[c]; ok == left {
			return nil, fmt.Errorf("column %s must be either mapped in tables or left out in bookkeeping, not %s", c, map[bool]string{true: "both", false: "neither"}[ok])
		}
	}
	for c := range m.columns {
		if !slices.Contains(cols, c) {
			return nil, fmt.Errorf("tables maps column %s, which the table does not have", c)
		}
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c] = vals[i]
		}
		key := m.key(row)
		if _, dup := st[key]; dup {
			return nil, fmt.Errorf("two records have the key %q", key)
		}
		rec := mcpeffecttest.Record{}
		for c, col := range m.columns {
			col(rec, c, row[c])
		}
		st[key] = rec
	}
	return cols, rows.Err()
}

// agentsOfTokens gives every agent a record: an agent is the name of
// agent tokens, and the agents table has a row only for one that was
// paused. An agent never paused shows as paused false, so that pausing it
// is a change of that value, not a record added.
func agentsOfTokens(st mcpeffecttest.State) {
	for key, rec := range st {
		if !strings.HasPrefix(key, "token/") || rec["kind"] != string(store.Agent) {
			continue
		}
		agent := "agent/" + fmt.Sprint(rec["name"])
		if _, ok := st[agent]; !ok {
			st[agent] = mcpeffecttest.Record{"paused": false}
		}
	}
}

// addDocuments adds a record for each file of the context folder, the
// documents of the local connector, keyed by its ref: its size and the
// SHA-256 of its content, so that a file overwritten shows as changed.
func (s *doneState) addDocuments(st mcpeffecttest.State) error {
	err := filepath.WalkDir(s.folder, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == s.folder {
			return err
		}
		rel, err := filepath.Rel(s.folder, p)
		if err != nil {
			return err
		}
		key := "document/local:" + filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			st[key] = mcpeffecttest.Record{"type": d.Type().String()}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		st[key] = mcpeffecttest.Record{"bytes": len(data), "sha256": hex.EncodeToString(sum[:])}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// close closes the state's connection to the database.
func (s *doneState) close() error { return s.db.Close() }
