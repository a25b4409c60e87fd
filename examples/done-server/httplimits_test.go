package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveLimited serves e over HTTP with the limits lim, on a server of its
// own, and returns its base URL.
func (e *env) serveLimited(lim httpLimits) string {
	e.t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	lim.configure(srv.Config)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = newDone(e.store, e.logger, config{baseURL: base}).limitedHTTPHandler(e.server, e.registry, lim)
	srv.Start()
	e.t.Cleanup(srv.Close)
	return base
}

// mcpRequest makes a request to the MCP endpoint at base as a client
// would, with the bearer token secret and, if not empty, the session id,
// and returns the answer with its body read.
func mcpRequest(t *testing.T, method, base, secret, session, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, base+mcpPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+secret)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// openSession initializes a session at base for the token secret, and
// returns the status of the answer, the session's id and the body.
func openSession(t *testing.T, base, secret string) (status int, id, body string) {
	t.Helper()
	resp, b := mcpRequest(t, http.MethodPost, base, secret, "", initialize)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), b
}

// rpcRefusal decodes the JSON-RPC error of a refused request.
func rpcRefusal(t *testing.T, body string) (id json.RawMessage, code int64, message string) {
	t.Helper()
	var r struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("the refusal %q is not a JSON-RPC error: %v", body, err)
	}
	return r.ID, r.Error.Code, r.Error.Message
}

// TestSessionLimits opens sessions up to each limit: the one past the
// token's is answered 429, the one past the server's 503, each with a
// JSON-RPC error saying which limit and what to do; closing a session
// makes room again, and go-sdk's client is refused too.
func TestSessionLimits(t *testing.T) {
	e := newEnv(t)
	lim := defaultHTTPLimits
	lim.sessionsPerTree, lim.sessions = 3, 5
	base := e.serveLimited(lim)
	alice := e.mint("alice", store.Human, mcpeffect.Full)
	bob := e.mint("bob", store.Agent, mcpeffect.ReadOnly)
	carol := e.mint("carol", store.Human, mcpeffect.ReadOnly)
	// Sessions are bounded per tree of tokens: one that alice mints
	// shares her bound.
	aliceToken, err := e.store.Authenticate(t.Context(), alice)
	if err != nil {
		t.Fatal(err)
	}
	_, scribe, err := e.store.CreateToken(t.Context(), aliceToken.Actor(), mcpeffect.Full, store.NewToken{Name: "scribe", Kind: store.Agent, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}

	var aliceSessions []string
	for i := range 3 {
		status, id, body := openSession(t, base, alice)
		if status != http.StatusOK || id == "" {
			t.Fatalf("alice's session %d: %d %q", i, status, body)
		}
		aliceSessions = append(aliceSessions, id)
	}
	for _, c := range []struct {
		name, secret string
		status       int
		want         []string
	}{
		{"past the token's limit", alice, http.StatusTooManyRequests, []string{"this token, with those minted from the same command-line token, already has 3 MCP sessions open", "DELETE /mcp", "Mcp-Session-Id", "5m0s"}},
		{"a token alice minted, in her tree", scribe, http.StatusTooManyRequests, []string{"already has 3 MCP sessions open"}},
		{"another token", bob, http.StatusOK, nil},
		{"another token again", bob, http.StatusOK, nil},
		{"past the server's limit", carol, http.StatusServiceUnavailable, []string{"the server has 5 MCP sessions open", "try again later"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, id, body := openSession(t, base, c.secret)
			if status != c.status {
				t.Fatalf("status %d (%s), want %d", status, body, c.status)
			}
			if c.status == http.StatusOK {
				return
			}
			if id != "" {
				t.Errorf("a refused request opened session %s", id)
			}
			reqID, code, msg := rpcRefusal(t, body)
			if string(reqID) != "1" || code != codeTooManySessions {
				t.Errorf("id %s, code %d; want the initialize's id, 1, and %d", reqID, code, codeTooManySessions)
			}
			for _, want := range c.want {
				if !strings.Contains(msg, want) {
					t.Errorf("the message %q does not say %q", msg, want)
				}
			}
		})
	}

	// Closing a session makes room for its token, and in all.
	if resp, body := mcpRequest(t, http.MethodDelete, base, alice, aliceSessions[0], ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	if status, _, body := openSession(t, base, alice); status != http.StatusOK {
		t.Fatalf("alice after closing one: %d %s", status, body)
	}
	// A client of a protocol with sessions, before 2026-07-28.
	_, err = mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   base + mcpPath,
		HTTPClient: &http.Client{Transport: bearerTransport{secret: carol}},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	// go-sdk's client (v1.8.0) takes 429 and 503 for passing troubles and
	// shows their status, not the body that curl or another client shows.
	if err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("go-sdk's client past the limit: %v, want 503", err)
	}
	// The 2026-07-28 protocol has no sessions: its requests hold nothing
	// once answered, and no session limit refuses them.
	cs := connectProtocol(t, base, carol, "2026-07-28", nil)
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("a 2026-07-28 client at the sessions' limit: %v", err)
	}
}

