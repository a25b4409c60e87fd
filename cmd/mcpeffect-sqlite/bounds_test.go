package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// childEnv, when set, makes the test binary run mcpeffect-sqlite with its
// arguments: see TestMain.
const childEnv = "MCPEFFECT_SQLITE_TEST_RUN"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// makeDB makes a database file of the statements qs.
func makeDB(t *testing.T, qs ...string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "db.sqlite")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return file
}

// generated makes a database of 8 rows, each with a virtual generated
// column of zeroblob(n): a file of a few KiB whose rows hold 8n bytes
// once read.
func generated(t *testing.T, n int) string {
	t.Helper()
	return makeDB(t,
		fmt.Sprintf(`CREATE TABLE t (id INTEGER PRIMARY KEY, g BLOB GENERATED ALWAYS AS (zeroblob(%d)) VIRTUAL)`, n),
		`INSERT INTO t (id) VALUES (1), (2), (3), (4), (5), (6), (7), (8)`)
}

// TestBounds holds each bound: past it, the reader writes which bound,
// where, and exits 3, whatever it had written before.
func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		file func(t *testing.T) string
		want string
	}{
		{"a generated value past -max-value", []string{"-max-value", "1000000"},
			func(t *testing.T) string { return generated(t, 2_000_000) },
			`table "t": a value of more than 1000000 bytes (the bound of one value, -max-value)`},
		{"a stored value past -max-value", []string{"-max-value", "1024"},
			func(t *testing.T) string {
				return makeDB(t, `CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)`, `INSERT INTO t VALUES (1, randomblob(4096))`)
			},
			`table "t": a value of more than 1 KiB (the bound of one value, -max-value)`},
		{"a table's values past -max-bytes", []string{"-max-bytes", "1000000"},
			func(t *testing.T) string { return generated(t, 200_000) },
			`table "t": its values hold 1600008 bytes, past the bound of all, 1000000 bytes (-max-bytes)`},
		{"what is written past -max-bytes", []string{"-max-bytes", "4096"},
			// Each value is 1 byte as SQLite holds it, and 6 written
			// (\u0001): only the writing passes the bound.
			func(t *testing.T) string {
				return makeDB(t, `CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT)`,
					`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO t SELECT i, char(1) FROM n`)
			},
			`table "t": more than 4 KiB of records written (the bound of all, -max-bytes)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append(tc.args, tc.file(t)), &stdout, &stderr)
			if code != exitBound || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), exitBound, tc.want)
			}
		})
	}
	var stderr bytes.Buffer
	if code := run([]string{"-max-value", "0", "db"}, &bytes.Buffer{}, &stderr); code != exitUsage {
		t.Errorf("-max-value 0: exit %d, want %d (%s)", code, exitUsage, stderr.String())
	}
}

// runChild runs mcpeffect-sqlite with args in a process of its own, and
// returns its exit code, its output's size, its standard error and the
// most memory it held (its maximum resident set).
func runChild(t *testing.T, args ...string) (code int, written int, stderr string, maxRSS int64) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	maxRSS = -1
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxRSS = ru.Maxrss << 10 // Linux gives kilobytes
	}
	return code, out.Len(), errOut.String(), maxRSS
}

// TestBoundedMemory reads, in a process of its own, what held the reader
// to hundreds of MiB: rows of generated values that a file of a few KiB
// holds. A value past the bound is refused by SQLite before its bytes
// exist; rows within the bounds are written one at a time, so that the
// reader holds about one row, not all of them and their encoding.
func TestBoundedMemory(t *testing.T) {
	scale := int64(1)
	if raceEnabled {
		scale = 5
	}
	code, _, stderr, rss := runChild(t, generated(t, 20_000_000))
	t.Logf("8 values of 20 MB: exit %d, at most %d MiB held", code, rss>>20)
	if code != exitBound || !strings.Contains(stderr, "the bound of one value") {
		t.Errorf("8 values of 20 MB: exit %d, %s; want exit %d", code, stderr, exitBound)
	}
	if max := 48 << 20 * scale; rss > max {
		t.Errorf("8 values of 20 MB: held %d MiB, want at most %d MiB", rss>>20, max>>20)
	}

	code, written, stderr, rss := runChild(t, "-max-bytes", fmt.Sprint(64<<20), generated(t, 5<<20))
	t.Logf("8 values of 5 MiB: exit %d, %d bytes written, at most %d MiB held", code, written, rss>>20)
	if code != exitOK || written < 8*(5<<20)*4/3 {
		t.Errorf("8 values of 5 MiB: exit %d, %d bytes written, %s; want them all", code, written, stderr)
	}
	// All the rows' values, and their base64, are 93 MiB.
	if max := 80 << 20 * scale; rss > max {
		t.Errorf("8 values of 5 MiB: held %d MiB, want at most %d MiB", rss>>20, max>>20)
	}
}

// TestStreamed reads a database whose records are written as they are
// read: they decode as one JSON object of every record, as before.
func TestStreamed(t *testing.T) {
	file := makeDB(t, `CREATE TABLE a (k TEXT PRIMARY KEY, v INTEGER)`, `CREATE TABLE b (x TEXT)`,
		`INSERT INTO a VALUES ('one', 1), ('two', 2)`, `INSERT INTO b VALUES ('x'), (NULL)`)
	var out, stderr bytes.Buffer
	if code := run([]string{file}, &out, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	for _, key := range []string{"a/one", "a/two", "b/1", "b/2", "schema/table/a", "schema/table/b"} {
		if _, ok := got[key]; !ok {
			t.Errorf("no record %q in %s", key, out.String())
		}
	}
	if len(got) != 6 { // SQLite's index of a's key is left out
		t.Errorf("%d records, want 6: %s", len(got), out.String())
	}
}
