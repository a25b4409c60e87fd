package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// postgresOnly skips a test of replicas sharing one database.
func postgresOnly(t *testing.T) {
	t.Helper()
	if !pgtest.Postgres() {
		t.Skip("replicas share a PostgreSQL database; this run is on SQLite")
	}
}

// TestSharedDatabaseCommands runs the commands on a PostgreSQL database
// that no one has used: token create may be the first (it makes the
// schema), DONE_DB stands for -db, and serve refuses to serve a local
// folder that other replicas would not see, and says why.
func TestSharedDatabaseCommands(t *testing.T) {
	postgresOnly(t)
	url := pgtest.NewDatabase(t)
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"token", "create", "-db", url, "-scope", "full", "-kind", "human", "-name", "alice"},
		getenv(nil), &stdout, &stderr); err != nil {
		t.Fatalf("token create as the first command: %v\n%s", err, &stderr)
	}
	secret := strings.TrimSpace(stdout.String())
	stdout.Reset()
	if err := run(t.Context(), []string{"token", "list"}, getenv(map[string]string{"DONE_DB": url}), &stdout, &stderr); err != nil {
		t.Fatalf("token list with DONE_DB: %v\n%s", err, &stderr)
	}
	if !strings.Contains(stdout.String(), "alice") {
		t.Errorf("token list with DONE_DB:\n%s\nwant alice's token", &stdout)
	}
	st, _, err := store.OpenPostgres(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Authenticate(t.Context(), secret); err != nil {
		t.Errorf("the secret token create printed: %v", err)
	}

	err = run(t.Context(), []string{"serve", "-db", url, "-data", t.TempDir(), "-http", "127.0.0.1:0"}, getenv(nil), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "-context DIR") || !strings.Contains(err.Error(), "other replicas would not see") {
		t.Errorf("serve on a shared database with the default folder: %v, want a refusal that says why and what to pass", err)
	}
	// -confirm on replicas needs the key they share: an answer to what
	// one asked may reach another.
	for _, mode := range []string{"destructive", "url"} {
		err = run(t.Context(), []string{"serve", "-db", url, "-data", t.TempDir(), "-context", "off", "-confirm", mode, "-http", "127.0.0.1:0"}, getenv(nil), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "DONE_CONFIRM_KEY") {
			t.Errorf("serve -confirm %s on a shared database without DONE_CONFIRM_KEY: %v, want a refusal that names it", mode, err)
		}
	}
	if err := run(t.Context(), []string{"token", "create", "-db", "sqlite:done.db", "-scope", "full", "-kind", "human"}, getenv(nil), &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), "-db must be a PostgreSQL URL") {
		t.Errorf("-db with something else than a PostgreSQL URL: %v", err)
	}
}

