package mcpeffect_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 8, 20, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type createArgs struct {
	Title    string   `json:"title" jsonschema:"the task's title"`
	Priority *float64 `json:"priority,omitempty" jsonschema:"its priority"`
	Tags     []string `json:"tags,omitempty" jsonschema:"its tags"`
}

type created struct {
	ID string `json:"id"`
}

type manageArgs struct {
	Action string `json:"action" jsonschema:"create or get"`
	Title  string `json:"title,omitempty" jsonschema:"the task's title"`
}

// idemServer is a server of writes and reads that count their runs,
// with the idempotency of opts.
type idemServer struct {
	s     *mcp.Server
	r     *mcpeffect.Registry
	e     *mcpeffect.Enforcer
	runs  *calls
	slow  chan struct{} // slow_task waits on it
	begun chan struct{} // slow_task says it has begun
	clock *clock
}

func newIdemServer(t testing.TB, opts *mcpeffect.MiddlewareOptions) *idemServer {
	t.Helper()
	is := &idemServer{r: mcpeffect.NewRegistry(), runs: &calls{n: map[string]int{}}, slow: make(chan struct{}), begun: make(chan struct{}, 16), clock: newClock()}
	if opts == nil {
		opts = &mcpeffect.MiddlewareOptions{}
	}
	if opts.Idempotency == nil {
		opts.Idempotency = &mcpeffect.IdempotencyOptions{}
	}
	if opts.Idempotency.Now == nil {
		opts.Idempotency.Now = is.clock.Now
	}
	is.e = is.r.Enforcer(opts)
	is.s = mcp.NewServer(&mcp.Implementation{Name: "idem", Version: "v1"}, nil)
	var ids atomic.Int64
	mcpeffect.AddTool(is.s, is.r, &mcp.Tool{Name: "create_task"}, mcpeffect.Write,
		func(_ context.Context, _ *mcp.CallToolRequest, in createArgs) (*mcp.CallToolResult, created, error) {
			is.runs.add("create_task")
			return nil, created{ID: fmt.Sprintf("task-%d", ids.Add(1))}, nil
		})
	mcpeffect.AddTool(is.s, is.r, &mcp.Tool{Name: "fail_task"}, mcpeffect.Write,
		func(_ context.Context, _ *mcp.CallToolRequest, in createArgs) (*mcp.CallToolResult, any, error) {
			is.runs.add("fail_task")
			return nil, nil, fmt.Errorf("failed %s, run %d", in.Title, is.runs.count("fail_task"))
		})
	mcpeffect.AddTool(is.s, is.r, &mcp.Tool{Name: "reject_task"}, mcpeffect.Destructive,
		func(context.Context, *mcp.CallToolRequest, createArgs) (*mcp.CallToolResult, any, error) {
			is.runs.add("reject_task")
			return nil, nil, &jsonrpc.Error{Code: -32000, Message: fmt.Sprintf("rejected, run %d", is.runs.count("reject_task")), Data: json.RawMessage(`{"why":"test"}`)}
		})
	mcpeffect.AddTool(is.s, is.r, &mcp.Tool{Name: "slow_task"}, mcpeffect.Write,
		func(ctx context.Context, _ *mcp.CallToolRequest, _ createArgs) (*mcp.CallToolResult, created, error) {
			is.runs.add("slow_task")
			is.begun <- struct{}{}
			select {
			case <-is.slow:
			case <-ctx.Done():
			}
			return nil, created{ID: "slow"}, nil
		})
	mcpeffect.AddTool(is.s, is.r, &mcp.Tool{Name: "panic_task"}, mcpeffect.Write,
		func(context.Context, *mcp.CallToolRequest, createArgs) (*mcp.CallToolResult, any, error) {
			is.runs.add("panic_task")
			panic("the handler broke")
		})
	mcpeffect.AddTool(is.s, is.r, &mcp.Tool{Name: "get_task"}, mcpeffect.Read,
		func(context.Context, *mcp.CallToolRequest, createArgs) (*mcp.CallToolResult, created, error) {
			is.runs.add("get_task")
			return nil, created{ID: "t"}, nil
		})
	mcpeffect.AddTool(is.s, is.r, &mcp.Tool{Name: "add_label"}, mcpeffect.Idempotent,
		func(context.Context, *mcp.CallToolRequest, createArgs) (*mcp.CallToolResult, created, error) {
			is.runs.add("add_label")
			return nil, created{ID: "t"}, nil
		})
	mcpeffect.AddTool(is.s, is.r, &mcp.Tool{Name: "manage_task"},
		mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{"create": mcpeffect.Write, "get": mcpeffect.Read}),
		func(_ context.Context, _ *mcp.CallToolRequest, in manageArgs) (*mcp.CallToolResult, created, error) {
			is.runs.add("manage_task " + in.Action)
			return nil, created{ID: fmt.Sprintf("task-%d", ids.Add(1))}, nil
		})
	// A server that recovers its handlers' panics, as Done does, outside
	// the middleware.
	is.s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				if p := recover(); p != nil {
					res, err = nil, fmt.Errorf("internal error: %v", p)
				}
			}()
			return next(ctx, method, req)
		}
	}, is.e.Middleware())
	return is
}

