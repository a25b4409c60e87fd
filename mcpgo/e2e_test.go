package mcpgo_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A step is one operation of a scenario and what must come of it.
type step struct {
	op   string // call, read, prompt
	name string // the tool or prompt, or the URI
	args map[string]any
	// want is "ok", "denied" (a DeniedError) or "unconfirmed" (a
	// NotConfirmedError); detail is a part of the refusal's message.
	want, detail string
	// ran is what the handler records when it runs.
	ran string
}

// A scenario is a caller of a scope (by token over HTTP) making steps
// in order.
type scenario struct {
	name  string
	scope mcpeffect.Scope
	token string
	steps []step
}

var scenarios = []scenario{
	{name: "read-only caller", scope: mcpeffect.ReadOnly, token: "read-token", steps: []step{
		{op: "call", name: "pods", args: map[string]any{"action": "get", "name": "web"}, want: "ok", ran: "pods get"},
		{op: "call", name: "pods", args: map[string]any{"action": "delete", "name": "web"}, want: "denied", detail: `tool "pods" is refused: with action="delete", it needs the full scope`},
		{op: "call", name: "pods", args: map[string]any{"action": "GET"}, want: "denied", detail: `action="GET", which it does not declare`},
		// The argument twice, in two cases: the handler might read
		// either, so the call counts as the worst case.
		{op: "call", name: "pods", args: map[string]any{"action": "get", "Action": "delete"}, want: "denied", detail: `tool "pods" is refused`},
		{op: "read", name: "docs://readme", want: "ok", ran: "read docs://readme"},
		{op: "read", name: "notes://payroll", want: "denied", detail: `resource "notes://payroll" is refused: it needs the full scope`},
		{op: "read", name: "notes://7", want: "denied", detail: `resource "notes://7" is refused: it needs the non-destructive scope`},
		{op: "prompt", name: "summarize", want: "ok", ran: "get summarize"},
		{op: "prompt", name: "audit", want: "denied", detail: `prompt "audit" is refused: it needs the full scope`},
	}},
	{name: "caller without a scope", scope: 0, token: "no-scope", steps: []step{
		{op: "read", name: "docs://readme", want: "denied", detail: `resource "docs://readme" is refused: it needs the read-only scope`},
		{op: "prompt", name: "summarize", want: "denied", detail: `prompt "summarize" is refused: it needs the read-only scope`},
		{op: "call", name: "pods", args: map[string]any{"action": "get"}, want: "denied", detail: `it needs at least the read-only scope ("tools:read"), and the caller has no scope`},
	}},
	{name: "non-destructive caller", scope: mcpeffect.NonDestructive, token: "write-token", steps: []step{
		{op: "call", name: "pods", args: map[string]any{"action": "create", "name": "web"}, want: "ok", ran: "pods create"},
		{op: "call", name: "pods", args: map[string]any{"action": "delete", "name": "web"}, want: "denied", detail: `with action="delete", it needs the full scope`},
		{op: "read", name: "notes://7", want: "ok", ran: "read notes://7"},
		{op: "read", name: "notes://payroll", want: "denied", detail: `it needs the full scope`},
	}},
	{name: "full caller", scope: mcpeffect.Full, token: "full-token", steps: []step{
		{op: "call", name: "pods", args: map[string]any{"action": "delete", "name": "web"}, want: "ok", ran: "pods delete"},
		{op: "read", name: "notes://payroll", want: "ok", ran: "read notes://payroll"},
		{op: "prompt", name: "audit", want: "ok", ran: "get audit"},
	}},
}

// TestScenarios runs every scenario with go-sdk's client, in process and
// over HTTP, on one server each.
func TestScenarios(t *testing.T) {
	for _, transport := range []string{"in process", "HTTP"} {
		t.Run(transport, func(t *testing.T) {
			ts := newTestServer(t, nil, false)
			var url string
			if transport == "HTTP" {
				url = serveHTTP(t, ts.s, ts.r, nil).URL + "/mcp"
			}
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					var cs *sdk.ClientSession
					if url == "" {
						cs = connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), sc.scope), ts.s, nil)
					} else {
						cs = connectHTTP(t, url, sc.token, nil)
					}
					for _, st := range sc.steps {
						runStep(t, ts, cs, st)
					}
				})
			}
		})
	}
}

// runStep makes st on cs and checks what came of it.
func runStep(t *testing.T, ts *testServer, cs *sdk.ClientSession, st step) {
	t.Helper()
	ctx := context.Background()
	before := map[string]int{}
	for _, key := range []string{st.ran, "pods get", "pods create", "pods delete", "read " + st.name, "get " + st.name} {
		before[key] = ts.calls.count(key)
	}
	var err error
	switch st.op {
	case "call":
		var res *sdk.CallToolResult
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: st.name, Arguments: st.args})
		if err == nil && res.IsError {
			t.Errorf("%s %s %v: tool error %v", st.op, st.name, st.args, res.Content)
			return
		}
	case "read":
		_, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: st.name})
	case "prompt":
		_, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: st.name})
	}
	at := st.op + " " + st.name
	if st.args != nil {
		raw, _ := json.Marshal(st.args)
		at += " " + string(raw)
	}
	switch st.want {
	case "ok":
		if err != nil {
			t.Errorf("%s: %v", at, err)
		} else if ts.calls.count(st.ran) != before[st.ran]+1 {
			t.Errorf("%s: the handler did not record %q", at, st.ran)
		}
	case "denied":
		d, ok := mcpeffect.AsDeniedError(err)
		if !ok {
			t.Errorf("%s: want a refusal, got %v", at, err)
			return
		}
		if !strings.Contains(d.Error(), st.detail) {
			t.Errorf("%s: refusal %q does not say %q", at, d.Error(), st.detail)
		}
		for key, n := range before {
			if key != "" && ts.calls.count(key) != n {
				t.Errorf("%s: refused, but %q ran", at, key)
			}
		}
	case "unconfirmed":
		n, ok := mcpeffect.AsNotConfirmedError(err)
		if !ok || !strings.Contains(n.Error(), st.detail) {
			t.Errorf("%s: want a call not confirmed (%q), got %v", at, st.detail, err)
		}
	}
}