// TestSessionIdleExpiry leaves sessions idle past the limit: they are
// closed, their token may open as many again, and the old id is 404, on
// which a client starts a new session.
func TestSessionIdleExpiry(t *testing.T) {
	e := newEnv(t)
	lim := defaultHTTPLimits
	lim.sessionsPerTree, lim.sessionIdle = 2, 300*time.Millisecond
	base := e.serveLimited(lim)
	alice := e.mint("alice", store.Human, mcpeffect.Full)
	var first string
	for range 2 {
		status, id, body := openSession(t, base, alice)
		if status != http.StatusOK {
			t.Fatalf("%d %s", status, body)
		}
		first = id
	}
	if status, _, _ := openSession(t, base, alice); status != http.StatusTooManyRequests {
		t.Fatalf("a third session: %d, want 429", status)
	}
	time.Sleep(3 * lim.sessionIdle)
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if resp, body := mcpRequest(t, http.MethodPost, base, alice, first, ping); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a ping on an expired session: %d %s, want 404", resp.StatusCode, body)
	}
	for i := range 2 {
		if status, _, body := openSession(t, base, alice); status != http.StatusOK {
			t.Errorf("session %d after the idle ones expired: %d %s", i, status, body)
		}
	}
}

// TestSessionMemory measures what an open session costs: the live heap
// before and after opening 200, over HTTP as a client does. The figure is
// logged, and held to a generous bound, to catch a session that grows by
// an order of magnitude.
func TestSessionMemory(t *testing.T) {
	e := newEnv(t)
	const n = 200
	lim := defaultHTTPLimits
	lim.sessionsPerTree, lim.sessions = n, n
	base := e.serveLimited(lim)
	secret := e.mint("alice", store.Human, mcpeffect.ReadOnly)
	openSession(t, base, secret) // the first request warms up caches
	// Memory in use: the live heap, and the stacks of the goroutines a
	// session keeps.
	inUse := func() (heap, stacks uint64, goroutines int) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, m.StackInuse, runtime.NumGoroutine()
	}
	heap0, stacks0, g0 := inUse()
	for i := range n - 1 {
		if status, _, body := openSession(t, base, secret); status != http.StatusOK {
			t.Fatalf("session %d: %d %s", i, status, body)
		}
	}
	heap1, stacks1, g1 := inUse()
	per := func(a, b uint64) float64 { return (float64(b) - float64(a)) / (n - 1) / 1024 }
	total := per(heap0+stacks0, heap1+stacks1)
	t.Logf("%d sessions: heap %d -> %d KiB, stacks %d -> %d KiB, %d -> %d goroutines: %.1f KiB a session (heap %.1f, stacks %.1f)",
		n, heap0>>10, heap1>>10, stacks0>>10, stacks1>>10, g0, g1, total, per(heap0, heap1), per(stacks0, stacks1))
	if total > 64 {
		t.Errorf("a session costs %.1f KiB", total)
	}
	if status, _, _ := openSession(t, base, secret); status != http.StatusTooManyRequests {
		t.Errorf("session %d: status %d, want 429", n+1, status)
	}
}