// connect opens a go-sdk client session to is over in-memory transports,
// the server's wrapped by the carrier, with scope on the server's side.
func (is *idemServer) connect(t testing.TB, scope mcpeffect.Scope) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := is.s.Connect(mcpeffect.WithConnectionScope(context.Background(), scope), is.e.IdempotencyTransport(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "idem-client", Version: "v1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callKey calls tool with args and key, in _meta, as a go-sdk client
// can.
func callKey(cs *mcp.ClientSession, tool string, args any, key string) (*mcp.CallToolResult, error) {
	return cs.CallTool(context.Background(), host.WithIdempotencyKey(&mcp.CallToolParams{Name: tool, Arguments: args}, key))
}

func resultText(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestIdempotencyRunsOnce repeats calls with a key: a repeat gets what the
// first answered and the handler runs once; another call under the same
// key is refused as a conflict; a new key runs again.
func TestIdempotencyRunsOnce(t *testing.T) {
	is := newIdemServer(t, nil)
	cs := is.connect(t, mcpeffect.Full)
	first, err := callKey(cs, "create_task", map[string]any{"title": "ship"}, "k1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := callKey(cs, "create_task", map[string]any{"title": "ship"}, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if resultText(t, first) != resultText(t, again) || !strings.Contains(resultText(t, first), "task-1") {
		t.Errorf("the repeat answered %s, the first %s", resultText(t, again), resultText(t, first))
	}
	if n := is.runs.count("create_task"); n != 1 {
		t.Fatalf("create_task ran %d times, want 1", n)
	}
	for _, tc := range []struct {
		name, tool string
		args       any
	}{
		{"other arguments", "create_task", map[string]any{"title": "ship v2"}},
		{"another tool", "fail_task", map[string]any{"title": "ship"}},
	} {
		_, err := callKey(cs, tc.tool, tc.args, "k1")
		ie, ok := mcpeffect.AsIdempotencyError(err)
		if !ok || ie.Type != mcpeffect.IdempotencyKeyConflict || ie.IdempotencyKey != "k1" {
			t.Errorf("%s under the same key: %v, want a conflict", tc.name, err)
			continue
		}
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcpeffect.CodeIdempotency || !strings.Contains(string(je.Data), `"type":"idempotency_key_conflict","idempotencyKey":"k1"`) {
			t.Errorf("%s: the error %v does not carry the draft's data", tc.name, err)
		}
	}
	if n := is.runs.count("create_task") + is.runs.count("fail_task"); n != 1 {
		t.Errorf("the conflicts ran %d handlers", n-1)
	}
	if _, err := callKey(cs, "create_task", map[string]any{"title": "ship"}, "k2"); err != nil {
		t.Fatal(err)
	}
	if n := is.runs.count("create_task"); n != 2 {
		t.Errorf("create_task ran %d times after a new key, want 2", n)
	}
	// Without a key, as before.
	for range 2 {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_task", Arguments: map[string]any{"title": "ship"}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := is.runs.count("create_task"); n != 4 {
		t.Errorf("create_task ran %d times, want 4", n)
	}
}

// TestIdempotencyErrorsKept repeats calls that failed: the repeat gets the
// same failure, a tool error or a JSON-RPC error, without running again.
func TestIdempotencyErrorsKept(t *testing.T) {
	is := newIdemServer(t, nil)
	cs := is.connect(t, mcpeffect.Full)
	args := map[string]any{"title": "x"}
	first, err := callKey(cs, "fail_task", args, "f")
	if err != nil || !first.IsError {
		t.Fatalf("fail_task: %v, %+v", err, first)
	}
	again, err := callKey(cs, "fail_task", args, "f")
	if err != nil || resultText(t, first) != resultText(t, again) || !strings.Contains(resultText(t, again), "failed x, run 1") {
		t.Errorf("the repeat of a tool error: %v, %s; the first %s", err, resultText(t, again), resultText(t, first))
	}
	_, err1 := callKey(cs, "reject_task", args, "r")
	_, err2 := callKey(cs, "reject_task", args, "r")
	var je1, je2 *jsonrpc.Error
	if !errors.As(err1, &je1) || !errors.As(err2, &je2) || je1.Code != -32000 || je1.Code != je2.Code || je1.Message != je2.Message || string(je1.Data) != string(je2.Data) {
		t.Errorf("the repeat of a JSON-RPC error: %v, then %v", err1, err2)
	}
	if n, m := is.runs.count("fail_task"), is.runs.count("reject_task"); n != 1 || m != 1 {
		t.Errorf("the failing handlers ran %d and %d times, want once each", n, m)
	}
}

// rawClient speaks JSON-RPC over a client transport, to send what a
// go-sdk client cannot: the draft's params.idempotencyKey.
type rawClient struct {
	t    testing.TB
	conn mcp.Connection
	id   int64
}

func rawConnect(t testing.TB, ct mcp.Transport) *rawClient {
	t.Helper()
	conn, err := ct.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawClient{t: t, conn: conn}
}

// call sends method with params (JSON) and returns the response.
func (c *rawClient) call(method, params string) *jsonrpc.Response {
	c.t.Helper()
	c.id++
	id, _ := jsonrpc.MakeID(float64(c.id))
	if err := c.conn.Write(context.Background(), &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(params)}); err != nil {
		c.t.Fatal(err)
	}
	for {
		msg, err := c.conn.Read(context.Background())
		if err != nil {
			c.t.Fatal(err)
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == id {
			return resp
		}
	}
}

// initialize begins the session, and returns the server's capabilities.
func (c *rawClient) initialize() map[string]json.RawMessage {
	c.t.Helper()
	resp := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"v1"}}`)
	if resp.Error != nil {
		c.t.Fatal(resp.Error)
	}
	if err := c.conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
		c.t.Fatal(err)
	}
	var r struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		c.t.Fatal(err)
	}
	return r.Capabilities
}

// TestIdempotencyDraftField sends the key where the draft puts it,
// params.idempotencyKey, over in-memory transports and over the stdio
// transport's code (mcp.IOTransport, on pipes): through the carrier, the
// server declares the capability and the call runs once; without it,
// go-sdk drops the field, the server declares nothing, and a repeat runs
// again, as the draft says of a server without the capability.
func TestIdempotencyDraftField(t *testing.T) {
	pipes := func() (mcp.Transport, mcp.Transport) {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		return &mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.IOTransport{Reader: sr, Writer: sw}
	}
	memory := func() (mcp.Transport, mcp.Transport) {
		ct, st := mcp.NewInMemoryTransports()
		return ct, st
	}
	for _, tr := range []struct {
		name  string
		pair  func() (client, server mcp.Transport)
		carry bool
	}{
		{"in memory", memory, true},
		{"stdio transport", pipes, true},
		{"in memory, no carrier", memory, false},
	} {
		t.Run(tr.name, func(t *testing.T) {
			is := newIdemServer(t, nil)
			ct, st := tr.pair()
			if tr.carry {
				st = is.e.IdempotencyTransport(st)
			}
			ss, err := is.s.Connect(mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ss.Close() })
			c := rawConnect(t, ct)
			caps := c.initialize()
			var tools map[string]json.RawMessage
			json.Unmarshal(caps["tools"], &tools)
			if got := string(tools[mcpeffect.IdempotencyCapability]); (got == "{}") != tr.carry {
				t.Errorf("capabilities.tools = %s; carrier %t", caps["tools"], tr.carry)
			}
			params := `{"name":"create_task","arguments":{"title":"ship","priority":1},"idempotencyKey":"b3b6c1e4-6b8b-4f1a-9c1e-2a6e6b1d9f2a"}`
			// The same call written otherwise: members in another order,
			// 1.0 for 1, an escape for a letter.
			same := `{"idempotencyKey":"b3b6c1e4-6b8b-4f1a-9c1e-2a6e6b1d9f2a", "arguments":{"priority":1.0,"title":"s\u0068ip"}, "name":"create_task"}`
			first, second := c.call("tools/call", params), c.call("tools/call", same)
			if first.Error != nil || second.Error != nil {
				t.Fatalf("calls: %v, %v", first.Error, second.Error)
			}
			want := 1
			if !tr.carry {
				want = 2
			}
			if n := is.runs.count("create_task"); n != want {
				t.Fatalf("create_task ran %d times, want %d", n, want)
			}
			if tr.carry && string(first.Result) != string(second.Result) {
				t.Errorf("the repeat answered %s, the first %s", second.Result, first.Result)
			}
			if !tr.carry {
				return
			}
			conflict := c.call("tools/call", `{"name":"create_task","arguments":{"title":"ship","priority":2},"idempotencyKey":"b3b6c1e4-6b8b-4f1a-9c1e-2a6e6b1d9f2a"}`)
			if conflict.Error == nil {
				t.Fatal("other arguments under the same key were answered")
			}
			var we *jsonrpc.Error
			if !errors.As(conflict.Error, &we) || !strings.Contains(string(we.Data), `"type":"idempotency_key_conflict"`) {
				t.Errorf("conflict: %v", conflict.Error)
			}
		})
	}
}

// TestIdempotencyInProgress repeats a call while the first still runs:
// the repeat is refused at once, then, once the first has answered, gets
// its answer; many repeats at once run the handler once (run with -race).
func TestIdempotencyInProgress(t *testing.T) {
	is := newIdemServer(t, nil)
	cs := is.connect(t, mcpeffect.Full)
	args := map[string]any{"title": "slow"}
	done := make(chan error, 1)
	go func() {
		_, err := callKey(cs, "slow_task", args, "s")
		done <- err
	}()
	<-is.begun
	_, err := callKey(cs, "slow_task", args, "s")
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyKeyInProgress {
		t.Errorf("a repeat while the first runs: %v, want in progress", err)
	}
	close(is.slow)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res, err := callKey(cs, "slow_task", args, "s"); err != nil || !strings.Contains(resultText(t, res), `"slow"`) {
		t.Errorf("the repeat after the first answered: %v, %v", res, err)
	}
	if n := is.runs.count("slow_task"); n != 1 {
		t.Errorf("slow_task ran %d times", n)
	}

	// Many at once, on sessions of one caller: while the first runs,
	// every other is refused; none runs the handler.
	const n = 16
	is2 := newIdemServer(t, &mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{
		Caller: func(context.Context, *mcp.CallToolRequest) string { return "one person" },
	}})
	sessions := make([]*mcp.ClientSession, 4)
	for i := range sessions {
		sessions[i] = is2.connect(t, mcpeffect.Full)
	}
	var wg sync.WaitGroup
	var answered, refused atomic.Int32
	refusals := make(chan struct{}, n)
	for i := range n {
		wg.Go(func() {
			_, err := callKey(sessions[i%len(sessions)], "slow_task", args, "together")
			if ie, ok := mcpeffect.AsIdempotencyError(err); ok && ie.Type == mcpeffect.IdempotencyKeyInProgress {
				refused.Add(1)
				refusals <- struct{}{}
			} else if err == nil {
				answered.Add(1)
			} else {
				t.Errorf("call %d: %v", i, err)
			}
		})
	}
	<-is2.begun
	for range n - 1 {
		<-refusals
	}
	close(is2.slow)
	wg.Wait()
	if got := is2.runs.count("slow_task"); got != 1 || answered.Load() != 1 || refused.Load() != n-1 {
		t.Errorf("%d calls at once under one key: the handler ran %d times, %d answered, %d refused", n, got, answered.Load(), refused.Load())
	}
}

// TestIdempotencyKeptOnlyForWrites: reads and idempotent writes run
// again under the same key, as their classification promises to change
// nothing more; for a tool whose effect depends on its arguments, the
// call's own effect decides.
func TestIdempotencyKeptOnlyForWrites(t *testing.T) {
	is := newIdemServer(t, nil)
	cs := is.connect(t, mcpeffect.Full)
	for _, c := range []struct {
		tool string
		args any
		runs string
		want int
	}{
		{"get_task", map[string]any{"title": "a"}, "get_task", 2},
		{"add_label", map[string]any{"title": "a"}, "add_label", 2},
		{"manage_task", map[string]any{"action": "get"}, "manage_task get", 2},
		{"manage_task", map[string]any{"action": "create", "title": "a"}, "manage_task create", 1},
	} {
		key := "key-" + c.runs
		for range 2 {
			if _, err := callKey(cs, c.tool, c.args, key); err != nil {
				t.Fatalf("%s: %v", c.runs, err)
			}
		}
		if n := is.runs.count(c.runs); n != c.want {
			t.Errorf("%s ran %d times under one key, want %d", c.runs, n, c.want)
		}
	}
	// The rule's write with the same key and another action conflicts.
	_, err := callKey(cs, "manage_task", map[string]any{"action": "create", "title": "b"}, "key-manage_task create")
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyKeyConflict {
		t.Errorf("the rule's write with other arguments: %v", err)
	}
}

// TestIdempotencyHostileKeys sends keys that are not keys, or that try
// to hide what they are.
func TestIdempotencyHostileKeys(t *testing.T) {
	is := newIdemServer(t, nil)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := is.s.Connect(mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), is.e.IdempotencyTransport(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := rawConnect(t, ct)
	c.initialize()
	long := strings.Repeat("k", mcpeffect.MaxIdempotencyKeyBytes+1)
	huge := strings.Repeat("k", 1<<20)
	for _, tc := range []struct {
		name, key string // key as JSON
		want      string // in the error's message
	}{
		{"empty", `""`, "it is empty"},
		{"too long", `"` + long + `"`, "it is 256 bytes long; at most 255 are accepted"},
		{"a megabyte", `"` + huge + `"`, "at most 255 are accepted"},
		{"a number", `7`, "it is a JSON number, not a string"},
		{"an object", `{"key": "k"}`, "it is a JSON object, not a string"},
		{"null", `null`, "it is a JSON null, not a string"},
	} {
		resp := c.call("tools/call", `{"name":"create_task","arguments":{"title":"x"},"idempotencyKey":`+tc.key+`}`)
		var we *jsonrpc.Error
		if !errors.As(resp.Error, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, tc.want) {
			t.Errorf("%s: %v, want invalid params with %q", tc.name, resp.Error, tc.want)
			continue
		}
		if len(we.Message) > 1000 || len(we.Data) > 1000 {
			t.Errorf("%s: the refusal is %d bytes, %d of data: it echoes the key whole", tc.name, len(we.Message), len(we.Data))
		}
		ie, ok := mcpeffect.AsIdempotencyError(resp.Error)
		if !ok || ie.Type != mcpeffect.IdempotencyKeyInvalid {
			t.Errorf("%s: AsIdempotencyError = %+v, %t", tc.name, ie, ok)
		}
	}
	for _, tc := range []struct{ name, params, want string }{
		{"given twice", `{"name":"create_task","arguments":{"title":"x"},"idempotencyKey":"a","idempotencyKey":"b"}`, "given twice"},
		{"two keys", `{"name":"create_task","arguments":{"title":"x"},"idempotencyKey":"a","_meta":{"io.github.mcpeffect/idempotency-key":"b"}}`, "differ"},
	} {
		resp := c.call("tools/call", tc.params)
		if resp.Error == nil || !strings.Contains(resp.Error.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, resp.Error, tc.want)
		}
	}
	if n := is.runs.count("create_task"); n != 0 {
		t.Fatalf("create_task ran %d times with keys that are not valid", n)
	}
	// Control and format characters are a key like any other, kept
	// apart from the same key without them, and written as escapes in
	// the message.
	for i, key := range []string{"k\u202eevil", "k\x00", "k\u200b", "kevil", "k"} {
		raw, _ := json.Marshal(key)
		for range 2 {
			if resp := c.call("tools/call", `{"name":"create_task","arguments":{"title":"x"},"idempotencyKey":`+string(raw)+`}`); resp.Error != nil {
				t.Fatalf("key %q: %v", key, resp.Error)
			}
		}
		if n := is.runs.count("create_task"); n != i+1 {
			t.Fatalf("after key %q: create_task ran %d times, want %d", key, n, i+1)
		}
	}
	resp := c.call("tools/call", `{"name":"create_task","arguments":{"title":"y"},"idempotencyKey":"k\u202eevil"}`)
	if resp.Error == nil || strings.ContainsRune(resp.Error.Error(), '\u202e') || !strings.Contains(resp.Error.Error(), `\u202e`) {
		t.Errorf("the conflict of a key with U+202E: %v", resp.Error)
	}
}

// TestIdempotencyRefusedKeepsNothing: a call refused before its handler
// ran, by its scope or by a person, keeps nothing, so the key can be sent
// again once the caller may; and the decision comes before the record, so
// a caller whose scope no longer allows the call is refused, not
// answered from it.
func TestIdempotencyRefusedKeepsNothing(t *testing.T) {
	p := &person{answer: "decline"}
	is := newIdemServer(t, &mcpeffect.MiddlewareOptions{
		Confirm: &mcpeffect.ConfirmOptions{Ask: func(tool string, _ mcpeffect.Effect) bool { return tool == "fail_task" }},
		Idempotency: &mcpeffect.IdempotencyOptions{
			Caller: func(context.Context, *mcp.CallToolRequest) string { return "one person" },
		},
	})
	connectAsPerson := func(scope mcpeffect.Scope) *mcp.ClientSession {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := is.s.Connect(mcpeffect.WithConnectionScope(context.Background(), scope), is.e.IdempotencyTransport(st), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v1"}, &mcp.ClientOptions{ElicitationHandler: p.handler}).
			Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	readOnly, full := connectAsPerson(mcpeffect.ReadOnly), connectAsPerson(mcpeffect.Full)
	args := map[string]any{"title": "x"}
	if _, err := callKey(readOnly, "create_task", args, "k"); err == nil {
		t.Fatal("a read-only caller created a task")
	}
	if _, err := callKey(full, "create_task", args, "k"); err != nil {
		t.Fatalf("the same key, once allowed: %v", err)
	}
	if _, err := callKey(readOnly, "create_task", args, "k"); err == nil {
		t.Error("a read-only caller was answered from the record of a call it may not make")
	}
	if n := is.runs.count("create_task"); n != 1 {
		t.Errorf("create_task ran %d times", n)
	}
	if _, err := callKey(full, "fail_task", args, "asked"); err == nil {
		t.Fatal("a declined call ran")
	}
	p.answer = "accept"
	if res, err := callKey(full, "fail_task", args, "asked"); err != nil || !res.IsError {
		t.Fatalf("the same key, accepted: %v, %v", res, err)
	}
	if n := is.runs.count("fail_task"); n != 1 {
		t.Errorf("fail_task ran %d times", n)
	}
	// Answered from the record now, without asking again.
	asked := len(p.questions())
	if _, err := callKey(full, "fail_task", args, "asked"); err != nil {
		t.Fatal(err)
	}
	if n := len(p.questions()); n != asked {
		t.Errorf("the repeat asked the person again (%d questions, %d before)", n, asked)
	}
	if n := is.runs.count("fail_task"); n != 1 {
		t.Errorf("fail_task ran %d times", n)
	}
}

// TestIdempotencyExpiry: a key is kept for the retention, from its first
// call, and then forgotten.
func TestIdempotencyExpiry(t *testing.T) {
	is := newIdemServer(t, &mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{Retention: time.Hour}})
	cs := is.connect(t, mcpeffect.Full)
	args := map[string]any{"title": "x"}
	callKey(cs, "create_task", args, "e")
	is.clock.advance(59 * time.Minute)
	callKey(cs, "create_task", args, "e")
	if n := is.runs.count("create_task"); n != 1 {
		t.Fatalf("within the retention: %d runs", n)
	}
	is.clock.advance(time.Minute)
	callKey(cs, "create_task", args, "e")
	if n := is.runs.count("create_task"); n != 2 {
		t.Errorf("after the retention: %d runs, want 2", n)
	}
}

// TestIdempotencyPanic: a handler that panics leaves its key answered by
// an error that says so, not in progress, and is not run again.
func TestIdempotencyPanic(t *testing.T) {
	is := newIdemServer(t, nil)
	cs := is.connect(t, mcpeffect.Full)
	args := map[string]any{"title": "x"}
	if _, err := callKey(cs, "panic_task", args, "p"); err == nil || !strings.Contains(err.Error(), "the handler broke") {
		t.Fatalf("the panicking call: %v", err)
	}
	_, err := callKey(cs, "panic_task", args, "p")
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyHandlerPanicked {
		t.Errorf("the repeat of a call that panicked: %v", err)
	}
	if n := is.runs.count("panic_task"); n != 1 {
		t.Errorf("panic_task ran %d times", n)
	}
}

// failingStore fails as it is told.
type failingStore struct {
	mcpeffect.IdempotencyStore
	claim, complete error
}

func (f *failingStore) Claim(ctx context.Context, c mcpeffect.IdempotencyClaim) (mcpeffect.IdempotencyRecord, bool, error) {
	if f.claim != nil {
		return mcpeffect.IdempotencyRecord{}, false, f.claim
	}
	return f.IdempotencyStore.Claim(ctx, c)
}

func (f *failingStore) Complete(ctx context.Context, c mcpeffect.IdempotencyClaim, outcome []byte) error {
	if f.complete != nil {
		return f.complete
	}
	return f.IdempotencyStore.Complete(ctx, c, outcome)
}

// TestIdempotencyStoreFails: a store that cannot claim refuses the call
// (fail closed: the caller sent a key because running twice is worse than
// not running); one that cannot keep the answer leaves the key in
// progress, so that a repeat is refused, not run, and says so.
func TestIdempotencyStoreFails(t *testing.T) {
	store := &failingStore{IdempotencyStore: mcpeffect.NewMemoryIdempotencyStore(0, 0), claim: errors.New("database down")}
	var told []error
	var mu sync.Mutex
	is := newIdemServer(t, &mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{Store: store,
		OnStoreError: func(_ context.Context, err error) { mu.Lock(); told = append(told, err); mu.Unlock() }}})
	cs := is.connect(t, mcpeffect.Full)
	args := map[string]any{"title": "x"}
	_, err := callKey(cs, "create_task", args, "k")
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyUnavailable || !strings.Contains(err.Error(), "database down") {
		t.Errorf("a store that cannot claim: %v", err)
	}
	if n := is.runs.count("create_task"); n != 0 {
		t.Fatalf("create_task ran %d times with its key unrecorded", n)
	}
	store.claim, store.complete = nil, errors.New("disk full")
	if _, err := callKey(cs, "create_task", args, "k"); err != nil {
		t.Fatalf("the call that ran: %v", err)
	}
	_, err = callKey(cs, "create_task", args, "k")
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyKeyInProgress {
		t.Errorf("the repeat of a call whose answer was not kept: %v", err)
	}
	if n := is.runs.count("create_task"); n != 1 {
		t.Errorf("create_task ran %d times", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || !strings.Contains(told[0].Error(), "disk full") || !strings.Contains(told[0].Error(), "stays in progress") {
		t.Errorf("OnStoreError was told %v", told)
	}
}

// TestMemoryIdempotencyStoreBounds fills the in-memory store: past its
// bound of entries a new key is refused with a clear error until records
// expire, and an answer too large to keep is kept as an error saying so.
func TestMemoryIdempotencyStoreBounds(t *testing.T) {
	store := mcpeffect.NewMemoryIdempotencyStore(2, 1<<20)
	is := newIdemServer(t, &mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{Store: store, Retention: time.Minute}})
	cs := is.connect(t, mcpeffect.Full)
	args := map[string]any{"title": "x"}
	for _, k := range []string{"a", "b"} {
		if _, err := callKey(cs, "create_task", args, k); err != nil {
			t.Fatal(err)
		}
	}
	_, err := callKey(cs, "create_task", args, "c")
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyUnavailable || !strings.Contains(err.Error(), "is full") {
		t.Errorf("a key past the bound: %v", err)
	}
	if _, err := callKey(cs, "create_task", args, "a"); err != nil {
		t.Errorf("a kept key, with the store full: %v", err)
	}
	is.clock.advance(time.Minute)
	if _, err := callKey(cs, "create_task", args, "c"); err != nil {
		t.Errorf("a new key once the others expired: %v", err)
	}
	if n := store.Len(); n != 1 {
		t.Errorf("the store holds %d records, want 1", n)
	}

	// An answer larger than the store.
	small := mcpeffect.NewMemoryIdempotencyStore(0, 8<<10)
	is2 := newIdemServer(t, &mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{Store: small}})
	cs2 := is2.connect(t, mcpeffect.Full)
	big := map[string]any{"title": strings.Repeat("x", 16<<10)}
	if _, err := callKey(cs2, "fail_task", big, "big"); err != nil {
		t.Fatal(err)
	}
	_, err = callKey(cs2, "fail_task", big, "big")
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyResultNotKept {
		t.Errorf("the repeat of a call whose answer was too large: %v", err)
	}
	if n := is2.runs.count("fail_task"); n != 1 {
		t.Errorf("fail_task ran %d times", n)
	}
}

// answerRecorder passes an HTTP answer on, and keeps a copy.
type answerRecorder struct {
	http.ResponseWriter
	mu   *sync.Mutex
	into *strings.Builder
}

func (a answerRecorder) Write(p []byte) (int, error) {
	a.mu.Lock()
	a.into.Write(p)
	a.mu.Unlock()
	return a.ResponseWriter.Write(p)
}

func (a answerRecorder) Flush() { a.ResponseWriter.(http.Flusher).Flush() }

func (a answerRecorder) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// idemHTTP serves is over Streamable HTTP at /mcp behind bearer tokens,
// through the carrier, and records each POST body, and what the server
// answered them (answers).
func idemHTTP(t *testing.T, is *idemServer, opts *mcp.StreamableHTTPOptions) (ts *httptest.Server, bodies func() []string, answers func() string) {
	t.Helper()
	var mu sync.Mutex
	var posted []string
	var answered strings.Builder
	record := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method == http.MethodPost {
				b, _ := io.ReadAll(req.Body)
				mu.Lock()
				posted = append(posted, string(b))
				mu.Unlock()
				req.Body = io.NopCloser(strings.NewReader(string(b)))
				w = answerRecorder{w, &mu, &answered}
			}
			h.ServeHTTP(w, req)
		})
	}
	h := is.e.IdempotencyHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return is.s }, opts))
	users := map[string]*auth.TokenInfo{
		"alice-1": {Scopes: []string{"tools:write", "tools:destructive"}, UserID: "alice"},
		"alice-2": {Scopes: []string{"tools:write", "tools:destructive"}, UserID: "alice"},
		"bob":     {Scopes: []string{"tools:write", "tools:destructive"}, UserID: "bob"},
		"anon-1":  {Scopes: []string{"tools:write", "tools:destructive"}},
		"anon-2":  {Scopes: []string{"tools:write", "tools:destructive"}},
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		ti, ok := users[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		out := *ti
		out.Expiration = time.Now().Add(time.Hour)
		return &out, nil
	}
	ts = httptest.NewServer(record(auth.RequireBearerToken(verify, nil)(h)))
	t.Cleanup(ts.Close)
	return ts, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), posted...) },
		func() string { mu.Lock(); defer mu.Unlock(); return answered.String() }
}

// httpSession connects to ts with token, through a RoundTripper that
// sends keys in the draft's field.
func httpSession(t *testing.T, ts *httptest.Server, token, protocol string) (*mcp.ClientSession, *host.RoundTripper) {
	t.Helper()
	rt := &host.RoundTripper{Base: bearer{token, http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http", Version: "v1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: rt}}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, rt
}

// TestIdempotencyHTTP sends keys in the draft's field over Streamable
// HTTP, stateful and stateless, on the protocol of sessions and on
// 2026-07-28's: a repeat on another connection of the same caller runs
// nothing, a key is each caller's own (another user, or another token
// without a user, runs its call and cannot read the other's answer), and
// the server declares the capability.
func TestIdempotencyHTTP(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     *mcp.StreamableHTTPOptions
		protocol string
	}{
		{"stateful", nil, legacyProtocol},
		{"stateless", &mcp.StreamableHTTPOptions{Stateless: true}, modernProtocol},
		{"json responses", &mcp.StreamableHTTPOptions{JSONResponse: true}, legacyProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := newIdemServer(t, nil)
			ts, bodies, _ := idemHTTP(t, is, tc.opts)
			alice, rt := httpSession(t, ts, "alice-1", tc.protocol)
			if !rt.IdempotencyAdvertised() {
				t.Error("the server did not declare capabilities.tools.idempotency")
			}
			args := map[string]any{"title": "ship"}
			first, err := callKey(alice, "create_task", args, "k")
			if err != nil {
				t.Fatal(err)
			}
			var sent bool
			for _, b := range bodies() {
				if strings.Contains(b, `"idempotencyKey":"k"`) && !strings.Contains(b, mcpeffect.IdempotencyKeyMetaKey) {
					sent = true
				}
			}
			if !sent {
				t.Errorf("no POST carried the key in params.idempotencyKey alone: %q", bodies())
			}
			again, _ := httpSession(t, ts, "alice-2", tc.protocol)
			res, err := callKey(again, "create_task", args, "k")
			if err != nil || resultText(t, res) != resultText(t, first) {
				t.Errorf("alice's repeat with her other token: %v, %v", res, err)
			}
			if n := is.runs.count("create_task"); n != 1 {
				t.Fatalf("create_task ran %d times for alice", n)
			}
			for i, token := range []string{"bob", "anon-1", "anon-2"} {
				cs, _ := httpSession(t, ts, token, tc.protocol)
				res, err := callKey(cs, "create_task", args, "k")
				if err != nil || resultText(t, res) == resultText(t, first) {
					t.Errorf("%s with alice's key: %v, %v; want a call of its own", token, res, err)
				}
				if n := is.runs.count("create_task"); n != i+2 {
					t.Errorf("after %s: create_task ran %d times, want %d", token, n, i+2)
				}
			}
		})
	}
}

// TestIdempotencyHandlerBodyBound: the HTTP carrier answers 413 to a body
// longer than it reads, rather than pass on a key it did not see.
func TestIdempotencyHandlerBodyBound(t *testing.T) {
	is := newIdemServer(t, &mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{MaxBodyBytes: 1024}})
	ts, _, _ := idemHTTP(t, is, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_task","arguments":{"title":"` + strings.Repeat("x", 2048) + `"},"idempotencyKey":"k"}}`
	for _, chunked := range []bool{false, true} {
		var r io.Reader = strings.NewReader(body)
		if chunked {
			r = io.MultiReader(r) // no length known: sent chunked
		}
		req, _ := http.NewRequest(http.MethodPost, ts.URL, r)
		req.Header.Set("Authorization", "Bearer alice-1")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "1024") {
			t.Errorf("chunked %t: %d %s", chunked, resp.StatusCode, msg)
		}
	}
}

