package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// connectCarried connects a go-sdk client to a new server of e as
// done-server serves stdio (connectStdio: the key's carrier included),
// for the token secret, through a host.Transport, which sends a key where
// SEP-3182 puts it; it returns the session and the transport.
func (e *env) connectCarried(secret string) (*mcp.ClientSession, *host.Transport) {
	e.t.Helper()
	ctx := e.t.Context()
	cred := stdioCredential{secret: secret}
	k, err := e.done.authenticate(ctx, cred)
	if err != nil {
		e.t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := e.done.connectStdio(ctx, k, cred, mcpeffect.Full, st)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { ss.Close() })
	carried := host.NewTransport(ct)
	return e.clientConnect(carried), carried
}

// connectKeyed connects a go-sdk client to e over Streamable HTTP with
// the bearer token secret, speaking protocol, through a host.RoundTripper;
// it returns the session and the round tripper.
func (e *env) connectKeyed(secret, protocol string) (*mcp.ClientSession, *host.RoundTripper) {
	e.t.Helper()
	rt := &host.RoundTripper{Base: bearerTransport{secret: secret}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil).Connect(e.t.Context(),
		&mcp.StreamableClientTransport{Endpoint: e.serveHTTP() + mcpPath, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs, rt
}

// callKeyed calls tool with a and the idempotency key key, and returns the
// id in its structured result, or its error (a tool's error as a
// toolError).
func callKeyed(t *testing.T, cs *mcp.ClientSession, key, tool string, a args) (map[string]any, error) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), host.WithIdempotencyKey(&mcp.CallToolParams{Name: tool, Arguments: a}, key))
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, toolError{text(res)}
	}
	m, _ := res.StructuredContent.(map[string]any)
	return m, nil
}

// tasksTitled returns how many tasks are titled title.
func (e *env) tasksTitled(title string) int {
	e.t.Helper()
	found, err := e.store.SearchTasks(e.t.Context(), title, store.Page{Limit: 200})
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, task := range found.Items {
		if task.Title == title {
			n++
		}
	}
	return n
}

