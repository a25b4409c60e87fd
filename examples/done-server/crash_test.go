package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHTTPProcess starts done-server serve -http on a loopback port
// chosen by the system, on the data in dir, and returns the process and
// the URL of its MCP endpoint, once it listens (see startDone).
func startHTTPProcess(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd, base := startDone(t, "-data", dir)
	return cmd, base + mcpPath
}

// connectURL connects a client to the MCP endpoint url with the bearer
// token secret, over transport.
func connectURL(t *testing.T, url, secret string, transport http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:             url,
		HTTPClient:           &http.Client{Transport: bearerTransport{secret, transport}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestCrash kills done-server with SIGKILL in the middle of a write load
// over HTTP, and starts it again on the same data: every write that was
// acknowledged before the kill is there, and the database is whole.
func TestCrash(t *testing.T) {
	sqliteOnly(t, "it checks the file after a SIGKILL")
	dir := t.TempDir()
	st, _, err := store.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A token a writer, as agents have: one token's writes are limited
	// to a burst of 60 (see writeLimiter), and the writers' 240 before
	// the kill keep each well within its own.
	const writers, acksBeforeKill = 8, 120
	var secrets []string
	for w := range writers {
		_, secret, err := st.MintToken(t.Context(), store.NewToken{Name: fmt.Sprintf("writer-%d", w), Kind: store.Agent, Scope: mcpeffect.NonDestructive})
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, secret)
	}
	st.Close()

	cmd, url := startHTTPProcess(t, dir)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()

	// Writers create tasks and add a step to each, and keep what the
	// server acknowledged, until the process is killed under them. A
	// successful answer means a committed write, whenever it came.
	var (
		mu      sync.Mutex // guards what follows
		tasks   []string
		steps   []string
		killed  bool
		failure error
		enough  = make(chan struct{})
	)
	ack := func(list *[]string, id string) {
		mu.Lock()
		defer mu.Unlock()
		*list = append(*list, id)
		if len(tasks) == acksBeforeKill && list == &tasks {
			close(enough)
		}
	}
	var wg sync.WaitGroup
	for w := range writers {
		cs := connectURL(t, url, secrets[w], transport)
		wg.Go(func() {
			defer cs.Close()
			for n := 0; ; n++ {
				task, err := call[store.Task](t, cs, "create_task", args{"title": fmt.Sprintf("task %d of writer %d", n, w)})
				if err == nil {
					ack(&tasks, task.ID)
					var step store.Step
					if step, err = call[store.Step](t, cs, "add_step", args{"task_id": task.ID, "text": "check it"}); err == nil {
						ack(&steps, step.ID)
					}
				}
				if err != nil {
					// The lock is held from before the kill until killed
					// is set: an error seen after taking it while killed
					// is false came before the kill.
					mu.Lock()
					if !killed && failure == nil {
						failure = fmt.Errorf("writer %d before the kill: %w", w, err)
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	select {
	case <-enough:
	case <-time.After(30 * time.Second):
		t.Fatal("the writers made too little progress")
	}
	mu.Lock()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed = true
	mu.Unlock()
	cmd.Wait()
	wg.Wait()
	if failure != nil {
		t.Fatal(failure)
	}
	acked := append([]string(nil), tasks...)
	if info, err := os.Stat(filepath.Join(dir, store.FileName+"-wal")); err != nil || info.Size() == 0 {
		t.Logf("no write-ahead log left by the kill (%v): the crash tested less than it could", err)
	}

	// The server starts again on the data, and serves every task it
	// acknowledged.
	cmd, url = startHTTPProcess(t, dir)
	cs := connectURL(t, url, secrets[0], transport)
	listed := map[string]bool{}
	for cursor := ""; ; {
		a := args{"limit": store.MaxLimit}
		if cursor != "" {
			a["cursor"] = cursor
		}
		page := must[store.TaskPage](t, cs, "list_tasks", a)
		for _, task := range page.Tasks {
			listed[task.ID] = true
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	for _, id := range acked {
		if !listed[id] {
			t.Errorf("task %s was acknowledged before the kill and is not there after the restart", id)
		}
	}
	cs.Close()
	transport.CloseIdleConnections()
	stopProcess(t, cmd)

	// The database opens cleanly, holds every acknowledged step too, and
	// SQLite finds it whole.
	st, _, err = store.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatalf("the database does not open after the crash: %v", err)
	}
	st.Close()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.FileName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var integrity string
	if err := db.QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Errorf("PRAGMA integrity_check: %q, %v", integrity, err)
	}
	for _, id := range steps {
		var n int
		if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM steps WHERE id = ?", id).Scan(&n); err != nil || n != 1 {
			t.Errorf("step %s was acknowledged before the kill and is not there: %v", id, err)
		}
	}
	t.Logf("%d tasks and %d steps acknowledged before SIGKILL, all there after the restart", len(acked), len(steps))
}

// stopProcess stops a server with SIGTERM and waits for it to exit.
func stopProcess(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the server did not exit cleanly: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the server did not exit within 10 s of SIGINT")
	}
}
