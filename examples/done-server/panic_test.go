package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logBuffer collects a logger's output; it is safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// loggedServer is a Done server over the store of e whose log is kept,
// reachable in memory (as over stdio) and over HTTP.
type loggedServer struct {
	e        *env
	server   *mcp.Server
	registry *mcpeffect.Registry
	logs     *logBuffer
	http     *httptest.Server
}

func newLoggedServer(e *env) *loggedServer {
	logs := new(logBuffer)
	logger := slog.New(slog.NewTextHandler(logs, nil))
	srv := httptest.NewUnstartedServer(nil)
	e.t.Cleanup(srv.Close)
	base := "http://" + srv.Listener.Addr().String()
	d := newDone(e.store, logger, config{baseURL: base})
	server, registry := d.newServer()
	srv.Config.Handler = d.httpHandler(server, registry)
	srv.Start()
	return &loggedServer{e: e, server: server, registry: registry, logs: logs, http: srv}
}

// connect connects a client to l over transport ("memory" or "http")
// with the token secret.
func (l *loggedServer) connect(transport, secret string) *mcp.ClientSession {
	e := l.e
	e.t.Helper()
	if transport == "http" {
		return e.clientConnect(&mcp.StreamableClientTransport{
			Endpoint:             l.http.URL + mcpPath,
			HTTPClient:           &http.Client{Transport: bearerTransport{secret: secret}},
			MaxRetries:           -1,
			DisableStandaloneSSE: true,
		})
	}
	k, err := e.store.Authenticate(e.t.Context(), secret)
	if err != nil {
		e.t.Fatal(err)
	}
	ct, stt := mcp.NewInMemoryTransports()
	ctx := context.WithValue(mcpeffect.WithConnectionScope(withStdioCredential(e.t.Context(), stdioCredential{secret: secret}), k.Scope), logTokenKey{}, k)
	ss, err := l.server.Connect(ctx, stt, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { ss.Close() })
	return e.clientConnect(ct)
}

// TestPanicIsContained adds a tool that panics on purpose: the call that
// panics is answered with an internal error that shows nothing of the
// panic, the log has the panic and its stack, and the server goes on
// serving that connection and every other, in memory and over HTTP.
func TestPanicIsContained(t *testing.T) {
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			e := newEnv(t)
			l := newLoggedServer(e)
			const secretWords = "the panic's own words, /srv/secret/key"
			mcpeffect.AddTool(l.server, l.registry, tool[noArgs, noArgs](e.done.schemas, "explode", "Explode", "Panics."), mcpeffect.Read,
				func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, noArgs, error) {
					panic(secretWords)
				})
			alice := l.connect(transport, e.mint("alice", store.Human, mcpeffect.Full))
			bob := l.connect(transport, e.mint("bob", store.Agent, mcpeffect.ReadOnly))

			for i, cs := range []*mcp.ClientSession{alice, bob, alice} {
				_, err := cs.CallTool(t.Context(), callParams("explode", nil))
				if err == nil {
					t.Fatalf("call %d: a panicking tool succeeded", i)
				}
				msg := err.Error()
				for _, leak := range []string{"panic's own words", "/srv/secret", "goroutine", "panic", ".go:"} {
					if strings.Contains(msg, leak) {
						t.Errorf("call %d: the answer shows %q: %s", i, leak, msg)
					}
				}
				if !strings.Contains(msg, "internal error") || !strings.Contains(msg, "incident ") {
					t.Errorf("call %d: the answer %q does not say it is an internal error, with its incident", i, msg)
				}
				incident := msg[strings.LastIndex(msg, "incident ")+len("incident "):]
				if log := l.logs.String(); !strings.Contains(log, "incident="+incident) {
					t.Errorf("call %d: the log has no incident %q", i, incident)
				}
			}
			log := l.logs.String()
			for _, want := range []string{`msg="panic in a handler"`, "panic's own words", "tool=explode", "goroutine ", "panic_test.go"} {
				if !strings.Contains(log, want) {
					t.Errorf("the log lacks %q:\n%s", want, log)
				}
			}

			// The connections that saw the panics, and a new one, go on.
			carol := l.connect(transport, e.mint("carol", store.Human, mcpeffect.NonDestructive))
			for name, cs := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob, "carol": carol} {
				if me := must[whoamiResult](t, cs, "whoami", nil); me.Name != name {
					t.Errorf("whoami of %s after the panics: %+v", name, me)
				}
			}
			must[store.Task](t, alice, "create_task", args{"title": "still here"})
		})
	}
}

// TestRefusalsAreLogged calls a tool the token's scope does not allow, in
// memory and over HTTP (where the challenge refuses it before the MCP
// server): the log says which tool, which scopes, and whose token.
func TestRefusalsAreLogged(t *testing.T) {
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			e := newEnv(t)
			l := newLoggedServer(e)
			cs := l.connect(transport, e.mint("rita", store.Human, mcpeffect.ReadOnly))
			k := must[whoamiResult](t, cs, "whoami", nil)
			if _, err := cs.CallTool(t.Context(), callParams("delete_task", args{"task_id": "x"})); err == nil {
				t.Fatal("a read-only token deleted a task")
			}
			var line string
			for l := range strings.Lines(l.logs.String()) {
				if strings.Contains(l, `msg="call refused"`) {
					line = l
				}
			}
			for _, want := range []string{"denied.tool=delete_task", "denied.granted=read-only", "denied.required=full", "token_id=" + k.TokenID, "token_name=rita", "kind=human"} {
				if !strings.Contains(line, want) {
					t.Errorf("the log of the refusal %q lacks %q", line, want)
				}
			}
		})
	}
}

// TestRecoverHTTP panics in an HTTP handler, before and after the answer
// has begun: the first is answered 500 without the panic's words, the
// second aborted; both are logged, and the server serves the next request.
func TestRecoverHTTP(t *testing.T) {
	logs := new(logBuffer)
	h := recoverHTTP(slog.New(slog.NewTextHandler(logs, nil)), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/before":
			panic("the panic's own words")
		case "/after":
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("partial"))
			http.NewResponseController(w).Flush()
			panic("the panic's own words")
		}
		w.Write([]byte("fine"))
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	srv.Config.ErrorLog = slog.NewLogLogger(slog.NewTextHandler(io.Discard, nil), slog.LevelError)

	resp, err := http.Get(srv.URL + "/before")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || strings.Contains(string(body), "own words") || !strings.Contains(string(body), "incident") {
		t.Errorf("a panic before the answer: %d %q", resp.StatusCode, body)
	}
	if resp, err := http.Get(srv.URL + "/after"); err == nil {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Errorf("a panic after the answer began: %q read whole, want the answer cut", body)
		}
	}
	resp, err = http.Get(srv.URL + "/next")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "fine" {
		t.Errorf("the request after the panics: %q", body)
	}
	if n := strings.Count(logs.String(), `msg="panic in an HTTP handler"`); n != 2 || !strings.Contains(logs.String(), "own words") {
		t.Errorf("%d panics logged, want 2 with their words:\n%s", n, logs)
	}
}
