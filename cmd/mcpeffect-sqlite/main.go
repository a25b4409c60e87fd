// Command mcpeffect-sqlite prints the rows of a SQLite database as the
// records of a state, for mcpeffect verify: a JSON object with a record
// for each row of every table, keyed TABLE/KEY (the primary key's values
// joined by "/", or the rowid of a table without one), each the row's
// columns by name; and a record for each table, index, view and trigger,
// keyed schema/TYPE/NAME, with its SQL, so that a table made or dropped
// is seen even while it is empty. SQLite's own tables (sqlite_*) are left
// out.
//
// usage: mcpeffect-sqlite FILE
//
// It opens the database read-only and never creates it: a file that does
// not exist prints {}, since nothing is stored yet.
//
// It is a module of its own, run by mcpeffect verify as a command, so
// that neither the mcpeffect library's users nor the mcpeffect command
// depend on a SQLite driver.
package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	_ "modernc.org/sqlite"
)

// maxRows bounds the rows read, as mcpeffect verify bounds the records
// of a state.
const maxRows = 200_000

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpeffect-sqlite FILE")
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	if err := dump(w, os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "mcpeffect-sqlite: %v\n", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpeffect-sqlite: %v\n", err)
		os.Exit(1)
	}
}

// dump writes the records of the database file to w.
func dump(w io.Writer, file string) error {
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
	// One connection, in one transaction: a consistent snapshot of every
	// table.
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	tables, err := tableNames(tx)
	if err != nil {
		return err
	}
	records, err := schema(tx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if err := readTable(tx, t, records); err != nil {
			return fmt.Errorf("table %q: %w", t, err)
		}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(records)
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

// schema returns a record for each thing of the database's schema.
func schema(tx *sql.Tx) (map[string]map[string]any, error) {
	rows, err := tx.Query(`SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	records := map[string]map[string]any{}
	for rows.Next() {
		var typ, name, table string
		var text sql.NullString
		if err := rows.Scan(&typ, &name, &table, &text); err != nil {
			return nil, err
		}
		records["schema/"+typ+"/"+name] = map[string]any{"table": table, "sql": text.String}
	}
	return records, rows.Err()
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

func readTable(tx *sql.Tx, table string, records map[string]map[string]any) error {
	pk, err := primaryKey(tx, table)
	if err != nil {
		return err
	}
	query := "SELECT * FROM " + quote(table)
	keyCols := len(pk)
	if keyCols == 0 {
		// A table without a primary key is keyed by its rowid, read
		// first; a virtual table may have none, and fails here.
		query = "SELECT rowid, * FROM " + quote(table)
		keyCols = 1
	}
	rows, err := tx.Query(query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		if len(records) >= maxRows {
			return fmt.Errorf("more than %d rows in the database", maxRows)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
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
		key := table + "/" + strings.Join(parts, "/")
		if _, dup := records[key]; dup {
			// A table called schema, or keys holding "/", can meet
			// another record's key: fail rather than lose one.
			return fmt.Errorf("two records have the key %q", key)
		}
		records[key] = rec
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
