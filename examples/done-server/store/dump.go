package store

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Dump writes the schema and the content of every table, in an order that
// depends only on the content, so that two databases holding the same data
// dump to the same bytes. Tests compare dumps to show that a refused call
// changed nothing at all.
func (s *Store) Dump(ctx context.Context, w io.Writer) error {
	_, err := read(ctx, s, Actor{}, func(t *tx) (struct{}, error) {
		var tables []string
		// PostgreSQL keeps no text of its tables: the dump there names
		// each table and index, and its definition as pg_catalog gives it.
		rows, err := t.query(t.pick(`SELECT name, sql FROM sqlite_schema WHERE type IN ('table', 'index') AND sql IS NOT NULL ORDER BY type DESC, name`,
			`SELECT c.relname, CASE c.relkind WHEN 'r' THEN 'CREATE TABLE ' || c.relname ELSE pg_get_indexdef(c.oid) END
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i') ORDER BY c.relkind DESC, c.relname COLLATE "C"`))
		if err != nil {
			return struct{}{}, err
		}
		for rows.Next() {
			var name, ddl string
			if err := rows.Scan(&name, &ddl); err != nil {
				rows.Close()
				return struct{}{}, err
			}
			fmt.Fprintf(w, "%s;\n", ddl)
			if strings.HasPrefix(ddl, "CREATE TABLE") {
				tables = append(tables, name)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return struct{}{}, err
		}
		for _, table := range tables {
			if err := t.dumpTable(w, table); err != nil {
				return struct{}{}, fmt.Errorf("store: dumping %s: %w", table, err)
			}
		}
		return struct{}{}, nil
	})
	return err
}

func (t *tx) dumpTable(w io.Writer, table string) error {
	cols, err := collect(t, func(row scanner) (string, error) {
		var name string
		return name, row.Scan(&name)
	}, t.pick(`SELECT name FROM pragma_table_info(?) ORDER BY cid`,
		`SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`), table)
	if err != nil {
		return err
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + c + `"`
	}
	list := strings.Join(quoted, ", ")
	rows, err := t.query(`SELECT ` + list + ` FROM "` + table + `" ORDER BY ` + list)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintf(w, "-- %s (%s)\n", table, list)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			if i > 0 {
				io.WriteString(w, ", ")
			}
			switch v := v.(type) {
			case nil:
				io.WriteString(w, "NULL")
			case []byte:
				fmt.Fprintf(w, "x'%x'", v)
			case string:
				fmt.Fprintf(w, "%q", v)
			default:
				fmt.Fprintf(w, "%v", v)
			}
		}
		io.WriteString(w, "\n")
	}
	return rows.Err()
}