// idempotencyRecords returns how many live records of keys e's database
// holds.
func (e *env) idempotencyRecords() int {
	e.t.Helper()
	n, err := e.store.IdempotencyStore(func(context.Context) string { return "" }, nil).Sweep(e.t.Context(), time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestIdempotencyKeys holds Done's retries that run once, through the
// real protocol, over stdio's path (the carrier on the server, a
// host.Transport on the client) and Streamable HTTP on both protocols (the
// carrier around the handler, a host.RoundTripper): a write sent again
// with its key is answered with the first call's answer, on any transport
// the same token uses, and runs once; other arguments under the key are
// refused and run nothing; another token, of the same person, has keys of
// its own; a read with a key is not kept; both carriers declare the
// capability.
func TestIdempotencyKeys(t *testing.T) {
	e := newEnv(t)
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	laptop := e.mint("alice laptop", store.Human, mcpeffect.Full)
	stdio, carried := e.connectCarried(secret)
	sessions, rtOld := e.connectKeyed(secret, "2025-11-25")
	stateless, rtNew := e.connectKeyed(secret, "2026-07-28")
	for name, advertised := range map[string]bool{"stdio": carried.IdempotencyAdvertised(), "2025-11-25": rtOld.IdempotencyAdvertised(), "2026-07-28": rtNew.IdempotencyAdvertised()} {
		if !advertised {
			t.Errorf("%s: the server did not declare capabilities.tools.idempotency", name)
		}
	}

	key := host.NewIdempotencyKey()
	first, err := callKeyed(t, stdio, key, "create_task", args{"title": "Ship once"})
	if err != nil {
		t.Fatal(err)
	}
	for name, cs := range map[string]*mcp.ClientSession{"stdio": stdio, "2025-11-25": sessions, "2026-07-28": stateless} {
		again, err := callKeyed(t, cs, key, "create_task", args{"title": "Ship once"})
		if err != nil || again["id"] != first["id"] {
			t.Errorf("%s, the same key again: %v, %v; want the first call's task %v", name, again["id"], err, first["id"])
		}
	}
	if n := e.tasksTitled("Ship once"); n != 1 {
		t.Errorf("%d tasks made by one key, want 1", n)
	}

	_, err = callKeyed(t, stateless, key, "create_task", args{"title": "Ship twice"})
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyKeyConflict || ie.IdempotencyKey != key {
		t.Errorf("the key with other arguments: %v, want a conflict", err)
	}
	if n := e.tasksTitled("Ship twice"); n != 0 {
		t.Errorf("the conflicting call made %d tasks", n)
	}

	// Another token of the same person: its own key, its own task.
	other, err := callKeyed(t, e.connect(laptop), key, "create_task", args{"title": "Ship once"})
	if err != nil || other["id"] == first["id"] {
		t.Errorf("another token with the same key: %v, %v; want a task of its own", other["id"], err)
	}
	if n := e.tasksTitled("Ship once"); n != 2 {
		t.Errorf("%d tasks titled so, want 2: one for each token", n)
	}

	// A read with a key runs, and keeps nothing.
	before := e.idempotencyRecords()
	if _, err := callKeyed(t, stdio, host.NewIdempotencyKey(), "get_task", args{"task_id": first["id"]}); err != nil {
		t.Fatal(err)
	}
	if after := e.idempotencyRecords(); after != before {
		t.Errorf("a read with a key left %d records, %d before", after, before)
	}
}

// TestIdempotencyKeysHostile: keys that are not valid are refused with
// invalid params and run nothing, however long (a megabyte, over HTTP,
// through the carrier); keys of control, format and NUL characters, and
// of scripts whose case changes their length, are keys like any other;
// a call refused for its scope keeps nothing, and its key stays free.
func TestIdempotencyKeysHostile(t *testing.T) {
	e := newEnv(t)
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	for name, key := range map[string]string{
		"a megabyte": strings.Repeat("k", 1<<20),
		"256 bytes":  strings.Repeat("é", 128),
		"empty":      "",
		// Six megabytes once escaped: past the body the carrier reads,
		// answered 413 before anything runs.
		"a megabyte of NUL": strings.Repeat("\x00", 1<<20),
	} {
		// A session of its own: go-sdk's client ends one whose request
		// was answered 413.
		cs, _ := e.connectKeyed(secret, "2026-07-28")
		_, err := callKeyed(t, cs, key, "create_task", args{"title": "hostile " + name})
		var je *jsonrpc.Error
		if !(errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams) && !strings.Contains(fmt.Sprint(err), "Request Entity Too Large") {
			t.Errorf("%s key: %v, want invalid params, or 413", name, err)
		} else {
			t.Logf("%s key: %.160s", name, err)
		}
		if n := e.tasksTitled("hostile " + name); n != 0 {
			t.Errorf("%s key: the refused call made %d tasks", name, n)
		}
	}
	cs, _ := e.connectKeyed(secret, "2026-07-28")
	for name, key := range map[string]string{
		"NUL and controls":     "\x00\x01\x1b[2J\u0085",
		"format characters":    "\u202e\u200b\ufeff\u2066",
		"case changes lengths": "ſtraße İ ﬃ ẞ",
		"255 bytes":            strings.Repeat("a", 255),
	} {
		title := "strange key " + name
		first, err := callKeyed(t, cs, key, "create_task", args{"title": title})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		again, err := callKeyed(t, cs, key, "create_task", args{"title": title})
		if err != nil || again["id"] != first["id"] {
			t.Errorf("%s, again: %v, %v; want %v", name, again["id"], err, first["id"])
		}
		if n := e.tasksTitled(title); n != 1 {
			t.Errorf("%s: %d tasks, want 1", name, n)
		}
	}
	// "ſ" and "s" fold alike, and are two keys.
	for _, key := range []string{"ſ-key", "s-key", "S-KEY"} {
		if _, err := callKeyed(t, cs, key, "create_task", args{"title": "folded keys"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.tasksTitled("folded keys"); n != 3 {
		t.Errorf("three keys that fold alike made %d tasks, want 3", n)
	}

	reader := e.connect(e.mint("reader", store.Human, mcpeffect.ReadOnly))
	before := e.idempotencyRecords()
	if _, err := callKeyed(t, reader, "reader's", "create_task", args{"title": "refused"}); err == nil {
		t.Fatal("a read-only token made a task")
	}
	if after := e.idempotencyRecords(); after != before {
		t.Errorf("a refused call left %d records, %d before", after, before)
	}
}

// TestSecretAnswersNotKept: the writes whose answer holds a secret are
// run once for a key like any other, and their answer is given to the
// first call only: a retry is told that the call ran and where to see
// what it made, and the database holds no trace of the secret. Every
// write that is not idempotent and answers a secret, by its output
// schema, is in secretAnswers.
func TestSecretAnswersNotKept(t *testing.T) {
	e := newEnv(t)
	cs, _ := e.connectCarried(e.mint("alice", store.Human, mcpeffect.Full))
	for _, c := range []struct {
		tool, secret string
		a            args
		list         string
	}{
		{"create_token", "secret", args{"name": "scribe", "kind": "agent", "scope": "non-destructive"}, "list_tokens"},
		{"create_calendar_link", "path", args{"name": "mine"}, "list_calendar_links"},
	} {
		key := host.NewIdempotencyKey()
		first, err := callKeyed(t, cs, key, c.tool, c.a)
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		secret, _ := first[c.secret].(string)
		if secret == "" {
			t.Fatalf("%s answered no %s: %v", c.tool, c.secret, first)
		}
		_, err = callKeyed(t, cs, key, c.tool, c.a)
		ie, ok := mcpeffect.AsIdempotencyError(err)
		if !ok || ie.Type != mcpeffect.IdempotencyResultNotKept || !strings.Contains(ie.Detail, c.list) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s, again: %v; want the error of an answer not kept, naming %s", c.tool, err, c.list)
		}
		var dump bytes.Buffer
		if err := e.store.Dump(t.Context(), &dump); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(dump.Bytes(), []byte(strings.TrimSuffix(strings.TrimPrefix(secret, feedPath), ".ics"))) {
			t.Errorf("%s: the database holds the secret it answered", c.tool)
		}
	}
	if n := len(must[tokensResult](t, cs, "list_tokens", args{}).Tokens); n != 2 {
		t.Errorf("%d tokens, want alice's and the one create_token minted once", n)
	}

	// Which writes answer a secret: those whose output has a property
	// named so.
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, tool := range tools.Tools {
		if eff, _ := e.registry.Effect(tool.Name); !keptUnderKey(eff) {
			continue
		}
		checked++
		raw, _ := json.Marshal(tool.OutputSchema)
		telling := bytes.Contains(raw, []byte(`"secret"`)) || bytes.Contains(raw, []byte(`"path"`))
		if telling != (secretAnswers[tool.Name] != "") {
			t.Errorf("%s: its output names a secret: %t; in secretAnswers: %t", tool.Name, telling, secretAnswers[tool.Name] != "")
		}
	}
	if checked < len(secretAnswers) {
		t.Errorf("%d writes kept under a key checked, fewer than secretAnswers holds", checked)
	}
	t.Logf("%d writes kept under a key checked for secrets in their answers", checked)
}

// keptUnderKey reports whether a call of effect eff is kept under its
// idempotency key: a write that is not idempotent (mcpeffect.Idempotent
// holds Write: its own bit is what is left of it).
func keptUnderKey(eff mcpeffect.Effect) bool {
	return eff&mcpeffect.Write != 0 && eff&(mcpeffect.Idempotent&^mcpeffect.Write) == 0
}

// TestIdempotencyAfterOutage (PostgreSQL): the database goes away while
// the handler of a call made with a key runs (the test cuts its path
// there, and mends it a moment later). The call answers that the
// database is unavailable and nothing was changed, which is so: its key
// is released, and the retry with the same key, once the database is
// back, runs it, once.
func TestIdempotencyAfterOutage(t *testing.T) {
	postgresOnly(t)
	ctx := t.Context()
	link, url := pgtest.NewLink(t, pgtest.NewDatabase(t))
	st, _, err := store.OpenPostgres(ctx, url, storeOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d := newDone(st, slog.New(slog.NewTextHandler(io.Discard, nil)), config{writeRate: rate.Inf})
	// The server as done-server serves stdio, with a hook just before the
	// tools' handlers: armed, it cuts the database's path there, once.
	server, registry := d.newToolServer()
	var cut atomic.Bool
	server.AddReceivingMiddleware(append(d.middleware(d.enforcer(registry).Middleware()), func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" && cut.CompareAndSwap(true, false) {
				link.Cut()
				time.AfterFunc(700*time.Millisecond, link.Mend)
			}
			return next(ctx, method, req)
		}
	})...)
	_, secret, err := st.MintToken(ctx, store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	cred := stdioCredential{secret: secret}
	k, err := d.authenticate(ctx, cred)
	if err != nil {
		t.Fatal(err)
	}
	ct, stt := mcp.NewInMemoryTransports()
	sctx := context.WithValue(mcpeffect.WithConnectionScope(withStdioCredential(ctx, cred), k.Scope), logTokenKey{}, k)
	ss, err := server.Connect(sctx, d.enforcer(registry).IdempotencyTransport(stt), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil).Connect(ctx, host.NewTransport(ct), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	key := host.NewIdempotencyKey()
	cut.Store(true)
	_, err = callKeyed(t, cs, key, "create_task", args{"title": "after the outage"})
	if !errors.Is(err, errToolFailed) || !strings.Contains(err.Error(), "unavailable for now") {
		t.Fatalf("the call during the outage: %v, want the tool error that says to try again", err)
	}
	first, err := callKeyed(t, cs, key, "create_task", args{"title": "after the outage"})
	if err != nil {
		t.Fatalf("the retry with the same key: %v, want it run", err)
	}
	again, err := callKeyed(t, cs, key, "create_task", args{"title": "after the outage"})
	if err != nil || again["id"] != first["id"] {
		t.Errorf("the retry of the retry: %v, %v; want %v", again["id"], err, first["id"])
	}
	found, err := st.SearchTasks(ctx, "after the outage", store.Page{})
	if err != nil || len(found.Items) != 1 {
		t.Errorf("tasks made: %v, %v; want one", found.Items, err)
	}
}

// TestIdempotencyWrittenDespiteOutage: a call whose answer says the
// database was unavailable, but whose write was committed (the commit
// reached the database, its acknowledgement was lost), is kept as having
// run, with an error that says so, and is not run again; one that wrote
// nothing has its key released.
func TestIdempotencyWrittenDespiteOutage(t *testing.T) {
	e := newEnv(t)
	k, _, err := e.store.MintToken(t.Context(), store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	r := e.done.idempotencyOptions().Store
	failed, _ := json.Marshal(mcpeffect.CallOutcome{Result: json.RawMessage(`{"content":[{"type":"text","text":"the database of Done is unavailable for now"}],"isError":true}`)})
	for _, wrote := range []bool{true, false} {
		n := &callNote{token: k.ID, tool: "create_task", key: fmt.Sprint("wrote ", wrote)}
		ctx := context.WithValue(t.Context(), callNoteKey{}, n)
		c := mcpeffect.IdempotencyClaim{Key: sha256.Sum256([]byte(n.key)), Fingerprint: sha256.Sum256([]byte("call")), Now: time.Now(), Expires: time.Now().Add(time.Hour)}
		rand.Read(c.Token[:])
		if _, ok, err := r.Claim(ctx, c); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if wrote {
			if _, err := e.store.CreateTask(idempotentWrites(ctx), k.Actor(), store.NewTask{Title: "committed"}); err != nil {
				t.Fatal(err)
			}
		}
		n.transient.Store(true)
		if err := r.Complete(ctx, c, failed); err != nil {
			t.Fatal(err)
		}
		retry := c
		rand.Read(retry.Token[:])
		rec, claimed, err := r.Claim(ctx, retry)
		switch {
		case err != nil:
			t.Fatal(err)
		case !wrote:
			if !claimed {
				t.Errorf("nothing written: the retry found %+v, want the key free", rec)
			}
			continue
		case claimed || !rec.Done:
			t.Fatalf("written: the retry claimed %t, %+v; want the call kept as run", claimed, rec)
		}
		var o mcpeffect.CallOutcome
		if err := json.Unmarshal(rec.Outcome, &o); err != nil || o.Error == nil {
			t.Fatalf("the kept outcome %s: %v", rec.Outcome, err)
		}
		if ie, ok := mcpeffect.AsIdempotencyError(o.Error); !ok || ie.Type != mcpeffect.IdempotencyResultNotKept || !strings.Contains(ie.Detail, "the call ran") {
			t.Errorf("the kept outcome: %v, want the error of a call that ran", o.Error)
		}
	}
}

// TestRetriesDoc holds docs/retries.md's list of the tools kept under a key
// to the registry: the writes that are not idempotent.
func TestRetriesDoc(t *testing.T) {
	doc, err := os.ReadFile("docs/retries.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(doc), "Kept under a key:")
	list, _, _ = strings.Cut(list, ". ")
	if !ok {
		t.Fatal(`docs/retries.md has no "Kept under a key:" list`)
	}
	var listed []string
	for i, part := range strings.Split(list, "`") {
		if i%2 == 1 {
			listed = append(listed, part)
		}
	}
	e := newEnv(t)
	var kept []string
	for tool, eff := range e.registry.All() {
		if keptUnderKey(eff) {
			kept = append(kept, tool)
		}
	}
	slices.Sort(listed)
	slices.Sort(kept)
	if !slices.Equal(listed, kept) {
		t.Errorf("docs/retries.md lists %v as kept under a key; the registry's writes that are not idempotent are %v", listed, kept)
	}
}

// TestRetryOutage: the record of a call is tried again while the
// database is unavailable, and given back at once otherwise; a call whose
// record was waited for in vain is not waited for again (mcpeffect's
// second try, the error it keeps in place of the answer).
func TestRetryOutage(t *testing.T) {
	outage := fmt.Errorf("store: %w: connection refused", store.ErrUnavailable)
	attempts := 0
	n := &callNote{}
	_, err := retryOutage(t.Context(), n, func() (int, error) {
		if attempts++; attempts < 3 {
			return 0, outage
		}
		return 0, nil
	})
	if err != nil || attempts != 3 || n.waited.Load() {
		t.Errorf("an outage that ends: %d attempts, %v, waited %t; want 3, nil, false", attempts, err, n.waited.Load())
	}
	attempts = 0
	_, err = retryOutage(t.Context(), n, func() (int, error) { attempts++; return 0, errors.New("not an outage") })
	if err == nil || attempts != 1 {
		t.Errorf("another error: %d attempts, %v; want 1 and the error", attempts, err)
	}
	attempts = 0
	n.waited.Store(true)
	_, err = retryOutage(t.Context(), n, func() (int, error) { attempts++; return 0, outage })
	if !store.Transient(err) || attempts != 1 {
		t.Errorf("waited for already: %d attempts, %v; want 1 and the outage", attempts, err)
	}
}
