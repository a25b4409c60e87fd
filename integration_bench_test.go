package mcpeffect_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchServer returns a server with n tools, a third of them reads, and
// the middleware when opts is not nil.
func benchServer(b *testing.B, n int, opts *mcpeffect.MiddlewareOptions) (*mcp.Server, *mcpeffect.Registry) {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "v1"}, nil)
	effects := []mcpeffect.Effect{mcpeffect.Read, mcpeffect.Write, mcpeffect.Destructive | mcpeffect.Idempotent}
	for i := range n {
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: "a tool of the benchmark server"}, effects[i%3],
			func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
			})
	}
	if opts != nil {
		s.AddReceivingMiddleware(r.Middleware(opts))
	}
	return s, r
}

// BenchmarkCallInMemory is a tools/call round trip over in-memory
// transports, without the middleware (the baseline) and with it.
func BenchmarkCallInMemory(b *testing.B) {
	ctx := context.Background()
	for _, bench := range []struct {
		name string
		opts *mcpeffect.MiddlewareOptions
	}{{"baseline=no-middleware", nil}, {"middleware", &mcpeffect.MiddlewareOptions{}}} {
		b.Run(bench.name, func(b *testing.B) {
			s, _ := benchServer(b, 84, bench.opts)
			cs := connect(b, mcpeffect.WithScope(ctx, mcpeffect.Full), s)
			params := &mcp.CallToolParams{Name: "tool_04", Arguments: map[string]any{"id": "1"}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListTools lists 84 tools, whole (the baseline) and filtered by
// HideDenied for a caller who may call them all, so that both lists hold
// the same tools and only the filtering differs.
func BenchmarkListTools(b *testing.B) {
	ctx := context.Background()
	for _, bench := range []struct {
		name string
		hide bool
	}{{"baseline=whole", false}, {"hide-denied", true}} {
		b.Run(bench.name, func(b *testing.B) {
			s, _ := benchServer(b, 84, &mcpeffect.MiddlewareOptions{HideDenied: bench.hide})
			cs := connect(b, mcpeffect.WithScope(ctx, mcpeffect.Full), s)
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.ListTools(ctx, nil)
				if err != nil || len(res.Tools) != 84 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCallHTTP is a tools/call over loopback Streamable HTTP behind a
// bearer token, without the challenge wrapper (the baseline) and with it.
func BenchmarkCallHTTP(b *testing.B) {
	ctx := context.Background()
	for _, bench := range []struct {
		name      string
		challenge bool
	}{{"baseline=no-challenge", false}, {"challenge", true}} {
		b.Run(bench.name, func(b *testing.B) {
			s, r := benchServer(b, 84, &mcpeffect.MiddlewareOptions{})
			var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
			if bench.challenge {
				h = r.Challenge(&mcpeffect.ChallengeOptions{ResourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource"})(h)
			}
			h = auth.RequireBearerToken(verifyTestToken, nil)(h)
			ts := httptest.NewServer(h)
			b.Cleanup(ts.Close) // after the session's own cleanup closes it
			hs := &httpServer{Server: ts}
			cs := hs.connect(b, "full-token")
			params := &mcp.CallToolParams{Name: "tool_04", Arguments: map[string]any{"id": "1"}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChallengeHandler measures the challenge wrapper alone on an
// allowed tools/call, without the network: the baseline is the next
// handler by itself, which reads the body as go-sdk's does.
func BenchmarkChallengeHandler(b *testing.B) {
	r := mcpeffect.NewRegistry()
	r.Add("tool_04", mcpeffect.Write)
	body := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"tool_04","arguments":{"id":"1"},"_meta":{"progressToken":3}}}`)
	next := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			b.Fatal(err)
		}
	})
	scope := func(*http.Request) (mcpeffect.Scope, []string, bool) {
		return mcpeffect.NonDestructive, []string{"tools:write"}, true
	}
	for _, bench := range []struct {
		name string
		h    http.Handler
	}{
		{"baseline=next-only", next},
		{"challenge", r.Challenge(&mcpeffect.ChallengeOptions{Scope: scope})(next)},
	} {
		b.Run(bench.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
				bench.h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
