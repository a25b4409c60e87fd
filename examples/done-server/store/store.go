// Package store keeps the data of the Done server in SQLite and holds its
// domain rules: the approval gate, the Trash, the activity log, the runs of
// agents.
//
// Every exported method of [Store] runs in exactly one transaction, so a tool
// call that makes one call into the store either happens whole or not at
// all; the exceptions are reads that may answer from memory, in none
// ([Store.Authenticate], [Options.AuthCache]), and the note of a use that
// changed nothing ([Store.NoteUse], [Store.NoteFetch]), which writes only
// once a minute. Methods that change something take the [Actor] on whose behalf they
// run, and record what they did in the activity log in the same transaction;
// the exceptions say so, and where they keep that record instead (progress
// reports go to the log of their run).
// Writes that converge (setting a status, adding a label) check first
// whether anything would change: when nothing would, they write nothing,
// not even an activity entry.
//
// Requests the domain refuses (a bad id, a missing row, a forbidden state
// change) are returned as an [*Error] whose message is meant for the caller.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
	"modernc.org/sqlite" // the pure-Go SQLite driver
)

// A Store is the database of one Done workspace. It is safe for concurrent
// use.
type Store struct {
	// SQLite allows one writer at a time. Funnelling writes through a pool of
	// one connection queues them in Go rather than in SQLite's busy loop,
	// while reads run in parallel on their own pool, each in a snapshot of
	// the write-ahead log.
	writer *sql.DB
	reader *sql.DB
	now    func() time.Time
	auth   authCache
	// confirmWaits are the calls waiting for the answers to their
	// confirmations (see [Store.AwaitConfirmation]).
	confirmWaits waiters

	// pg is the PostgreSQL side of a Store that OpenPostgres opened (its
	// writer and reader are then one pool), nil on SQLite.
	pg *postgres
}

// Options configure [Open]. A nil *Options is the zero value.
type Options struct {
	// Now returns the current time. If nil, time.Now is used. Tests set it
	// to get timestamps they can predict.
	Now func() time.Time

	// Readers is how many connections may read at once; all of them stay
	// open between reads. If 0, DefaultReaders. A negative value leaves
	// the pool as database/sql has it by default (as many as asked for,
	// two kept open), for measuring what a pool kept open saves.
	Readers int
	// StmtCache is how many compiled statements each connection keeps
	// (see stmtcache.go). If 0, the default, more than the store has
	// statements; a negative value keeps none, for measuring what it
	// saves.
	StmtCache int
	// AuthCache is how long [Store.Authenticate] and
	// [Store.AuthenticateOwner] may answer from memory for a token they
	// found live: the longest a token revoked by another process on the
	// same database goes on working in this one. A token revoked through
	// this Store is refused at once, and an expired one too. If 0, every
	// call reads the database.
	AuthCache time.Duration
}

// DefaultReaders is the size of the pool of read connections. Reads in
// SQLite's write-ahead log run in parallel, each on its own connection,
// and they spend their time on the CPU: a few connections a core keep
// every core busy while some wait. database/sql's default keeps only two
// open and closes the others after each read, and a connection that
// reopens runs its pragmas and reads the schema again, which under load
// many reads paid for (issue 14). Each connection keeps its own page
// cache, up to 2 MiB.
const DefaultReaders = 8

// FileName is the name of the database file inside a data directory.
const FileName = "done.db"

