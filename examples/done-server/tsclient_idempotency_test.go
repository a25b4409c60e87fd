package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/host"
)

// TestTypeScriptClientIdempotencyKey runs the TypeScript SDK's client
// (the root module's testdata/tsclient), as hosts built on it do, against
// two stateless replicas of one store behind a balancer without
// affinity: it sends params.idempotencyKey where SEP-3182 puts it, and a
// call sent three times with one key, each time to the next replica, runs
// once and is answered three times with the same task; the key with
// other arguments is refused, with the draft's error.
func TestTypeScriptClientIdempotencyKey(t *testing.T) {
	node, dir := typeScriptClient(t)
	e := newEnv(t)
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	replica := func() http.Handler {
		d := newDone(e.store, e.logger, config{stateless: true})
		server, registry := d.newServer()
		return d.httpHandler(server, registry)
	}
	rr := newRoundRobin(replica(), replica())
	srv := httptest.NewServer(rr)
	defer srv.Close()

	key := host.NewIdempotencyKey()
	create := map[string]any{"op": "call", "name": "create_task", "arguments": args{"title": "from TypeScript, once"}, "idempotencyKey": key}
	config, _ := json.Marshal(map[string]any{
		"url": srv.URL + mcpPath, "token": secret,
		"ops": []map[string]any{create, create, create,
			{"op": "call", "name": "create_task", "arguments": args{"title": "from TypeScript, twice"}, "idempotencyKey": key}},
	})
	out, err := exec.Command(node, filepath.Join(dir, "client.mjs"), string(config)).Output()
	if err != nil {
		t.Fatalf("node client: %v", err)
	}
	var reports []struct {
		Op, Outcome, Message, Text string
		Code                       any
		Data                       map[string]any
	}
	if err := json.Unmarshal(out, &reports); err != nil || len(reports) != 4 {
		t.Fatalf("node client printed %s: %v", out, err)
	}
	first := reports[0]
	if first.Outcome != "result" || !strings.Contains(first.Text, "from TypeScript, once") {
		t.Fatalf("the first call: %+v", first)
	}
	for i, r := range reports[1:3] {
		if r.Outcome != "result" || r.Text != first.Text {
			t.Errorf("call %d with the key: %+v, want the first call's answer %q", i+2, r, first.Text)
		}
	}
	if r := reports[3]; r.Outcome != "error" || r.Code != float64(mcpeffect.CodeIdempotency) || r.Data["type"] != mcpeffect.IdempotencyKeyConflict || r.Data["idempotencyKey"] != key {
		t.Errorf("the key with other arguments: %+v, want the draft's conflict", r)
	}
	if n := e.tasksTitled("from TypeScript, once"); n != 1 {
		t.Errorf("%d tasks made by one key, want 1", n)
	}
	if n := e.tasksTitled("from TypeScript, twice"); n != 0 {
		t.Errorf("the conflicting call made %d tasks", n)
	}
	if rr.served[0].Load() == 0 || rr.served[1].Load() == 0 {
		t.Errorf("requests per replica: %d and %d, want both", rr.served[0].Load(), rr.served[1].Load())
	}
}
