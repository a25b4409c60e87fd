package store

import (
	"context"
	"database/sql/driver"
	"errors"
)

// SQLite compiles each statement before it runs it, and modernc.org/sqlite
// compiles a query anew each time it is run, which under load was a large
// part of the server's time in the store (issue 14;
// docs/performance.md has the figures). A
// database/sql *Stmt would be compiled once per connection, but it can be
// prepared only on a free connection, and a transaction on the writer
// holds the only one: preparing there would wait for itself. So the cache
// is one level down, in each driver connection: a statement is compiled
// the first time its text runs on a connection, and kept there, reset
// between runs, until the connection closes. Every query of the store is
// one of a fixed set of texts (the arguments are bound, never written into
// the text), so that each connection compiles each at most once.
//
// That holds only for a statement that SQLite plans without the values
// bound to it. SQLite reads the value of a parameter given as a LIMIT
// (LIMIT ?), or as the pattern of LIKE (LIKE ?), to plan the statement,
// and then compiles it again each time another value is bound, at every
// run: under the load test that was a tenth of the server's time, in
// every list. Such a parameter is written +? (LIMIT +?, LIKE +?1): the
// unary plus changes no value, and hides it from the planner, which
// plans as for any expression; the plans of the lists are tested in
// plan_test.go. TestParametersPlannedWithoutValues holds every text of
// the store to it.

// defaultStmtCacheSize is the most statements a connection keeps compiled
// by default: more than the store has texts (its tests run 200).
const defaultStmtCacheSize = 512

// stmtCacheConnector wraps the connector of a database so that each of
// its connections keeps up to size statements compiled.
type stmtCacheConnector struct {
	driver.Connector
	size int
}

func (c stmtCacheConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	inner, ok := conn.(cacheableConn)
	if !ok {
		conn.Close()
		return nil, errors.New("store: the SQLite driver's connection does not prepare statements with a context")
	}
	return &stmtCacheConn{cacheableConn: inner, size: c.size, stmts: map[string]*cachedStmt{}}, nil
}

// cacheableConn is what stmtCacheConn needs of a driver connection:
// modernc.org/sqlite's has all of it.
type cacheableConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.QueryerContext
	driver.ExecerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// A stmtCacheConn is a driver connection that runs queries and statements
// with the compiled statements it keeps, one per text. database/sql uses a
// connection from one goroutine at a time, and closes the rows of a query
// under that same lock, so it needs no lock of its own.
type stmtCacheConn struct {
	cacheableConn
	size  int
	stmts map[string]*cachedStmt
}

// A cachedStmt is a compiled statement. It is busy while the rows of a
// query of it are open: a second query of the same text on the same
// connection meanwhile compiles a statement of its own.
type cachedStmt struct {
	stmt interface {
		driver.StmtQueryContext
		driver.StmtExecContext
		Close() error
	}
	busy bool
}

// stmt returns the idle compiled statement of query, compiling and
// keeping it if there is room, or nil if there is none to use.
func (c *stmtCacheConn) stmt(ctx context.Context, query string) (*cachedStmt, error) {
	if s, ok := c.stmts[query]; ok {
		if s.busy {
			return nil, nil
		}
		return s, nil
	}
	if len(c.stmts) >= c.size {
		return nil, nil
	}
	ds, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, ok := ds.(interface {
		driver.StmtQueryContext
		driver.StmtExecContext
		Close() error
	})
	if !ok {
		ds.Close()
		return nil, nil
	}
	s := &cachedStmt{stmt: st}
	c.stmts[query] = s
	return s, nil
}

func (c *stmtCacheConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.cacheableConn.QueryContext(ctx, query, args)
	}
	rows, err := s.stmt.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.busy = true
	return &cachedRows{Rows: rows, stmt: s}, nil
}

func (c *stmtCacheConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.cacheableConn.ExecContext(ctx, query, args)
	}
	return s.stmt.ExecContext(ctx, args)
}

// Close finalizes the compiled statements, then closes the connection.
func (c *stmtCacheConn) Close() error {
	var errs []error
	for _, s := range c.stmts {
		errs = append(errs, s.stmt.Close())
	}
	clear(c.stmts)
	return errors.Join(append(errs, c.cacheableConn.Close())...)
}

// cachedRows are the rows of a query of a cachedStmt, which closing them
// makes idle again: the driver resets the statement for its next run.
type cachedRows struct {
	driver.Rows
	stmt *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	r.stmt.busy = false
	return err
}