// Open opens the database in the directory dir, creating the directory
// (mode 0700) and the database if they do not exist, and applies the
// migrations the database lacks. created reports whether the database is
// new.
//
// The database and its -wal and -shm files are readable by their owner
// only (0600), whatever the umask and the mode of an existing directory:
// they hold every task and the hashes of the tokens. A database made
// with a wider mode is narrowed to 0600 when the process may.
func Open(ctx context.Context, dir string, opts *Options) (s *Store, created bool, err error) {
	if err := makeDir(dir); err != nil {
		return nil, false, fmt.Errorf("store: %w", err)
	}
	path, err := filepath.Abs(filepath.Join(dir, FileName))
	if err != nil {
		return nil, false, fmt.Errorf("store: %w", err)
	}
	if created, err = makeFiles(path); err != nil {
		return nil, false, fmt.Errorf("store: %w", err)
	}

	// synchronous=NORMAL is safe in WAL mode against a crash of the
	// process: only a power cut can lose the last commits.
	params := url.Values{}
	params.Set("_journal_mode", "WAL")
	params.Set("_synchronous", "NORMAL")
	params.Set("_foreign_keys", "on")
	params.Set("_busy_timeout", "10000")
	// BEGIN IMMEDIATE takes the write lock at the start of a write
	// transaction, so that another process writing at the same time (the
	// token command) makes it wait instead of failing halfway.
	params.Set("_txlock", "immediate")

	if opts == nil {
		opts = &Options{}
	}
	writer, err := openDB(fileURI(path, params), opts.StmtCache)
	if err != nil {
		return nil, false, fmt.Errorf("store: %w", err)
	}
	writer.SetMaxOpenConns(1)

	params.Set("_query_only", "on")
	params.Del("_txlock")
	reader, err := openDB(fileURI(path, params), opts.StmtCache)
	if err != nil {
		writer.Close()
		return nil, false, fmt.Errorf("store: %w", err)
	}
	switch readers := opts.Readers; {
	case readers == 0:
		readers = DefaultReaders
		fallthrough
	case readers > 0:
		reader.SetMaxOpenConns(readers)
		reader.SetMaxIdleConns(readers)
	}

	s = &Store{writer: writer, reader: reader, now: time.Now, auth: authCache{ttl: opts.AuthCache}}
	if opts.Now != nil {
		s.now = opts.Now
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, false, err
	}
	return s, created, nil
}

// openDB returns the database at the SQLite URI uri, whose connections
// each keep stmtCache compiled statements (see [Options.StmtCache]).
func openDB(uri string, stmtCache int) (*sql.DB, error) {
	connector, err := sqlite.NewConnector(uri)
	if err != nil {
		return nil, err
	}
	switch {
	case stmtCache == 0:
		stmtCache = defaultStmtCacheSize
	case stmtCache < 0:
		return sql.OpenDB(connector), nil
	}
	return sql.OpenDB(stmtCacheConnector{connector, stmtCache}), nil
}

// makeDir makes the directory dir, and its parents, with mode 0700 if it
// does not exist. An existing directory is left as it is.
func makeDir(dir string) error {
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// The umask may have taken bits from 0700, which only Chmod sets
	// exactly.
	return os.Chmod(dir, 0o700)
}

// makeFiles makes the database file path, empty, with mode 0600, if it
// does not exist, and reports whether it did. SQLite gives the -wal and
// -shm files it makes the mode of the database file, so they are 0600
// too; an existing database, -wal or -shm with a wider mode is narrowed
// to 0600. Chmod sets the mode exactly, where a mode given to open is cut
// by the umask.
func makeFiles(path string) (created bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		created = true
		err = errors.Join(f.Chmod(0o600), f.Close())
		if err != nil {
			os.Remove(path)
			return false, err
		}
		return true, nil
	case !errors.Is(err, fs.ErrExist):
		return false, err
	}
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Lstat(name)
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o077 == 0 {
			continue
		}
		// A file of another user stays as it is: its owner decides.
		_ = os.Chmod(name, 0o600)
	}
	return false, nil
}

// fileURI returns the SQLite URI of the database file at the absolute
// path, with the driver's params. Every byte of the path that a URI
// gives a meaning to (?, #, %, and more) is percent-encoded, so that the
// database is the file at path, whatever its name: pasted as it is, a
// directory named "a?b" would open a database called "a" next to it.
func fileURI(path string, params url.Values) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		// A Windows path, C:/..., is /C:/... in a URI.
		p = "/" + p
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: params.Encode()}
	return u.String()
}

// Close closes the database.
func (s *Store) Close() error {
	if s.pg != nil {
		return s.pg.close(s.writer)
	}
	return errors.Join(s.reader.Close(), s.writer.Close())
}

// Shared reports whether the database may be shared by several
// processes on several machines (PostgreSQL), rather than kept in one
// machine's directory (SQLite).
func (s *Store) Shared() bool { return s.pg != nil }

