package mcpeffect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRefusalTeaches calls a read over in-memory transports, as a stdio
// server sees it: the refusal of a caller that nothing gave a scope says
// how to give one, and only then.
func TestRefusalTeaches(t *testing.T) {
	token := func(s mcpeffect.Scope) *mcpeffect.MiddlewareOptions {
		return &mcpeffect.MiddlewareOptions{Scope: func(context.Context, mcp.Request) mcpeffect.Scope { return s }}
	}
	advice := []string{"no token", "WithConnectionScope", `bearer token with the scope "tools:read"`}
	for _, tt := range []struct {
		name     string
		opts     *mcpeffect.MiddlewareOptions
		ctx      context.Context
		unscoped bool
	}{
		{"no token, no connection scope", nil, context.Background(), true},
		{"connection given the zero scope", nil, mcpeffect.WithConnectionScope(context.Background(), 0), false},
		{"a token without a scope", token(0), context.Background(), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _, c := newTestServer(t, tt.opts)
			_, err := connect(t, tt.ctx, s).CallTool(context.Background(), &mcp.CallToolParams{Name: "get_task", Arguments: taskArgs{ID: "1"}})
			d, ok := mcpeffect.AsDeniedError(err)
			if !ok || d.Granted != 0 || d.Unscoped != tt.unscoped || c.total() != 0 {
				t.Fatalf("err %v (denial %+v), handlers ran %d times; want a refusal, unscoped %t", err, d, c.total(), tt.unscoped)
			}
			for _, part := range advice {
				if got := strings.Contains(err.Error(), part); got != tt.unscoped {
					t.Errorf("message %q mentions %q: %t, want %t", err, part, got, tt.unscoped)
				}
			}
			// The advice is true on every SDK: it names the function of
			// none (the mcp-go adapter sends the same message).
			for _, sdkOnly := range []string{"Server.Run", "Server.Connect", "ServeStdio", "mcpgo."} {
				if strings.Contains(err.Error(), sdkOnly) {
					t.Errorf("message %q names %s, which one SDK alone has", err, sdkOnly)
				}
			}
			// The client rebuilds the same message from the error's data
			// (go-sdk's client puts the method before it).
			if !strings.HasSuffix(err.Error(), ": "+d.Error()) {
				t.Errorf("DeniedError.Error() = %q on the client, the server sent %q", d.Error(), err.Error())
			}
		})
	}
}

func TestDeniedErrorLogValue(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    *mcpeffect.DeniedError
		want string
	}{
		{
			"classified",
			&mcpeffect.DeniedError{Tool: "delete_task", Classified: true, Required: mcpeffect.Full, RequiredScopeName: "tools:destructive", Granted: mcpeffect.ReadOnly},
			`{"msg":"call refused","denied":{"tool":"delete_task","classified":true,"required":"full","requiredScopeName":"tools:destructive","granted":"read-only"}}`,
		},
		{
			"not classified",
			&mcpeffect.DeniedError{Tool: "sneaky", Granted: mcpeffect.Full},
			`{"msg":"call refused","denied":{"tool":"sneaky","classified":false,"granted":"full"}}`,
		},
		{
			"unscoped",
			&mcpeffect.DeniedError{Tool: "get_task", Classified: true, Required: mcpeffect.ReadOnly, RequiredScopeName: "tools:read", Unscoped: true},
			`{"msg":"call refused","denied":{"tool":"get_task","classified":true,"required":"read-only","requiredScopeName":"tools:read","granted":"none","unscoped":true}}`,
		},
		{"nil", nil, `{"msg":"call refused","denied":null}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			noTime := func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
					return slog.Attr{}
				}
				return a
			}
			slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{ReplaceAttr: noTime})).Info("call refused", "denied", tt.d)
			if got := strings.TrimSpace(b.String()); got != tt.want {
				t.Errorf("logged\n %s\nwant\n %s", got, tt.want)
			}
		})
	}
	// The same fields in the error's data, for the client.
	data, err := json.Marshal(&mcpeffect.DeniedError{Tool: "t", Classified: true, Required: mcpeffect.NonDestructive, RequiredScopeName: "tools:write", Granted: mcpeffect.ReadOnly})
	if want := `{"tool":"t","classified":true,"required":"non-destructive","requiredScopeName":"tools:write","granted":"read-only"}`; err != nil || string(data) != want {
		t.Errorf("JSON %s, %v; want %s", data, err, want)
	}
}