// TestHTTPTimeouts holds connections that stall: an idle keep-alive one,
// headers that never end, a body that never ends. Each is closed by the
// server soon after its timeout.
func TestHTTPTimeouts(t *testing.T) {
	e := newEnv(t)
	lim := defaultHTTPLimits
	lim.readHeader, lim.read, lim.write, lim.idle = 200*time.Millisecond, 400*time.Millisecond, 400*time.Millisecond, 200*time.Millisecond
	base := e.serveLimited(lim)
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	host := strings.TrimPrefix(base, "http://")

	for _, c := range []struct {
		name string
		send string // what the client sends, then it stalls
	}{
		{"idle keep-alive", "GET " + metadataPath + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n"},
		{"headers that never end", "GET " + metadataPath + " HTTP/1.1\r\nHost: " + host + "\r\n"},
		{"a body that never ends", "POST " + mcpPath + " HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + secret +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, c.send); err != nil {
				t.Fatal(err)
			}
			// The server may answer first (the keep-alive request, or an
			// error for the body); then it must close the connection.
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			start := time.Now()
			_, err = io.Copy(io.Discard, bufio.NewReader(conn))
			if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the server kept the connection for %v", time.Since(start))
			}
		})
	}
}

// TestStreamOutlivesTimeouts keeps a session's stream of server messages
// (a GET) open well past the read and write timeouts: it still carries a
// ping from the server, and the client's calls still work.
func TestStreamOutlivesTimeouts(t *testing.T) {
	e := newEnv(t)
	lim := defaultHTTPLimits
	lim.read, lim.write = 300*time.Millisecond, 300*time.Millisecond
	base := e.serveLimited(lim)
	// A protocol with sessions and their streams: 2026-07-28 has neither.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint:   base + mcpPath,
		HTTPClient: &http.Client{Transport: bearerTransport{secret: e.mint("alice", store.Human, mcpeffect.Full)}},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	must[whoamiResult](t, cs, "whoami", nil)
	time.Sleep(4 * lim.read)

	var ss *mcp.ServerSession
	for s := range e.server.Sessions() {
		if s.ID() == cs.ID() {
			ss = s
		}
	}
	if ss == nil {
		t.Fatal("the session is gone")
	}
	// A ping over a dead stream would wait for ever.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := ss.Ping(ctx, nil); err != nil {
		t.Errorf("a ping from the server over the stream, after the timeouts: %v", err)
	}
	if me := must[whoamiResult](t, cs, "whoami", nil); me.Name != "alice" {
		t.Errorf("whoami after the timeouts: %+v", me)
	}
}

// recordingTransport sends requests through base and records, for each
// POST without a session id (one that may open a session), the JSON-RPC
// method it carried and the status and body of the answer.
type recordingTransport struct {
	base http.RoundTripper

	mu      sync.Mutex
	answers []recordedAnswer
}

type recordedAnswer struct {
	method string
	status int
	body   string
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		return rt.base.RoundTrip(r)
	}
	var method string
	if r.GetBody != nil {
		if b, err := r.GetBody(); err == nil {
			var msg struct{ Method string }
			data, _ := io.ReadAll(b)
			_ = json.Unmarshal(data, &msg)
			method = msg.Method
		}
	}
	resp, err := rt.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	a := recordedAnswer{method: method, status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		// A refusal is short; an accepted answer may be a stream, which
		// must reach the client unread.
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(data))
		a.body = string(data)
	}
	rt.mu.Lock()
	rt.answers = append(rt.answers, a)
	rt.mu.Unlock()
	return resp, nil
}

