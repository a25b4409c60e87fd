package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL is the store of Done run past one machine: any number of
// processes share one database. The store's code is the same on both
// stores: its queries are written for SQLite and rewritten for PostgreSQL
// once each (pgQuery), and the few that the two write differently are
// written twice ([tx.pick]). What SQLite's single writer gave for free,
// PostgreSQL gets from SERIALIZABLE transactions (see write); what each
// process kept in memory and must hold across processes is kept in the
// database or told to the others (the revocations, through NOTIFY).

// ErrBusy is returned, wrapped, when a write lost to concurrent writes of
// the same rows more times in a row than the store retries: nothing was
// written, and the call may be made again.
var ErrBusy = errors.New("the database is busy")

// maxAttempts is how many times a write transaction runs before
// [ErrBusy]: a loser meets the winner's rows on its second run and
// refuses, so a run beyond the second is a third writer's doing.
const maxAttempts = 10

// retryable reports whether err is PostgreSQL's refusal to commit a
// transaction that could not be made serial (or a deadlock), which
// running it again resolves.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// backoff waits before attempt+1, a random time that grows with attempt,
// so that the losers of one race do not meet again at once.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 6)))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// ErrUnavailable is returned, wrapped, when the database cannot be
// reached (PostgreSQL down, restarting, or out of reach): nothing was
// written, and the call may be made again once it is back.
var ErrUnavailable = errors.New("the database is unavailable")

// Transient reports whether err is [ErrUnavailable] or [ErrBusy]: the
// database could not serve the call, nothing was written, and the same
// call may succeed if made again in a few seconds. Whatever answers a
// caller (a tool, an HTTP handler) says so, and never an internal error.
func Transient(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrBusy)
}

// connectTimeout bounds the wait for a connection to PostgreSQL, so that
// a call during an outage is answered with ErrUnavailable, not left to
// hang.
const connectTimeout = 3 * time.Second

// callTimeout bounds each call of the store on PostgreSQL, its retries
// included: past it the call is given up as [ErrUnavailable]. A database
// that went away with its connections closed is seen at once, and one
// that cannot be reached within connectTimeout; but one cut off by the
// network (a partition, a host gone without closing its connections)
// would otherwise leave a query on a pooled connection waiting for an
// answer that never comes, for as long as TCP takes to notice: minutes.
// A call of Done takes milliseconds; ten seconds leaves room for a
// loaded machine.
const callTimeout = 10 * time.Second

// fail wraps an error of the database itself (not the domain's), as
// [ErrUnavailable] when it is one of reaching the database.
func (s *Store) fail(err error) error {
	if s.pg != nil && unavailable(err) {
		return fmt.Errorf("store: %w: %v", ErrUnavailable, err)
	}
	return fmt.Errorf("store: %w", err)
}

// unavailable reports whether err says the database could not be
// reached, or went away in the middle of the transaction.
func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08, connection exceptions; 57P01-03, the server shutting
		// down or starting.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		pgconn.Timeout(err)
}

type postgres struct {
	pool   *pgxpool.Pool
	cancel context.CancelFunc // stops the listener
	done   chan struct{}      // closed when the listener has stopped
}

func (p *postgres) close(db *sql.DB) error {
	p.cancel()
	<-p.done
	err := db.Close()
	p.pool.Close()
	return err
}

