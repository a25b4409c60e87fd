package mcpeffect_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchServer returns a server with n tools, a third of them reads,
// classified with mcpeffect.AddTool and enforced by the middleware with
// opts; with nil opts, the same tools with the same annotations added with
// go-sdk alone, the baseline without mcpeffect.
func benchServer(b testing.TB, n int, opts *mcpeffect.MiddlewareOptions) (*mcp.Server, *mcpeffect.Registry) {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "v1"}, nil)
	effects := []mcpeffect.Effect{mcpeffect.Read, mcpeffect.Write, mcpeffect.Destructive | mcpeffect.Idempotent}
	handler := func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	}
	for i := range n {
		tool := &mcp.Tool{Name: fmt.Sprintf("tool_%02d", i), Description: "a tool of the benchmark server"}
		if opts == nil {
			tool.Annotations = effects[i%3].Annotations()
			mcp.AddTool(s, tool, handler)
			continue
		}
		mcpeffect.AddTool(s, r, tool, effects[i%3], handler)
	}
	if opts != nil {
		s.AddReceivingMiddleware(r.Middleware(opts))
	}
	return s, r
}

// paired measures two ways of making the same call, alternating them
// call by call so that both see the same machine at the same moment: on a
// shared machine, runs apart from each other differ by more than the cost
// being measured. It reports the mean time of each, and how much slower
// with is than baseline, in percent: from the means (overhead-%), and from
// the medians of single calls (median-overhead-%), which a few calls
// stalled by other work on the machine do not move.
func paired(b *testing.B, baseline, with func() error) {
	b.Helper()
	for range 20 { // warm both up
		if err := baseline(); err != nil {
			b.Fatal(err)
		}
		if err := with(); err != nil {
			b.Fatal(err)
		}
	}
	calls := [2]func() error{baseline, with}
	var spent [2]time.Duration
	var each [2][]time.Duration
	n := 0
	for b.Loop() {
		order := [2]int{0, 1}
		if n%2 == 1 {
			order = [2]int{1, 0} // neither always goes first
		}
		for _, i := range order {
			start := time.Now()
			if err := calls[i](); err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			spent[i] += d
			each[i] = append(each[i], d)
		}
		n++
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2])
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(n), "baseline-ns/call")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(n), "with-ns/call")
	b.ReportMetric(100*(float64(spent[1])/float64(spent[0])-1), "overhead-%")
	b.ReportMetric(100*(median(each[1])/median(each[0])-1), "median-overhead-%")
}

// BenchmarkCallInMemory is a tools/call round trip over in-memory
// transports: without the middleware (the baseline) and with it.
func BenchmarkCallInMemory(b *testing.B) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	plain, _ := benchServer(b, 84, nil)
	guarded, _ := benchServer(b, 84, &mcpeffect.MiddlewareOptions{})
	plainSession, guardedSession := connect(b, ctx, plain), connect(b, ctx, guarded)
	params := &mcp.CallToolParams{Name: "tool_04", Arguments: map[string]any{"id": "1"}}
	paired(b,
		func() error { _, err := plainSession.CallTool(ctx, params); return err },
		func() error { _, err := guardedSession.CallTool(ctx, params); return err })
}

// BenchmarkListTools lists 84 tools, whole (the baseline) and filtered by
// HideDenied for a caller who may call them all, so that both lists hold
// the same tools and only the filtering differs.
func BenchmarkListTools(b *testing.B) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	whole, _ := benchServer(b, 84, &mcpeffect.MiddlewareOptions{})
	hidden, _ := benchServer(b, 84, &mcpeffect.MiddlewareOptions{HideDenied: true})
	wholeSession, hiddenSession := connect(b, ctx, whole), connect(b, ctx, hidden)
	list := func(cs *mcp.ClientSession) func() error {
		return func() error {
			res, err := cs.ListTools(ctx, nil)
			if err == nil && len(res.Tools) != 84 {
				err = fmt.Errorf("listed %d tools", len(res.Tools))
			}
			return err
		}
	}
	paired(b, list(wholeSession), list(hiddenSession))
}

// BenchmarkCallHTTP is a tools/call over loopback Streamable HTTP behind a
// bearer token, without the challenge wrapper (the baseline) and with it.
func BenchmarkCallHTTP(b *testing.B) {
	ctx := context.Background()
	session := func(challenge bool) *mcp.ClientSession {
		s, r := benchServer(b, 84, &mcpeffect.MiddlewareOptions{})
		var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		if challenge {
			h = r.Enforcer(nil).Challenge(&mcpeffect.ChallengeOptions{ResourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource"})(h)
		}
		h = auth.RequireBearerToken(verifyTestToken, nil)(h)
		ts := httptest.NewServer(h)
		b.Cleanup(ts.Close) // after the session's own cleanup closes it
		return (&httpServer{Server: ts}).connect(b, "full-token")
	}
	plain, challenged := session(false), session(true)
	params := &mcp.CallToolParams{Name: "tool_04", Arguments: map[string]any{"id": "1"}}
	paired(b,
		func() error { _, err := plain.CallTool(ctx, params); return err },
		func() error { _, err := challenged.CallTool(ctx, params); return err })
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
	scope := func(context.Context, mcp.Request) mcpeffect.Scope { return mcpeffect.NonDestructive }
	for _, bench := range []struct {
		name string
		h    http.Handler
	}{
		{"baseline=next-only", next},
		{"challenge", r.Enforcer(&mcpeffect.MiddlewareOptions{Scope: scope}).Challenge(nil)(next)},
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

// BenchmarkCallArgumentDependent is a tools/call of a read-only caller
// over in-memory transports: the baseline calls a tool with one effect,
// a read; the variant calls a tool whose effect depends on its action
// (get, list, create, delete), with action "get", which the middleware
// leaves to the wrapper to compute from the decoded input. Both take the
// same arguments into the same input type, on the same server.
func BenchmarkCallArgumentDependent(b *testing.B) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly)
	handler := func(context.Context, *mcp.CallToolRequest, resourceArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	}
	s, r := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "v1"}, nil), mcpeffect.NewRegistry()
	for i := range 84 {
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: fmt.Sprintf("tool_%02d", i)}, mcpeffect.Read, handler)
	}
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "get_resource"}, mcpeffect.Read, handler)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "resources"}, mcpeffect.EffectByArgument("action", resourceEffects), handler)
	s.AddReceivingMiddleware(r.Middleware(nil))
	cs := connect(b, ctx, s)
	args := map[string]any{"action": "get", "name": "web-1"}
	call := func(name string) func() error {
		params := &mcp.CallToolParams{Name: name, Arguments: args}
		return func() error {
			res, err := cs.CallTool(ctx, params)
			if err == nil && res.IsError {
				err = fmt.Errorf("%s: %v", name, res.Content)
			}
			return err
		}
	}
	paired(b, call("get_resource"), call("resources"))
}