// TestSessionLimitConcurrent connects go-sdk clients all at once on one
// token, as an agent fleet or a host with many windows does: below the
// token's limit none is refused, however their requests interleave; past
// it, exactly the surplus is refused, with 429 and the message that says
// which limit. Each client's session stays open to the end, so that those
// refused are those that would pass the limit.
func TestSessionLimitConcurrent(t *testing.T) {
	for _, c := range []struct {
		name           string
		perTree, total int
		clients        int
		refused        int
	}{
		{"32 clients well below the token's limit", 100, 1024, 32, 0},
		{"32 clients at the token's limit", 32, 1024, 32, 0},
		{"one past the token's limit", 8, 1024, 9, 1},
		{"four past the token's limit", 8, 1024, 12, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			lim := defaultHTTPLimits
			lim.sessionsPerTree, lim.sessions = c.perTree, c.total
			base := e.serveLimited(lim)
			secret := e.mint("alice", store.Agent, mcpeffect.ReadOnly)
			rt := &recordingTransport{base: bearerTransport{secret: secret}}

			start := make(chan struct{})
			var wg sync.WaitGroup
			errs := make([]error, c.clients)
			for i := range c.clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					// A protocol with sessions: 2026-07-28 has none.
					cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{
						Endpoint:   base + mcpPath,
						HTTPClient: &http.Client{Transport: rt},
						MaxRetries: -1,
					}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
					errs[i] = err
					if err == nil {
						t.Cleanup(func() { cs.Close() })
					}
				}()
			}
			close(start)
			wg.Wait()

			var failed int
			for _, err := range errs {
				if err != nil {
					failed++
					if !strings.Contains(err.Error(), "Too Many Requests") {
						t.Errorf("a client failed other than by the token's limit: %v", err)
					}
				}
			}
			var refusals []recordedAnswer
			rt.mu.Lock()
			for _, a := range rt.answers {
				if a.status != http.StatusOK {
					refusals = append(refusals, a)
				}
			}
			rt.mu.Unlock()
			if failed != c.refused || len(refusals) != c.refused {
				t.Errorf("%d clients failed to connect, %d requests were refused (%+v); want %d of each", failed, len(refusals), refusals, c.refused)
			}
			for _, a := range refusals {
				if a.status != http.StatusTooManyRequests {
					t.Errorf("a %s refused %d, want 429: %s", a.method, a.status, a.body)
					continue
				}
				_, code, msg := rpcRefusal(t, a.body)
				want := fmt.Sprintf("this token, with those minted from the same command-line token, already has %d MCP sessions open", c.perTree)
				if code != codeTooManySessions || !strings.Contains(msg, want) {
					t.Errorf("a %s refused with %d %q, want %d and %q", a.method, code, msg, codeTooManySessions, want)
				}
			}
			if open := settledSessions(e.server, c.clients-c.refused); open != c.clients-c.refused {
				uninitialized := 0
				for ss := range e.server.Sessions() {
					if ss.InitializeParams() == nil {
						uninitialized++
					}
				}
				t.Errorf("%d sessions open (%d of them not initialized), want %d; the answers to requests without a session: %+v",
					open, uninitialized, c.clients-c.refused, rt.answers)
			}
		})
	}
}