// OpenPostgres opens the PostgreSQL database at url (postgres://...), and
// applies the migrations it lacks, as [Open] does for SQLite; created
// reports whether this call made the schema. Several processes may open
// one database at the same moment: the migrations take a lock, so that
// each runs once. The role of url needs no more than to own the database
// (or to be allowed to create tables in its schema).
//
// With [Options.AuthCache], each Store listens for the revocations that
// the others commit: a token revoked through any of them is refused by
// all within moments, and within AuthCache at worst, should the
// notification be lost with its connection. It listens, on the same
// connection, for the confirmations the others answer, so that a call
// waiting for one wakes at once (see [Store.AwaitConfirmation]).
//
// The queries run in pgx's default mode, which the URL may change
// (default_query_exec_mode): each connection prepares a text the first
// time it runs it and keeps it, so that PostgreSQL parses it once and,
// for most, plans it once (a generic plan), instead of at every call.
// Sent unprepared, parsing and planning took more than half of
// PostgreSQL's CPU a call under the load test. PostgreSQL types each
// parameter by its place in the query, where SQLite takes the type of its
// value; TestEveryQueryPreparesOnPostgres prepares every text of the
// store. A pooler in transaction mode must keep prepared statements
// (PgBouncer's max_prepared_statements), or the URL must say
// default_query_exec_mode=exec.
func OpenPostgres(ctx context.Context, url string, opts *Options) (s *Store, created bool, err error) {
	if opts == nil {
		opts = &Options{}
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, false, fmt.Errorf("store: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	// pgxpool's default, four connections on a machine of two cores or
	// fewer, would queue calls that SQLite serves at once on its readers
	// and its writer: the pool is as large as those, unless the URL sets
	// pool_max_conns.
	if !strings.Contains(url, "pool_max_conns") {
		readers := opts.Readers
		if readers <= 0 {
			readers = DefaultReaders
		}
		cfg.MaxConns = int32(readers) + 2
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, false, fmt.Errorf("store: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	lctx, cancel := context.WithCancel(context.Background())
	s = &Store{writer: db, reader: db, now: time.Now, auth: authCache{ttl: opts.AuthCache},
		pg: &postgres{pool: pool, cancel: cancel, done: make(chan struct{})}}
	if opts.Now != nil {
		s.now = opts.Now
	}
	if created, err = s.migratePostgresCreated(ctx); err != nil {
		close(s.pg.done)
		s.Close()
		return nil, false, err
	}
	if opts.AuthCache > 0 {
		go s.listen(lctx)
	} else {
		close(s.pg.done)
	}
	return s, created, nil
}

// RevocationBound is how long, at most, a token revoked through one
// Store on PostgreSQL goes on working in another whose listener is
// connected: the notification arrives in moments; the bound leaves room
// for a loaded machine. While the listener has no connection, the
// cache's own ttl ([Options.AuthCache]) bounds it instead.
const RevocationBound = 2 * time.Second

// revocations is the channel of NOTIFY on which a Store tells the others
// that it revoked tokens, at its commit.
const revocations = "done_revocations"

func (t *tx) notifyRevoked() error {
	if !t.pg {
		return nil
	}
	_, err := t.sql.ExecContext(t.ctx, `SELECT pg_notify('`+revocations+`', '')`)
	return err
}

// confirmations is the channel of NOTIFY on which a Store tells the
// others that a confirmation was answered, used or withdrawn, at its
// commit, with its id: a call that waits for it on another replica wakes
// (see [Store.AwaitConfirmation]).
const confirmations = "done_confirmations"

func (t *tx) notifyConfirmation(id string) error {
	if !t.pg {
		return nil
	}
	_, err := t.sql.ExecContext(t.ctx, `SELECT pg_notify('`+confirmations+`', $1)`, id)
	return err
}

// listen clears the token cache at each revocation another Store
// commits, and wakes the calls waiting for a confirmation that another
// Store answered, until ctx ends. While it has no connection it clears
// the cache and wakes every waiting call each time it tries again, so
// that a notification lost with a connection costs lookups, never a
// revoked token let through: the cache's ttl bounds that gap, and a
// waiting call's own reads the other.
func (s *Store) listen(ctx context.Context) {
	defer close(s.pg.done)
	for ctx.Err() == nil {
		s.listenOnce(ctx)
		s.auth.revoked()
		s.confirmWaits.wakeAll()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (s *Store) listenOnce(ctx context.Context) {
	conn, err := s.pg.pool.Acquire(ctx)
	if err != nil {
		return
	}
	// A listening connection is left listening: it goes, not back to the
	// pool.
	c := conn.Hijack()
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "LISTEN "+revocations+"; LISTEN "+confirmations); err != nil {
		return
	}
	// What was committed before LISTEN took hold is in no notification:
	// forget what was read before, and read again what is awaited.
	s.auth.revoked()
	s.confirmWaits.wakeAll()
	for {
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			return
		}
		if n.Channel == confirmations {
			s.confirmWaits.wake(n.Payload)
			continue
		}
		s.auth.revoked()
	}
}

// migrationLock is the key of the advisory lock the migrations hold: any
// number fixed for Done.
const migrationLock = 0x646f6e65 // "done"

func (s *Store) migratePostgres(ctx context.Context) error {
	_, err := s.migratePostgresCreated(ctx)
	return err
}

// migratePostgresCreated applies the migrations the database lacks, all
// in one transaction that holds the advisory lock from before it reads
// the version to its commit: processes starting at once wait for the
// first, then find nothing left to do. It reports whether it made the
// schema.
func (s *Store) migratePostgresCreated(ctx context.Context) (created bool, err error) {
	names, err := fs.Glob(migrations, "migrations/postgres/*.sql")
	if err != nil {
		return false, err
	}
	slices.Sort(names)
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return false, fmt.Errorf("store: waiting for the migrations' lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)`); err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	version := 0
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version VALUES (0)`); err != nil {
			return false, fmt.Errorf("store: %w", err)
		}
		created = true
	case err != nil:
		return false, fmt.Errorf("store: reading schema version: %w", err)
	}
	for _, name := range names {
		base := filepath.Base(name)
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return false, fmt.Errorf("store: migration %s: name must start with its number", base)
		}
		if n <= version {
			continue
		}
		script, err := migrations.ReadFile(name)
		if err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, string(script)); err != nil {
			return false, fmt.Errorf("store: migration postgres/%s: %w", base, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = $1`, n); err != nil {
			return false, fmt.Errorf("store: migration postgres/%s: %w", base, err)
		}
		version = n
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	return created, nil
}

var pgQueries sync.Map // SQLite's text → *pgText

// pgText is a query rewritten for PostgreSQL.
type pgText struct {
	text string
	// args are the numbers, from 1, of SQLite's arguments that are
	// PostgreSQL's $1, $2...: SQLite lets a query leave an argument
	// unused (?1 and ?3, not ?2), which PostgreSQL refuses, having no
	// type to give it.
	args []int
}

// pgQuery returns the query q with the arguments args of SQLite,
// rewritten for PostgreSQL (see rewrite). The flags that SQLite keeps as
// 0 and 1 are integers there too (see the schema), so a bool argument
// is one.
func pgQuery(q string, args []any) (string, []any) {
	v, ok := pgQueries.Load(q)
	if !ok {
		v, _ = pgQueries.LoadOrStore(q, rewrite(q))
	}
	p := v.(*pgText)
	out := make([]any, len(p.args))
	for i, n := range p.args {
		if n > len(args) {
			return p.text, args // PostgreSQL will say what is missing
		}
		a := args[n-1]
		if b, ok := a.(bool); ok {
			a = 0
			if b {
				a = 1
			}
		}
		out[i] = a
	}
	return p.text, out
}

// rewrite returns the SQLite query q for PostgreSQL. The store's queries
// are a fixed set of texts, so each is rewritten once (pgQuery keeps
// them). The rewriting knows only what the store's queries use:
//
//   - SQLite's parameters ?NNN and ? become $NNN, and $N for the N that
//     SQLite gives a bare ? (one more than the largest so far);
//   - +? (LIMIT +?, LIKE +?1), which hides a value from SQLite's planner
//     (see stmtcache.go), becomes a plain parameter;
//   - LIKE becomes ILIKE: SQLite's LIKE ignores the case of ASCII
//     letters, and so does ILIKE in the "C" collation of every column.
//
// Text inside quotes is left as it is.
func rewrite(q string) *pgText {
	var b strings.Builder
	maxN := 0
	renumber := map[int]int{} // SQLite's number → PostgreSQL's
	p := &pgText{}
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				b.WriteString(q[i:])
				i = len(q)
				continue
			}
			b.WriteString(q[i : i+j+2])
			i += j + 1
		case c == '+' && i+1 < len(q) && q[i+1] == '?':
			// dropped: the parameter follows
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n := maxN + 1
			if j > i+1 {
				n, _ = strconv.Atoi(q[i+1 : j])
			}
			maxN = max(maxN, n)
			m, ok := renumber[n]
			if !ok {
				p.args = append(p.args, n)
				m = len(p.args)
				renumber[n] = m
			}
			fmt.Fprintf(&b, "$%d", m)
			i = j - 1
		case (c == 'L' || c == 'l') && strings.EqualFold(safeSlice(q, i, i+4), "LIKE") &&
			(i == 0 || !isWordByte(q[i-1])) && (i+4 == len(q) || !isWordByte(q[i+4])):
			b.WriteString("ILIKE")
			i += 3
		default:
			b.WriteByte(c)
		}
	}
	p.text = b.String()
	return p
}

func safeSlice(s string, i, j int) string {
	if j > len(s) {
		return ""
	}
	return s[i:j]
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
