// Command mcpeffect-sqlite prints the rows of a SQLite database as the
// records of a state, for mcpeffect verify: a JSON object with a record
// for each row of every table, keyed TABLE/KEY (the primary key's values
// joined by "/", or the rowid of a table without one), each the row's
// columns by name; and a record for each table, index, view and trigger,
// keyed schema/TYPE/NAME, with its SQL, so that a table made or dropped
// is seen even while it is empty. SQLite's own tables (sqlite_*) are left
// out.
//
// usage: mcpeffect-sqlite [-max-value BYTES] [-max-bytes BYTES] FILE
//
// It opens the database read-only and never creates it: a file that does
// not exist prints {}, since nothing is stored yet.
//
// The database is the server's under test, so it is read within bounds:
// SQLite itself refuses to make or return a value (a text or a blob, a
// generated column's included) of more than -max-value bytes; a table
// whose values hold more than what is left of -max-bytes is refused
// before its rows are read; and what is written, one row at a time as it
// is read, stops at -max-bytes. Past a bound it writes which, and exits 3.
// It exits 1 when it cannot read the database, and 2 on bad usage.
//
// It is a module of its own, run by mcpeffect verify as a command, so
// that neither the mcpeffect library's users nor the mcpeffect command
// depend on a SQLite driver.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// bounds are what one dump may read and write.
type bounds struct {
	// value is the most bytes of one value, as SQLite holds it.
	value int64
	// total is the most bytes of JSON written, and of the values read,
	// in all.
	total int64
	// rows is the most rows read, as mcpeffect verify bounds the records
	// of a state.
	rows int
}

// defaultBounds are the bounds of a dump when no flag changes them: a
// value as large as one message mcpeffect verify reads from a server, and
// in all as much as verify holds of one capture of a state.
var defaultBounds = bounds{value: 16 << 20, total: 16 << 20, rows: 200_000}

// The exit codes.
const (
	exitOK    = 0
	exitError = 1 // the database could not be read
	exitUsage = 2
	exitBound = 3 // the database went past a bound
)

// A boundError is a bound the database went past.
type boundError struct{ msg string }

func (e *boundError) Error() string { return e.msg }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpeffect-sqlite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	b := defaultBounds
	fs.Int64Var(&b.value, "max-value", b.value, "the most `BYTES` of one value")
	fs.Int64Var(&b.total, "max-bytes", b.total, "the most `BYTES` written, and of values read, in all")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcpeffect-sqlite [-max-value BYTES] [-max-bytes BYTES] FILE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	switch {
	case fs.NArg() != 1:
		fs.Usage()
		return exitUsage
	case b.value <= 0 || b.total <= 0:
		fmt.Fprintln(stderr, "mcpeffect-sqlite: -max-value and -max-bytes must be more than 0")
		return exitUsage
	case b.value > 1_000_000_000:
		// SQLite's own ceiling of a value.
		b.value = 1_000_000_000
	}
	w := bufio.NewWriter(stdout)
	err := dump(w, fs.Arg(0), b)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpeffect-sqlite: %v\n", err)
		if errors.As(err, new(*boundError)) {
			return exitBound
		}
		return exitError
	}
	return exitOK
}

// dump writes the records of the database file to w, within b, each as
// it is read.
func dump(w io.Writer, file string, b bounds) error {
	fi, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) {
		_, err = io.WriteString(w, "{}\n")
		return err
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", file)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// SQLite refuses, with SQLITE_TOOBIG, to make a value past the
	// limit: a generated column of zeroblob(50000000) is refused before
	// its bytes exist.
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, int(b.value)); err != nil {
		return err
	}
	// One connection, in one transaction: a consistent snapshot of every
	// table.
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	d := &dumper{tx: tx, b: b, out: &boundedWriter{w: w, left: b.total, max: b.total}, left: b.total, keys: map[string]bool{}}
	if err := d.write("{"); err != nil {
		return err
	}
	if err := d.schema(); err != nil {
		return d.explain("the schema", err)
	}
	tables, err := tableNames(tx)
	if err != nil {
		return d.explain("the schema", err)
	}
	for _, t := range tables {
		if err := d.table(t); err != nil {
			return d.explain(fmt.Sprintf("table %q", t), err)
		}
	}
	return d.write("}\n")
}

// A dumper writes one database's records, each once, within its bounds.
type dumper struct {
	tx    *sql.Tx
	b     bounds
	out   *boundedWriter
	left  int64           // bytes of values still allowed to be read
	rows  int             // rows read
	keys  map[string]bool // the keys written: two records of one key are refused
	wrote bool            // a record has been written: the next needs a comma
}

// explain says where err happened, and names the bound that SQLite's
// SQLITE_TOOBIG stands for.
func (d *dumper) explain(where string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_TOOBIG {
		return &boundError{fmt.Sprintf("%s: a value of more than %s (the bound of one value, -max-value)", where, bytesText(d.b.value))}
	}
	return fmt.Errorf("%s: %w", where, err)
}

func (d *dumper) write(s string) error {
	_, err := io.WriteString(d.out, s)
	return err
}