// BenchmarkCallConfirmed is a destructive tools/call over in-memory
// transports, whose client's person accepts at once: the baseline on a
// server without Confirm, the variant with it. Confirmation costs a round
// trip by design: on 2026-07-28 the call is made twice, the second with
// the answer; before, the server sends an elicitation request.
func BenchmarkCallConfirmed(b *testing.B) {
	for _, protocol := range []string{modernProtocol, legacyProtocol} {
		b.Run(protocol, func(b *testing.B) {
			ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
			accept := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}}
			plain, _ := benchServer(b, 84, &mcpeffect.MiddlewareOptions{})
			confirmed, _ := benchServer(b, 84, &mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{}})
			plainSession := connectAs(b, ctx, plain, accept, protocol)
			confirmedSession := connectAs(b, ctx, confirmed, accept, protocol)
			params := &mcp.CallToolParams{Name: "tool_02", Arguments: map[string]any{"id": "1"}} // destructive
			paired(b,
				func() error { _, err := plainSession.CallTool(ctx, params); return err },
				func() error { _, err := confirmedSession.CallTool(ctx, params); return err })
		})
	}
}

// BenchmarkReadResource is a resources/read over in-memory transports:
// the baseline a resource added with go-sdk alone, on a server without
// mcpeffect; the variant the same resource added with AddResource, behind
// the middleware, which checks the caller's scope for it.
func BenchmarkReadResource(b *testing.B) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly)
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "note"}}}, nil
	}
	plain := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "v1"}, nil)
	plain.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{id}"}, read)
	scoped := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "v1"}, nil)
	r := mcpeffect.NewRegistry()
	mcpeffect.AddResourceTemplate(scoped, r, &mcp.ResourceTemplate{URITemplate: "notes://{id}"}, mcpeffect.ReadOnly, read)
	scoped.AddReceivingMiddleware(r.Middleware(nil))
	plainSession, scopedSession := connect(b, ctx, plain), connect(b, ctx, scoped)
	params := &mcp.ReadResourceParams{URI: "notes://42"}
	paired(b,
		func() error { _, err := plainSession.ReadResource(ctx, params); return err },
		func() error { _, err := scopedSession.ReadResource(ctx, params); return err })
}

// BenchmarkCallIdempotency measures what idempotency keys cost, over
// in-memory transports, each against the middleware without Idempotency
// (the "with" of BenchmarkCallInMemory) as the baseline: no-key is a
// call without a key on a server with Idempotency and the carrier, the
// cost every call pays; repeat, a call whose key's answer is kept and
// sent again; new-key, a call under a new key, claimed and kept.
func BenchmarkCallIdempotency(b *testing.B) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	plain, _ := benchServer(b, 84, &mcpeffect.MiddlewareOptions{})
	plainSession := connect(b, ctx, plain)
	idem := &mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{Store: mcpeffect.NewMemoryIdempotencyStore(1<<30, 1<<40)}}
	keyed, r := benchServer(b, 84, idem)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := keyed.Connect(ctx, r.Enforcer(idem).IdempotencyTransport(st), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	keyedSession, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { keyedSession.Close() })
	// tool_04 is a write (see benchServer), which a key runs once.
	params := &mcp.CallToolParams{Name: "tool_04", Arguments: map[string]any{"id": "1"}}
	baseline := func() error { _, err := plainSession.CallTool(ctx, params); return err }
	withKey := func(key string) *mcp.CallToolParams {
		p := *params
		p.Meta = mcp.Meta{mcpeffect.IdempotencyKeyMetaKey: key}
		return &p
	}
	b.Run("no-key", func(b *testing.B) {
		paired(b, baseline, func() error { _, err := keyedSession.CallTool(ctx, params); return err })
	})
	b.Run("repeat", func(b *testing.B) {
		repeat := withKey("the same key")
		paired(b, baseline, func() error { _, err := keyedSession.CallTool(ctx, repeat); return err })
	})
	b.Run("new-key", func(b *testing.B) {
		n := 0
		paired(b, baseline, func() error {
			n++
			_, err := keyedSession.CallTool(ctx, withKey(fmt.Sprintf("key-%d", n)))
			return err
		})
	})
}