// settledSessions returns the number of sessions of server once it is
// want, or after a second if it stays another.
//
// go-sdk closes a session (one whose initialize failed, or the ephemeral
// one of a request without a session that is no initialize) after its
// handler has written the answer: a client may hold its answer, and the
// test count the sessions, before that session is gone from
// [mcp.Server.Sessions]. A session that stays a second is one too many.
func settledSessions(server *mcp.Server, want int) int {
	deadline := time.Now().Add(time.Second)
	for {
		n := sessionsOf(server)
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sessionsOf counts the sessions server holds.
func sessionsOf(server *mcp.Server) int {
	n := 0
	for range server.Sessions() {
		n++
	}
	return n
}

// TestSessionReservations sends, with a limit of one session a token,
// requests without a session id that open none (they must not be counted
// nor refused, and leave no session behind), requests that may open one
// (counted: refused once the token's one session is open), and requests
// whose opening fails: an initialize that go-sdk refuses, and a handler
// that panics. After those the token may still open its one session: the
// reservation was released.
func TestSessionReservations(t *testing.T) {
	e := newEnv(t)
	lim := defaultHTTPLimits
	lim.sessionsPerTree = 1
	// panicNext makes the next request panic beneath the limiter, as a
	// bug in go-sdk or a middleware would.
	var panicNext atomic.Bool
	inner := e.done.sessionHandler(e.server, lim.sessionIdle)
	h := newSessionLimiter(e.server, lim).wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if panicNext.CompareAndSwap(true, false) {
			panic("a bug beneath the session limiter")
		}
		inner.ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(recoverHTTP(e.logger, e.done.bearer()(h)))
	t.Cleanup(srv.Close)
	base := srv.URL
	alice := e.mint("alice", store.Human, mcpeffect.Full)

	const (
		ping     = `{"jsonrpc":"2.0","id":7,"method":"ping"}`
		discover = `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}`
		list     = `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
		notice   = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		badInit  = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":5}}`
	)
	noneOpen := []struct{ name, body string }{
		{"ping", ping},
		{"server/discover", discover},
		{"tools/list", list},
		{"a notification", notice},
		{"a batch without initialize", "[" + ping + "," + list + "]"},
	}
	// Before alice's session: the failures release their reservation.
	failures := []struct {
		name  string
		body  string
		panic bool
	}{
		{"an initialize go-sdk refuses", badInit, false},
		{"not JSON", `{"jsonrpc":`, false},
		{"a panic beneath the limiter", initialize, true},
	}
	for _, c := range failures {
		t.Run("before/"+c.name, func(t *testing.T) {
			panicNext.Store(c.panic)
			resp, body := mcpRequest(t, http.MethodPost, base, alice, "", c.body)
			if resp.StatusCode == http.StatusTooManyRequests || strings.Contains(body, `"result"`) {
				t.Errorf("status %d (%s), want a failure other than the limit", resp.StatusCode, body)
			}
		})
	}
	for _, c := range noneOpen {
		t.Run("before/"+c.name, func(t *testing.T) {
			if resp, body := mcpRequest(t, http.MethodPost, base, alice, "", c.body); resp.StatusCode == http.StatusTooManyRequests {
				t.Errorf("refused by the limit: %s", body)
			}
		})
	}
	if n := sessionsOf(e.server); n != 0 {
		t.Fatalf("%d sessions left open by requests that open none", n)
	}
	if status, _, body := openSession(t, base, alice); status != http.StatusOK {
		t.Fatalf("alice's one session, after the failures: %d %s", status, body)
	}

	for _, c := range noneOpen {
		t.Run("at the limit/"+c.name, func(t *testing.T) {
			if resp, body := mcpRequest(t, http.MethodPost, base, alice, "", c.body); resp.StatusCode == http.StatusTooManyRequests {
				t.Errorf("refused by the limit: %s", body)
			}
		})
	}
	for _, c := range []struct{ name, body string }{
		{"initialize", initialize},
		{"initialize in a batch", "[" + ping + "," + initialize + "]"},
		{"initialize past what is peeked", strings.Repeat(" ", maxPeek) + initialize},
		{"not JSON-RPC", `{"jsonrpc":"2.0","id":{},"method":"ping"}`},
	} {
		t.Run("at the limit/"+c.name, func(t *testing.T) {
			if resp, body := mcpRequest(t, http.MethodPost, base, alice, "", c.body); resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("status %d (%s), want 429", resp.StatusCode, body)
			}
		})
	}
	if n := sessionsOf(e.server); n != 1 {
		t.Errorf("%d sessions open, want alice's one", n)
	}
}
