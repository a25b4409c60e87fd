package main

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver of database/sql, for tests that read the database beside the server
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

var pgDatabases sync.Map // data directory → the URL of its database

// openStoreAt opens the store of a test's data directory dir on the
// backend of this run (see pgtest.Run): on SQLite the database in dir, on
// PostgreSQL the database that stands for dir in this test, so that a
// test that opens one directory twice opens one database twice.
func openStoreAt(tb testing.TB, dir string, opts *store.Options) (*store.Store, bool, error) {
	tb.Helper()
	if !pgtest.Postgres() {
		return store.Open(tb.Context(), dir, opts)
	}
	url, ok := pgDatabases.Load(dir)
	if !ok {
		url = pgtest.NewDatabase(tb)
		pgDatabases.Store(dir, url)
	}
	return store.OpenPostgres(tb.Context(), url.(string), opts)
}

// sqliteOnly skips, on PostgreSQL, a test that reads SQLite's file
// itself (its triggers, its journal), saying why.
func sqliteOnly(tb testing.TB, why string) {
	tb.Helper()
	if pgtest.Postgres() {
		tb.Skip("reads SQLite's file: " + why)
	}
}

// lastingStore makes the store of dir, on PostgreSQL, one that outlives
// the test: a fixture that copyStore copies for later tests.
func lastingStore(tb testing.TB, dir string) {
	tb.Helper()
	if pgtest.Postgres() {
		pgDatabases.Store(dir, pgtest.NewLastingDatabase(tb))
	}
}

// copyStore makes the store of the data directory to a copy of the
// store of from, which must be closed.
func copyStore(tb testing.TB, from, to string) {
	tb.Helper()
	if pgtest.Postgres() {
		url, ok := pgDatabases.Load(from)
		if !ok {
			tb.Fatalf("no database for %s", from)
		}
		pgDatabases.Store(to, pgtest.Copy(tb, url.(string)))
		return
	}
	db, err := os.ReadFile(filepath.Join(from, store.FileName))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, store.FileName), db, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// storeURL is the URL of the PostgreSQL database of the data directory
// dir in this test.
func storeURL(tb testing.TB, dir string) string {
	tb.Helper()
	url, ok := pgDatabases.Load(dir)
	if !ok {
		tb.Fatalf("no database for %s", dir)
	}
	return url.(string)
}