// TestIdempotencyTypeScriptClient has the TypeScript SDK's client (1.32.2)
// send keys where the draft puts them, over Streamable HTTP behind a
// bearer token and the carrier: it reads the capability, a repeat runs
// nothing and gets the same text, other arguments are a conflict whose
// data it receives.
func TestIdempotencyTypeScriptClient(t *testing.T) {
	node, dir := nodeClient(t)
	is := newIdemServer(t, nil)
	ts, _, answers := idemHTTP(t, is, nil)
	call := func(key string, title string) map[string]any {
		return map[string]any{"op": "call", "name": "create_task", "arguments": map[string]any{"title": title}, "idempotencyKey": key}
	}
	config := map[string]any{"url": ts.URL, "token": "anon-1", "ops": []map[string]any{
		{"op": "capabilities"}, call("ts-1", "ship"), call("ts-1", "ship"), call("ts-1", "ship v2"), call("ts-2", "ship"),
	}}
	raw, _ := json.Marshal(config)
	out, err := exec.Command(node, filepath.Join(dir, "client.mjs"), string(raw)).Output()
	if err != nil {
		t.Fatalf("node client: %v", err)
	}
	var reports []tsReport
	if err := json.Unmarshal(out, &reports); err != nil || len(reports) != 5 {
		t.Fatalf("node client printed %s (%v), want 5 reports", out, err)
	}
	var caps struct {
		Tools map[string]json.RawMessage `json:"tools"`
	}
	if !strings.Contains(answers(), `"tools":{"idempotency":{},"listChanged":true}`) {
		t.Errorf("the answers to the TypeScript client do not declare the capability: %s", answers())
	}
	if json.Unmarshal(reports[0].Data, &caps) != nil || caps.Tools == nil {
		t.Errorf("the TypeScript client read the capabilities %s", reports[0].Data)
	} else if _, ok := caps.Tools[mcpeffect.IdempotencyCapability]; !ok {
		// Its schema of capabilities.tools is a closed object.
		t.Logf("the TypeScript client drops what it does not know of capabilities.tools: it reads %s", reports[0].Data)
	}
	if reports[1].Outcome != "result" || reports[2].Outcome != "result" || reports[1].Text != reports[2].Text || !strings.Contains(reports[1].Text, "task-1") {
		t.Errorf("a call and its repeat: %+v, %+v", reports[1], reports[2])
	}
	if r := reports[3]; r.Outcome != "error" || !strings.Contains(string(r.Data), `"type":"idempotency_key_conflict"`) || !strings.Contains(string(r.Data), `"idempotencyKey":"ts-1"`) {
		t.Errorf("other arguments under the same key: %+v", r)
	}
	if r := reports[4]; r.Outcome != "result" || !strings.Contains(r.Text, "task-2") {
		t.Errorf("a new key: %+v", r)
	}
	if n := is.runs.count("create_task"); n != 2 {
		t.Errorf("create_task ran %d times, want 2", n)
	}
}