// The migrations: SQLite's in migrations/NNNN_name.sql, PostgreSQL's in
// migrations/postgres/NNNN_name.sql. PostgreSQL's start at 0015, the
// schema SQLite's first fifteen made; from 0016 on, each migration is one
// file in each folder, under the same number (TestMigrationsPaired).
//
//go:embed migrations/*.sql migrations/postgres/*.sql
var migrations embed.FS

// migrate applies, in order, each migration whose number is above the
// database's user_version, each in its own transaction together with the
// new user_version, so that a failed migration leaves no trace.
func (s *Store) migrate(ctx context.Context) error {
	if s.pg != nil {
		return s.migratePostgres(ctx)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(names)
	var version int
	if err := s.writer.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("store: reading schema version: %w", err)
	}
	for _, name := range names {
		base := filepath.Base(name)
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("store: migration %s: name must start with its number", base)
		}
		if n <= version {
			continue
		}
		script, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		tx, err := s.writer.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("store: migration %s: %w", base, err)
		}
		if _, err := tx.ExecContext(ctx, string(script)); err != nil {
			tx.Rollback()
			return fmt.Errorf("store: migration %s: %w", base, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", n)); err != nil {
			tx.Rollback()
			return fmt.Errorf("store: migration %s: %w", base, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("store: migration %s: %w", base, err)
		}
		version = n
	}
	return nil
}

// An Actor is who a call runs on behalf of: the token that authenticated
// it. Writes record it in the activity log.
type Actor struct {
	TokenID string
	Name    string
	Kind    Kind
}

// Kind says whether a token belongs to a person or to an agent.
type Kind string

// The kinds of token.
const (
	Human Kind = "human"
	Agent Kind = "agent"
)

// ParseKind parses "human" or "agent".
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case Human, Agent:
		return k, nil
	}
	return "", invalidf("kind %q is not valid: want human or agent", s)
}

// tx is one transaction, with the time it runs at and the actor it runs for.
type tx struct {
	ctx context.Context
	sql *sql.Tx
	now time.Time
	by  Actor
	pg  bool // the queries are SQLite's, rewritten for PostgreSQL (see pgQuery)
}

// pick returns the text of a query for the store t runs on: sqlite's, or
// on PostgreSQL postgres (still with SQLite's parameters, see pgQuery),
// for the few queries that the two write differently.
func (t *tx) pick(sqlite, postgres string) string {
	if t.pg {
		return postgres
	}
	return sqlite
}

// timeFormat is how times are stored: fixed width, so that text order is
// time order.
const timeFormat = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func (t *tx) nowText() string { return formatTime(t.now) }

// write runs fn in a write transaction for by and commits it if fn returns
// nil. Anything fn wrote is rolled back otherwise.
//
// On SQLite the one writer makes every write transaction serial. On
// PostgreSQL they run at once, as SERIALIZABLE: the outcome is that of
// some serial order, so that every check fn makes in Go (the approval is
// pending, the task unclaimed, the cap not reached) still holds when it
// commits; when PostgreSQL cannot promise that, it aborts one of them,
// and write runs fn again from the start, up to maxAttempts times, on
// what the winner committed: the loser then meets the winner's work and
// returns the domain's refusal, as it would have on SQLite.
func write[T any](ctx context.Context, s *Store, by Actor, fn func(*tx) (T, error)) (T, error) {
	var zero T
	if s.pg == nil {
		return writeOnce(ctx, s, by, nil, fn)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		v, err := writeOnce(ctx, s, by, &sql.TxOptions{Isolation: sql.LevelSerializable}, fn)
		if err == nil || !retryable(err) {
			return v, err
		}
		if attempt == maxAttempts {
			return zero, fmt.Errorf("store: %w: %d transactions in a row lost to concurrent writes of the same rows; try again", ErrBusy, attempt)
		}
		if err := backoff(ctx, attempt); err != nil {
			return zero, fmt.Errorf("store: %w", err)
		}
	}
}