// record writes one record, refusing a key written before: a table called
// schema, or keys holding "/", can meet another record's key, and one
// would be lost.
func (d *dumper) record(key string, fields map[string]any) error {
	if d.keys[key] {
		return fmt.Errorf("two records have the key %q", key)
	}
	d.keys[key] = true
	k, err := json.Marshal(key)
	if err != nil {
		return err
	}
	v, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("record %q: %w", key, err)
	}
	if d.wrote {
		if err := d.write(","); err != nil {
			return err
		}
	}
	d.wrote = true
	if _, err := d.out.Write(k); err != nil {
		return err
	}
	if err := d.write(":"); err != nil {
		return err
	}
	_, err = d.out.Write(v)
	return err
}

func tableNames(tx *sql.Tx) ([]string, error) {
	rows, err := tx.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
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

// schema writes a record for each thing of the database's schema.
func (d *dumper) schema() error {
	rows, err := d.tx.Query(`SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var typ, name, table string
		var text sql.NullString
		if err := rows.Scan(&typ, &name, &table, &text); err != nil {
			return err
		}
		if err := d.record("schema/"+typ+"/"+name, map[string]any{"table": table, "sql": text.String}); err != nil {
			return err
		}
	}
	return rows.Err()
}

// quote quotes an SQL identifier.
func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// primaryKey returns the columns of table's primary key, in key order.
func primaryKey(tx *sql.Tx, table string) ([]string, error) {
	rows, err := tx.Query(`SELECT name, pk FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var name string
		var pk int
		if err := rows.Scan(&name, &pk); err != nil {
			return nil, err
		}
		cols = append(cols, name)
	}
	return cols, rows.Err()
}

// columns returns the columns SELECT * gives of table.
func columns(tx *sql.Tx, table string) ([]string, error) {
	rows, err := tx.Query("SELECT * FROM " + quote(table) + " LIMIT 0")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return rows.Columns()
}

// measure refuses a table whose rows, or the bytes of whose values, are
// more than what is left of the bounds, before any row is read: the
// bytes as SQLite holds them, which the JSON written is no shorter than
// (blobs are written in base64, texts escaped).
func (d *dumper) measure(table string, cols []string) error {
	if len(cols) == 0 {
		return nil
	}
	var size strings.Builder
	for i, c := range cols {
		if i > 0 {
			size.WriteString(" + ")
		}
		fmt.Fprintf(&size, "ifnull(octet_length(%s), 0)", quote(c))
	}
	var rows int
	var total int64
	q := fmt.Sprintf("SELECT count(*), ifnull(sum(s), 0) FROM (SELECT %s AS s FROM %s)", size.String(), quote(table))
	if err := d.tx.QueryRow(q).Scan(&rows, &total); err != nil {
		return err
	}
	switch {
	case d.rows+rows > d.b.rows:
		return &boundError{fmt.Sprintf("more than %d rows in the database (the bound of rows)", d.b.rows)}
	case total > d.left:
		return &boundError{fmt.Sprintf("its values hold %d bytes, past the bound of all, %s (-max-bytes)", total, bytesText(d.b.total))}
	}
	d.left -= total
	return nil
}

// table writes a record for each row of table, one row at a time.
func (d *dumper) table(table string) error {
	pk, err := primaryKey(d.tx, table)
	if err != nil {
		return err
	}
	cols, err := columns(d.tx, table)
	if err != nil {
		return err
	}
	if err := d.measure(table, cols); err != nil {
		return err
	}
	query := "SELECT * FROM " + quote(table)
	if len(pk) == 0 {
		// A table without a primary key is keyed by its rowid, read
		// first; a virtual table may have none, and fails here.
		query = "SELECT rowid, * FROM " + quote(table)
	}
	rows, err := d.tx.Query(query)
	if err != nil {
		return err
	}
	defer rows.Close()
	if cols, err = rows.Columns(); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if d.rows++; d.rows > d.b.rows {
			return &boundError{fmt.Sprintf("more than %d rows in the database (the bound of rows)", d.b.rows)}
		}
		clear(vals)
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		rec := map[string]any{}
		start := 0
		if len(pk) == 0 {
			start = 1 // the rowid is the key, not a column
		}
		for i := start; i < len(cols); i++ {
			rec[cols[i]] = vals[i]
		}
		var parts []string
		if len(pk) == 0 {
			parts = append(parts, keyText(vals[0]))
		} else {
			for _, c := range pk {
				parts = append(parts, keyText(rec[c]))
			}
		}
		if err := d.record(table+"/"+strings.Join(parts, "/"), rec); err != nil {
			return err
		}
	}
	return rows.Err()
}

// keyText writes a key column's value as text.
func keyText(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case []byte:
		return string(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// A boundedWriter writes at most max bytes in all, and fails the write
// that would pass them with a *boundError, writing none of it.
type boundedWriter struct {
	w    io.Writer
	left int64
	max  int64
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > b.left {
		return 0, &boundError{fmt.Sprintf("more than %s of records written (the bound of all, -max-bytes)", bytesText(b.max))}
	}
	b.left -= int64(len(p))
	return b.w.Write(p)
}

// bytesText writes n bytes for people: in MiB or KiB when it is a whole
// number of them.
func bytesText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
