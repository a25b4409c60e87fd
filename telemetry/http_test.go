package telemetry_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDKOverHTTP: over Streamable HTTP, behind bearer tokens and the
// step-up challenge, a span has the session's id and the transport; a
// refusal the challenge answers with 403, before the request reaches
// the MCP server, has no span and no duration, and is counted all the
// same.
func TestGoSDKOverHTTP(t *testing.T) {
	o := observe(t)
	opts := mcpeffect.MiddlewareOptions{OnDecision: o.t.OnDecision}
	s, r, ran := goServer(t, o, opts)
	enf := r.Enforcer(&opts)
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	h = enf.Challenge(nil)(h)
	hs := httptest.NewServer(auth.RequireBearerToken(verifyToken, nil)(h))
	t.Cleanup(hs.Close)
	cs := connectHTTP(t, hs.URL, "read-token", nil, "")
	o.take("")

	if _, err := call(cs, "get_task"); err != nil {
		t.Fatal(err)
	}
	spans := o.spansOf("tools/call")
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	if got := attr(spans[0], "mcp.session.id"); got == "" || got != cs.ID() {
		t.Errorf("mcp.session.id %q, want the session's %q", got, cs.ID())
	}
	if got := attr(spans[0], "network.transport"); got != "tcp" {
		t.Errorf("network.transport %q, want tcp", got)
	}
	o.take("")

	_, err := call(cs, "delete_task")
	if err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("delete_task by a read-only token: %v, want the challenge's 403", err)
	}
	if spans := o.spansOf("tools/call"); len(spans) != 0 || ran.count("delete_task") != 0 {
		t.Errorf("%d spans of the refused call, ran %d times; want none", len(spans), ran.count("delete_task"))
	}
	wantCounts(t, o, "mcpeffect.decisions", map[string]int64{
		"gen_ai.tool.name=get_task,mcp.method.name=tools/call,mcpeffect.decision=allow,mcpeffect.scope=read-only":   1,
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.decision=deny,mcpeffect.scope=read-only": 1,
	})
	wantDurations(t, o, "tools/call", map[string]uint64{
		"gen_ai.operation.name=execute_tool,gen_ai.tool.name=get_task,mcp.method.name=tools/call": 1,
	})
}

// TestConcurrentCalls: calls of many sessions at once each get their own
// span, with their own decision, and every one is counted; under -race,
// the telemetry is shared safely.
func TestConcurrentCalls(t *testing.T) {
	o := observe(t)
	s, _, _ := goServer(t, o, mcpeffect.MiddlewareOptions{})
	const sessions, calls = 8, 25
	var wg sync.WaitGroup
	for i := range sessions {
		scope := mcpeffect.ReadOnly
		if i%2 == 1 {
			scope = mcpeffect.Full
		}
		cs := connectGo(t, s, scope, nil, "")
		wg.Go(func() {
			for range calls {
				call(cs, "delete_task")
			}
		})
	}
	wg.Wait()
	allowed, refused := 0, 0
	for _, line := range o.take("tools/call") {
		switch line {
		case "tools/call delete_task gen_ai.tool.name=delete_task decision=allow scope=full effect=write|destructive|idempotent":
			allowed++
		case "tools/call delete_task gen_ai.tool.name=delete_task decision=deny scope=read-only effect=write|destructive|idempotent" +
			" scope.required=full error.type=-32050 rpc.response.status_code=-32050 status=error":
			refused++
		default:
			t.Errorf("span %q", line)
		}
	}
	if half := sessions / 2 * calls; allowed != half || refused != half {
		t.Errorf("%d spans allowed and %d refused, want %d of each", allowed, refused, half)
	}
	wantCounts(t, o, "mcpeffect.decisions", map[string]int64{
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.decision=allow,mcpeffect.scope=full":     sessions / 2 * calls,
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.decision=deny,mcpeffect.scope=read-only": sessions / 2 * calls,
	})
}
