package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectProtocol connects a go-sdk client to the Done server at base
// over Streamable HTTP, asking for protocol, with the bearer token
// secret, and fails the test unless that is the version it then speaks:
// a client that asks for 2026-07-28 falls back to an older version by
// itself when the server refuses it, which would hide the refusal.
func connectProtocol(t *testing.T, base, secret, protocol string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, opts).Connect(t.Context(),
		&mcp.StreamableClientTransport{
			Endpoint:   base + mcpPath,
			HTTPClient: &http.Client{Transport: bearerTransport{secret: secret}},
			MaxRetries: -1,
		},
		&mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting with %s: %v", protocol, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != protocol {
		t.Fatalf("asked for protocol %s, and the client speaks %s", protocol, got)
	}
	return cs
}

// TestProtocolVersionsOverHTTP: Done serves the 2026-07-28 protocol, which
// has no sessions, and older clients, which have them; served with
// sessions (one process, the default) and without any (replicas of a
// shared store). On each, a token's scope is enforced as ever.
func TestProtocolVersionsOverHTTP(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		e := newEnv(t)
		full := e.mint("alice", store.Human, mcpeffect.Full)
		reader := e.mint("reader", store.Human, mcpeffect.ReadOnly)
		d := newDone(e.store, e.logger, config{stateless: stateless})
		server, registry := d.newServer()
		srv := httptest.NewServer(d.httpHandler(server, registry))
		t.Cleanup(srv.Close)
		mode := map[bool]string{false: "sessions", true: "stateless"}[stateless]
		for _, protocol := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
			t.Run(mode+"/"+protocol, func(t *testing.T) {
				cs := connectProtocol(t, srv.URL, full, protocol, nil)
				task := must[store.Task](t, cs, "create_task", args{"title": "ship " + protocol})
				if got := must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); got.Title != "ship "+protocol {
					t.Errorf("get_task: title %q", got.Title)
				}
				tools, err := cs.ListTools(t.Context(), nil)
				if err != nil || len(tools.Tools) == 0 {
					t.Fatalf("tools/list: %d tools, err %v", len(tools.Tools), err)
				}

				ro := connectProtocol(t, srv.URL, reader, protocol, nil)
				must[store.TaskDetail](t, ro, "get_task", args{"task_id": task.ID})
				if _, err := call[store.TrashItem](t, ro, "delete_task", args{"task_id": task.ID}); err == nil {
					t.Fatal("a read-only token deleted a task")
				}
				if got := must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); got.Status != store.StatusOpen {
					t.Errorf("after the refused deletion, the task is %s", got.Status)
				}
			})
		}
	}
}

// roundRobin sends each request to the next of replicas, as a load
// balancer without affinity does.
type roundRobin struct {
	replicas []http.Handler
	next     atomic.Uint64
	served   []atomic.Int64
}

func newRoundRobin(replicas ...http.Handler) *roundRobin {
	return &roundRobin{replicas: replicas, served: make([]atomic.Int64, len(replicas))}
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := (rr.next.Add(1) - 1) % uint64(len(rr.replicas))
	rr.served[i].Add(1)
	rr.replicas[i].ServeHTTP(w, r)
}

// TestConfirmAcrossReplicas: replicas of one store, stateless behind a
// balancer that sends each request to the next, ask a person to confirm
// a destructive call. On 2026-07-28 the question comes back as an input
// request, and the call that carries the answer reaches another replica,
// which verifies the request state with the key they share; with keys
// of their own, it is refused and nothing is deleted. An older client
// cannot be asked on stateless replicas (the server cannot send it a
// request): its destructive calls are refused, saying so, and the rest
// runs.
func TestConfirmAcrossReplicas(t *testing.T) {
	e := newEnv(t)
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	shared := []byte(strings.Repeat("k", 32))
	replica := func(key []byte) http.Handler {
		d := newDone(e.store, e.logger, config{confirm: confirmModes["destructive"], stateless: true, confirmKey: key})
		server, registry := d.newServer()
		return d.httpHandler(server, registry)
	}

	t.Run("shared key", func(t *testing.T) {
		rr := newRoundRobin(replica(shared), replica(shared))
		srv := httptest.NewServer(rr)
		defer srv.Close()
		p := &askedPerson{answers: []string{"decline", "accept"}}
		cs := connectProtocol(t, srv.URL, secret, "2026-07-28", &mcp.ClientOptions{ElicitationHandler: p.answer})
		task := must[store.Task](t, cs, "create_task", args{"title": "ship v2"})
		_, err := call[store.TrashItem](t, cs, "delete_task", args{"task_id": task.ID})
		if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "decline" {
			t.Fatalf("declined: err = %v, want it refused as declined", err)
		}
		must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID})
		must[store.TrashItem](t, cs, "delete_task", args{"task_id": task.ID})
		if _, err := call[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); err == nil {
			t.Error("accepted on another replica, and the task is still there")
		}
		if q := p.questions(); len(q) != 2 {
			t.Errorf("questions %q, want two", q)
		}
		for i := range rr.served {
			if rr.served[i].Load() == 0 {
				t.Errorf("replica %d served nothing", i)
			}
		}
	})

	t.Run("keys of their own", func(t *testing.T) {
		a, b := []byte(strings.Repeat("x", 32)), []byte(strings.Repeat("y", 32))
		srv := httptest.NewServer(newRoundRobin(replica(a), replica(b)))
		defer srv.Close()
		p := &askedPerson{answers: []string{"accept", "accept", "accept"}}
		cs := connectProtocol(t, srv.URL, secret, "2026-07-28", &mcp.ClientOptions{ElicitationHandler: p.answer})
		task := must[store.Task](t, cs, "create_task", args{"title": "keep me"})
		// create_task went to one replica; the question comes from the
		// other, and the answer reaches the first, which did not sign it.
		_, err := call[store.TrashItem](t, cs, "delete_task", args{"task_id": task.ID})
		if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "invalid" {
			t.Fatalf("err = %v, want the answer refused as invalid", err)
		}
		if got := must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); got.Status != store.StatusOpen {
			t.Errorf("the task is %s, want it untouched", got.Status)
		}
	})

	t.Run("older client", func(t *testing.T) {
		srv := httptest.NewServer(newRoundRobin(replica(shared), replica(shared)))
		defer srv.Close()
		p := &askedPerson{answers: []string{"accept"}}
		cs := connectProtocol(t, srv.URL, secret, "2025-11-25", &mcp.ClientOptions{ElicitationHandler: p.answer})
		task := must[store.Task](t, cs, "create_task", args{"title": "stays"})
		_, err := call[store.TrashItem](t, cs, "delete_task", args{"task_id": task.ID})
		n, ok := mcpeffect.AsNotConfirmedError(err)
		if !ok || n.Answer != "unsupported" {
			t.Fatalf("err = %v, want it refused: the client cannot be asked", err)
		}
		if got := must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); got.Status != store.StatusOpen {
			t.Errorf("the task is %s, want it untouched", got.Status)
		}
		must[map[string]any](t, cs, "comment_on_task", args{"task_id": task.ID, "body": "still works"})
		if q := p.questions(); len(q) != 0 {
			t.Errorf("questions %q, want none: nothing can be sent to the client", q)
		}
	})
}