// TestRevokedAcrossReplicas: two replicas of Done on one database, each
// with its own HTTP server and its own cache of tokens. A token revoked
// on one is refused by the other within store.RevocationBound, in a
// session opened before the revocation: the clock of the test stands
// still, so no cache entry expires on its own.
func TestRevokedAcrossReplicas(t *testing.T) {
	postgresOnly(t)
	dir := t.TempDir()
	a, b := openEnv(t, dir), openEnv(t, dir)
	secret := a.mint("builder", store.Agent, mcpeffect.Full)
	cs := a.connectHTTP(secret)
	must[store.Task](t, cs, "create_task", args{"title": "before"})
	k, err := b.store.Authenticate(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.RevokeAnyToken(t.Context(), k.ID); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for {
		_, err := call[store.Task](t, cs, "create_task", args{"title": "after"})
		if err != nil {
			t.Logf("refused %v after the revocation on the other replica: %v", time.Since(revoked), err)
			break
		}
		if time.Since(revoked) > store.RevocationBound {
			t.Fatalf("the session opened before the revocation still writes %v after it", store.RevocationBound)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFeedFromAnyReplica: a calendar link made on one replica is served
// by another, and its rotation there ends the old secret on the first.
func TestFeedFromAnyReplica(t *testing.T) {
	postgresOnly(t)
	dir := t.TempDir()
	a, b := openEnv(t, dir), openEnv(t, dir)
	secret := a.mint("alice", store.Human, mcpeffect.Full)
	cs := a.connectHTTP(secret)
	must[store.Task](t, cs, "create_task", args{"title": "Review", "assignee": "alice", "due": "2025-06-03"})
	made := must[calendarLinkResult](t, cs, "create_calendar_link", nil)
	get := func(base string) (int, string) {
		resp, err := http.Get(base + made.Path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	a.serveHTTP()
	if code, body := get(b.serveHTTP()); code != http.StatusOK || !strings.Contains(body, "Review") {
		t.Fatalf("the other replica's feed: %d\n%s", code, body)
	}
	must[calendarLinkResult](t, b.connectHTTP(secret), "rotate_calendar_link", args{"link_id": made.Link.ID})
	if code, _ := get(a.httpURL); code == http.StatusOK {
		t.Errorf("the first replica still serves the feed rotated on the other")
	}
}

// TestWriteRateAcrossReplicas states what the write limit of a tree of
// tokens is past one machine: each replica keeps its own, so that a tree
// writing through N replicas gets at most N times the burst (and the
// rate), and no more, however it spreads its calls.
func TestWriteRateAcrossReplicas(t *testing.T) {
	postgresOnly(t)
	const burst, replicas = 4, 2
	dir := t.TempDir()
	e := openEnv(t, dir)
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	var sessions []*mcp.ClientSession
	for range replicas {
		r := openEnv(t, dir)
		server, _ := newDone(r.store, r.logger, config{writeRate: 0.001, writeBurst: burst}).newServer()
		sessions = append(sessions, connectServer(t, r, server, secret, nil, ""))
	}
	written := 0
	for i := range 3 * burst * replicas {
		if _, err := call[store.Task](t, sessions[i%replicas], "create_task", args{"title": fmt.Sprint("task ", i)}); err == nil {
			written++
		} else if !strings.Contains(err.Error(), "writes faster than Done allows") {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if written != burst*replicas {
		t.Errorf("%d writes went through %d replicas, want %d: the burst of each", written, replicas, burst*replicas)
	}
}

// TestSessionsAcrossReplicas states the session bound of a tree of
// tokens past one machine, as TestWriteRateAcrossReplicas does the write
// rate: each replica counts the sessions it holds, so that a tree opens
// at most N times its bound through N replicas, and no more. Only clients
// of a protocol before 2026-07-28 have sessions, and only replicas that
// keep them (serve on a shared store keeps none): the clients here speak
// 2025-11-25 to replicas served with sessions.
func TestSessionsAcrossReplicas(t *testing.T) {
	postgresOnly(t)
	const perTree, replicas = 2, 2
	dir := t.TempDir()
	secret := openEnv(t, dir).mint("alice", store.Human, mcpeffect.Full)
	lim := defaultHTTPLimits
	lim.sessionsPerTree = perTree
	var bases []string
	for range replicas {
		bases = append(bases, openEnv(t, dir).serveLimited(lim))
	}
	opened := 0
	for i := range 3 * perTree * replicas {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
			Endpoint:             bases[i%replicas] + mcpPath,
			HTTPClient:           &http.Client{Transport: bearerTransport{secret: secret}},
			MaxRetries:           -1,
			DisableStandaloneSSE: true,
		}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			if !strings.Contains(err.Error(), "Too Many Requests") {
				t.Fatalf("session %d: %v", i, err)
			}
			continue
		}
		opened++
		t.Cleanup(func() { cs.Close() })
	}
	if opened != perTree*replicas {
		t.Errorf("%d sessions opened through %d replicas, want %d: the bound of each", opened, replicas, perTree*replicas)
	}
}
