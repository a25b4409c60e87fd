package store

import (
	"context"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
)

// The tests of the store run twice: on SQLite, then on PostgreSQL (see
// pgtest.Main). A test opens its store with openAt, which opens the
// store of the run's backend; the few tests of SQLite's files call
// sqliteOnly.
func TestMain(m *testing.M) { pgtest.Main(m) }

var pgDatabases sync.Map // data directory → the URL of its database

// openAt opens the store of the data directory dir on SQLite; on
// PostgreSQL, the database that stands for dir in this test, made from
// the migrated template the first time: two calls with one dir open one
// database, as two processes on one data directory would.
func openAt(tb testing.TB, dir string, opts *Options) (*Store, bool, error) {
	tb.Helper()
	if !pgtest.Postgres() {
		return Open(tb.Context(), dir, opts)
	}
	url, ok := pgDatabases.Load(dir)
	if !ok {
		url = pgtest.NewDatabase(tb)
		pgDatabases.Store(dir, url)
	}
	return OpenPostgres(tb.Context(), url.(string), opts)
}

// sqliteOnly skips a test of what only SQLite has (its files, its
// migrations from older schemas).
func sqliteOnly(tb testing.TB) {
	tb.Helper()
	if pgtest.Postgres() {
		tb.Skip("a test of SQLite's files")
	}
}

var _ = context.Background
