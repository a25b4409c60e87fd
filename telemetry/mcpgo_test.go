package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	"github.com/mcpeffect/mcpeffect/telemetry/mcpgotel"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpgoServer returns an mcp-go server of the testTools and fail_task,
// traced by o through mcpgotel, enforced by mcpgo with opts and o's
// OnDecision, served over Streamable HTTP behind bearer tokens
// (tokenScopes); its URL and the count of each tool's runs.
func mcpgoServer(tb testing.TB, o *observed, opts mcpgo.Options) (string, *runs) {
	tb.Helper()
	r := mcpeffect.NewRegistry()
	opts.OnDecision = o.t.OnDecision
	so := append(mcpgotel.ServerOptions(o.t), mcpgo.ServerOptions(r, &opts)...)
	so = append(so, server.WithToolCapabilities(true), server.WithElicitation())
	s := server.NewMCPServer("tasks", "v1", so...)
	ran := &runs{n: map[string]int{}}
	for _, tool := range testTools {
		name := tool.name
		mcpgo.AddTool(s, r, mcpgomcp.NewTool(name, mcpgomcp.WithString("id")), tool.effect,
			func(context.Context, mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
				ran.add(name)
				return mcpgomcp.NewToolResultText(name + " ran"), nil
			})
	}
	mcpgo.AddTool(s, r, mcpgomcp.NewTool("fail_task", mcpgomcp.WithString("id")), mcpeffect.Read,
		func(context.Context, mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
			ran.add("fail_task")
			return mcpgomcp.NewToolResultError("no such task"), nil
		})
	h := mcpgo.Handler(r, &opts, server.NewStreamableHTTPServer(s))
	hs := httptest.NewServer(auth.RequireBearerToken(verifyToken, nil)(h))
	tb.Cleanup(hs.Close)
	return hs.URL, ran
}

// tokenScopes are the scope strings of the tests' bearer tokens.
var tokenScopes = map[string][]string{
	"read-token": {mcpeffect.DefaultReadOnlyScope},
	"full-token": {mcpeffect.DefaultFullScope},
}

func verifyToken(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	scopes, ok := tokenScopes[token]
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(req)
}