// TestTypeScriptClientOnReplicas runs the TypeScript SDK's client, as
// hosts built on it do, against stateless replicas behind a balancer
// without affinity: it speaks a protocol before 2026-07-28, and every
// request reaches the other replica. Its calls run; the one that needs a
// person's confirmation is refused, since a stateless server cannot ask
// that client, with the code and message that say so; nothing is lost.
func TestTypeScriptClientOnReplicas(t *testing.T) {
	node, dir := typeScriptClient(t)
	e := newEnv(t)
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	replica := func() http.Handler {
		d := newDone(e.store, e.logger, config{confirm: confirmModes["destructive"], stateless: true, confirmKey: []byte(strings.Repeat("k", 32))})
		server, registry := d.newServer()
		return d.httpHandler(server, registry)
	}
	rr := newRoundRobin(replica(), replica())
	srv := httptest.NewServer(rr)
	defer srv.Close()
	task := must[store.Task](t, e.connect(secret), "create_task", args{"title": "ship v2"})

	config, _ := json.Marshal(map[string]any{
		"url": srv.URL + mcpPath, "token": secret, "elicit": "accept",
		"ops": []map[string]any{
			{"op": "call", "name": "get_task", "arguments": args{"task_id": task.ID}},
			{"op": "call", "name": "comment_on_task", "arguments": args{"task_id": task.ID, "body": "from TypeScript"}},
			{"op": "call", "name": "delete_task", "arguments": args{"task_id": task.ID}},
		},
	})
	out, err := exec.Command(node, filepath.Join(dir, "client.mjs"), string(config)).Output()
	if err != nil {
		t.Fatalf("node client: %v", err)
	}
	var reports []struct {
		Op, Outcome, Message, Text string
		Code                       any
		Asked                      []string
	}
	if err := json.Unmarshal(out, &reports); err != nil || len(reports) != 3 {
		t.Fatalf("node client printed %s: %v", out, err)
	}
	if r := reports[0]; r.Outcome != "result" || !strings.Contains(r.Text, "ship v2") {
		t.Errorf("get_task: %+v", r)
	}
	if r := reports[1]; r.Outcome != "result" {
		t.Errorf("comment_on_task: %+v", r)
	}
	if r := reports[2]; r.Outcome != "error" || r.Code != float64(mcpeffect.CodeNotConfirmed) || len(r.Asked) != 0 {
		t.Errorf("delete_task: %+v, want an error of code %d, asked nothing", r, mcpeffect.CodeNotConfirmed)
	}
	if got := must[store.TaskDetail](t, e.connect(secret), "get_task", args{"task_id": task.ID}); got.Status != store.StatusOpen {
		t.Errorf("the task is %s, want it open", got.Status)
	}
	if rr.served[0].Load() == 0 || rr.served[1].Load() == 0 {
		t.Errorf("requests per replica: %d and %d, want both", rr.served[0].Load(), rr.served[1].Load())
	}
}

// typeScriptClient returns node and the folder of the TypeScript SDK's
// client that the tests run (the root module's testdata/tsclient), or
// skips the test where node or the client's packages are missing; under
// MCPEFFECT_REQUIRE_NODE, as in CI, which installs them, it fails.
func typeScriptClient(t *testing.T) (node, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs node")
	}
	skip := t.Skip
	if os.Getenv("MCPEFFECT_REQUIRE_NODE") != "" {
		skip = t.Fatal
	}
	dir = filepath.Join("..", "..", "testdata", "tsclient")
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed: this test needs it")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		skip("run `npm ci` in testdata/tsclient first")
	}
	return node, dir
}

// TestOneEnforcerPerServer: the middleware and the HTTP challenge of a
// server are one Enforcer, made once from Done's one configuration, and
// another server's registry gets its own.
func TestOneEnforcerPerServer(t *testing.T) {
	e := newEnv(t)
	if a, b := e.done.enforcer(e.registry), e.done.enforcer(e.registry); a != b {
		t.Error("two Enforcers for one registry")
	}
	_, other := e.done.newServer()
	if e.done.enforcer(other) == e.done.enforcer(e.registry) {
		t.Error("two registries share an Enforcer")
	}
}