func writeOnce[T any](ctx context.Context, s *Store, by Actor, opts *sql.TxOptions, fn func(*tx) (T, error)) (T, error) {
	var zero T
	sqlTx, err := s.writer.BeginTx(ctx, opts)
	if err != nil {
		return zero, s.fail(err)
	}
	defer sqlTx.Rollback() // a no-op once committed
	t := &tx{ctx: ctx, sql: sqlTx, now: s.now(), by: by, pg: s.pg != nil}
	v, err := fn(t)
	if err == nil {
		// A call made with an idempotency key: its record says, in this
		// same transaction, that it wrote (see idempotency.go).
		err = t.markIdempotentWrite()
	}
	if err != nil {
		return zero, s.failFn(err)
	}
	if err := sqlTx.Commit(); err != nil {
		return zero, s.fail(err)
	}
	return v, nil
}

// failFn returns the error of a transaction's function: as it is (a
// refusal of the domain, or what write retries), or as [ErrUnavailable]
// when the database went away under it.
func (s *Store) failFn(err error) error {
	if s.pg != nil && !retryable(err) && refusal.CodeOf(err) == 0 && unavailable(err) {
		return s.fail(err)
	}
	return err
}

// read runs fn in a read-only transaction: it sees one snapshot of the
// database, however many queries it makes.
func read[T any](ctx context.Context, s *Store, by Actor, fn func(*tx) (T, error)) (T, error) {
	var zero T
	opts := &sql.TxOptions{ReadOnly: true}
	if s.pg != nil {
		// A snapshot, as SQLite's reads have, without SERIALIZABLE's
		// bookkeeping: a read-only transaction cannot break an invariant.
		opts.Isolation = sql.LevelRepeatableRead
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	sqlTx, err := s.reader.BeginTx(ctx, opts)
	if err != nil {
		return zero, s.fail(err)
	}
	defer sqlTx.Rollback()
	v, err := fn(&tx{ctx: ctx, sql: sqlTx, now: s.now(), by: by, pg: s.pg != nil})
	if err != nil {
		return zero, s.failFn(err)
	}
	// Even a read's commit meets a connection gone (the database
	// restarting): that is an outage too, not a fault of the server.
	if err := sqlTx.Commit(); err != nil {
		return zero, s.fail(err)
	}
	return v, nil
}

func (t *tx) exec(query string, args ...any) (sql.Result, error) {
	if err := storableArgs(args); err != nil {
		return nil, err
	}
	if t.pg {
		query, args = pgQuery(query, args)
	}
	return t.sql.ExecContext(t.ctx, query, args...)
}

func (t *tx) query(query string, args ...any) (*sql.Rows, error) {
	if err := storableArgs(args); err != nil {
		return nil, err
	}
	if t.pg {
		query, args = pgQuery(query, args)
	}
	return t.sql.QueryContext(t.ctx, query, args...)
}

func (t *tx) queryRow(query string, args ...any) scanner {
	if err := storableArgs(args); err != nil {
		return refusedRow{err}
	}
	if t.pg {
		query, args = pgQuery(query, args)
	}
	return t.sql.QueryRowContext(t.ctx, query, args...)
}

// storableArgs returns an error unless every string of args is text that
// both stores keep ([checkStorable]): what no check before caught is
// refused here, before PostgreSQL refuses it with an error of its own,
// and SQLite keeps it. The checks of the arguments, which name them, come
// first; this one cannot, and says what was wrong.
func storableArgs(args []any) error {
	for _, a := range args {
		s, ok := a.(string)
		if !ok {
			if v := reflect.ValueOf(a); v.Kind() != reflect.String {
				continue
			} else {
				s = v.String()
			}
		}
		if err := checkStorable("an argument", s); err != nil {
			return err
		}
	}
	return nil
}

// refusedRow is the row of a query that [storableArgs] refused: its Scan
// returns why.
type refusedRow struct{ err error }

func (r refusedRow) Scan(...any) error { return r.err }

// exists reports whether query returns a row.
func (t *tx) exists(query string, args ...any) (bool, error) {
	var one int
	err := t.queryRow(query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// collect runs query and scans each row with scan.
func collect[T any](t *tx, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := t.query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanner is what *sql.Row and *sql.Rows have in common, and
// [tx.queryRow] returns.
type scanner interface {
	Scan(dest ...any) error
}

// newID returns a new id. Version 7 UUIDs begin with their creation time,
// so that ordering rows by id orders them by creation, which keyset
// pagination relies on.
func newID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// nullable turns "" into SQL NULL, for optional references.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
