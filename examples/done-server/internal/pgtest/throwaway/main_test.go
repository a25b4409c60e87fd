package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/notrun"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
)

// TestMain lets the test binary stand in for the command: run with
// THROWAWAY_MAIN=1, it is throwaway itself.
func TestMain(m *testing.M) {
	if os.Getenv("THROWAWAY_MAIN") == "1" {
		os.Args = append(os.Args[:1], strings.Fields(os.Getenv("THROWAWAY_ARGS"))...)
		main()
		os.Exit(0)
	}
	code := m.Run()
	where, _ := os.Getwd()
	notrun.Report(os.Stderr, where)
	os.Exit(code)
}

// TestThrowaway runs the command as the README has a person run it: it
// prints the export of DONE_DB, whose role owns its database (it may
// make tables there, as Done's migrations do), and stops PostgreSQL on
// SIGTERM, leaving nothing listening.
func TestThrowaway(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "THROWAWAY_MAIN=1", "THROWAWAY_ARGS=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Wait()
		if strings.Contains(stderr.String(), "initdb is neither on PATH") {
			notrun.Skip(t, pgtest.NeedPostgres, strings.TrimSpace(stderr.String()))
		}
		t.Fatalf("throwaway printed nothing: %v\n%s", err, stderr.String())
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "export DONE_DB='")
	url, ok2 := strings.CutSuffix(url, "'")
	if !ok || !ok2 || !strings.HasPrefix(url, "postgres://done@127.0.0.1:") {
		t.Fatalf("throwaway printed %q, want an export of DONE_DB with a loopback URL", line)
	}
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "CREATE TABLE t (x int)"); err != nil {
		t.Errorf("the role of DONE_DB cannot make a table in its database: %v", err)
	}
	conn.Close(t.Context())
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("throwaway, on SIGTERM: %v\n%s", err, stderr.String())
	}
	if c, err := pgx.Connect(context.Background(), url); err == nil {
		c.Close(context.Background())
		t.Error("PostgreSQL still answers after throwaway stopped")
	}
}