// connectHTTP connects a go-sdk client with opts to url with the bearer
// token, speaking protocol ("": go-sdk's default).
func connectHTTP(tb testing.TB, url, token string, opts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
	tb.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v1"}, opts).
		Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// TestMCPGo: the same as TestGoSDK, for a server on mcp-go traced by
// mcpgotel and enforced by mcpgo, over Streamable HTTP, where mcp-go
// tells each request's JSON-RPC id too.
func TestMCPGo(t *testing.T) {
	o := observe(t)
	p := &person{answer: "accept"}
	url, ran := mcpgoServer(t, o, mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{}}})
	reader := connectHTTP(t, url, "read-token", nil, "")
	legacy := connectHTTP(t, url, "full-token", &mcp.ClientOptions{ElicitationHandler: p.handler}, legacyProtocol)
	modern := connectHTTP(t, url, "full-token", &mcp.ClientOptions{ElicitationHandler: p.handler}, modernProtocol)
	o.take("tools/call")

	const (
		destructive = "effect=write|destructive|idempotent"
		declined    = " confirm.answer=decline error.type=-32051 rpc.response.status_code=-32051 status=error"
	)
	for _, step := range []struct {
		name   string
		cs     *mcp.ClientSession
		tool   string
		answer string
		fails  bool
		want   []string
	}{
		{"allowed", reader, "get_task", "", false, []string{
			"tools/call get_task gen_ai.tool.name=get_task decision=allow scope=read-only effect=read",
		}},
		{"refused", reader, "delete_task", "", true, []string{
			"tools/call delete_task gen_ai.tool.name=delete_task decision=deny scope=read-only " + destructive +
				" scope.required=full error.type=-32050 rpc.response.status_code=-32050 status=error",
		}},
		// mcp-go answers a tool it does not have before any check: no
		// decision.
		{"unknown", reader, "no_such_tool", "", true, []string{
			"tools/call gen_ai.tool.name=no_such_tool error.type=-32602 rpc.response.status_code=-32602 status=error",
		}},
		{"tool error", reader, "fail_task", "", false, []string{
			"tools/call fail_task gen_ai.tool.name=fail_task decision=allow scope=read-only effect=read error.type=tool_error status=error",
		}},
		// With a client of the earlier protocol, mcp-go asks inside the
		// call and runs the handler again with the answer: the decision
		// that needs confirmation is made twice, in one span.
		{"confirmed", legacy, "delete_task", "accept", false, []string{
			"tools/call delete_task gen_ai.tool.name=delete_task decision=confirm scope=full " + destructive +
				" confirm.answer=accept event=decision(confirm) event=decision(confirm) event=decision(confirm,accept)",
		}},
		{"declined", legacy, "delete_task", "decline", true, []string{
			"tools/call delete_task gen_ai.tool.name=delete_task decision=confirm scope=full " + destructive + declined +
				" event=decision(confirm) event=decision(confirm) event=decision(confirm,decline)",
		}},
		// With the later protocol, two calls.
		{"confirmed in two calls", modern, "delete_task", "accept", false, []string{
			"tools/call delete_task gen_ai.tool.name=delete_task decision=confirm scope=full " + destructive + " event=decision(confirm)",
			"tools/call delete_task gen_ai.tool.name=delete_task decision=confirm scope=full " + destructive +
				" confirm.answer=accept event=decision(confirm) event=decision(confirm,accept)",
		}},
		{"declined in two calls", modern, "delete_task", "decline", true, []string{
			"tools/call delete_task gen_ai.tool.name=delete_task decision=confirm scope=full " + destructive + " event=decision(confirm)",
			"tools/call delete_task gen_ai.tool.name=delete_task decision=confirm scope=full " + destructive + declined +
				" event=decision(confirm) event=decision(confirm,decline)",
		}},
	} {
		t.Run(step.name, func(t *testing.T) {
			p.set(step.answer)
			_, err := call(step.cs, step.tool)
			if (err != nil) != step.fails {
				t.Fatalf("call of %s: %v", step.tool, err)
			}
			spans := o.spansOf("tools/call")
			if got := o.take("tools/call"); !slices.Equal(got, step.want) {
				t.Errorf("spans\n\t%q\nwant\n\t%q", got, step.want)
			}
			for _, s := range spans {
				if id := attr(s, "jsonrpc.request.id"); id == "" {
					t.Errorf("span %q has no jsonrpc.request.id", s.Name)
				}
			}
			if step.cs == legacy {
				for _, s := range spans {
					if id := attr(s, "mcp.session.id"); id != legacy.ID() || id == "" {
						t.Errorf("span %q of session %q has mcp.session.id %q", s.Name, legacy.ID(), id)
					}
				}
			}
		})
	}
	if ran.count("delete_task") != 2 {
		t.Errorf("delete_task ran %d times, want twice (on each accept)", ran.count("delete_task"))
	}
	wantCounts(t, o, "mcpeffect.decisions", map[string]int64{
		"gen_ai.tool.name=get_task,mcp.method.name=tools/call,mcpeffect.decision=allow,mcpeffect.scope=read-only":   1,
		"gen_ai.tool.name=fail_task,mcp.method.name=tools/call,mcpeffect.decision=allow,mcpeffect.scope=read-only":  1,
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.decision=deny,mcpeffect.scope=read-only": 1,
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.decision=confirm,mcpeffect.scope=full":   8,
	})
	wantCounts(t, o, "mcpeffect.confirmations", map[string]int64{
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.confirm.answer=accept,mcpeffect.scope=full":  2,
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.confirm.answer=decline,mcpeffect.scope=full": 2,
	})
	wantDurations(t, o, "tools/call", map[string]uint64{
		"gen_ai.operation.name=execute_tool,gen_ai.tool.name=get_task,mcp.method.name=tools/call":                                                      1,
		"error.type=tool_error,gen_ai.operation.name=execute_tool,gen_ai.tool.name=fail_task,mcp.method.name=tools/call":                               1,
		"error.type=-32050,gen_ai.operation.name=execute_tool,gen_ai.tool.name=delete_task,mcp.method.name=tools/call,rpc.response.status_code=-32050": 1,
		"error.type=-32602,gen_ai.operation.name=execute_tool,mcp.method.name=tools/call,rpc.response.status_code=-32602":                              1,
		"gen_ai.operation.name=execute_tool,gen_ai.tool.name=delete_task,mcp.method.name=tools/call":                                                   4,
		"error.type=-32051,gen_ai.operation.name=execute_tool,gen_ai.tool.name=delete_task,mcp.method.name=tools/call,rpc.response.status_code=-32051": 2,
	})
}
