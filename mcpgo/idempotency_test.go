package mcpgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// idemServer returns an mcp-go server with writes that count their runs
// (create_task, fail_task, slow_task), a read and an idempotent write,
// delete_task undone by restore_task, with the idempotency of opts.
func idemServer(t testing.TB, opts *mcpgo.Options, extra ...server.ServerOption) (*server.MCPServer, *mcpeffect.Registry, *calls, chan struct{}) {
	t.Helper()
	r := mcpeffect.NewRegistry()
	if opts == nil {
		opts = &mcpgo.Options{}
	}
	if opts.Idempotency == nil {
		opts.Idempotency = &mcpeffect.IdempotencyOptions{}
	}
	c := &calls{}
	slow := make(chan struct{})
	if extra == nil {
		extra = []server.ServerOption{server.WithRecovery()}
	}
	s := server.NewMCPServer("idem", "v1", append(append(mcpgo.ServerOptions(r, opts), server.WithToolCapabilities(true)), extra...)...)
	var ids atomic.Int64
	mcpgo.AddTool(s, r, mcp.NewTool("create_task", mcp.WithString("title")), mcpeffect.Write,
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c.ran("create_task")
			return mcp.NewToolResultStructuredOnly(map[string]any{"id": fmt.Sprintf("task-%d", ids.Add(1))}), nil
		})
	mcpgo.AddTool(s, r, mcp.NewTool("fail_task", mcp.WithString("title")), mcpeffect.Write,
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c.ran("fail_task")
			return nil, fmt.Errorf("failed, run %d", c.count("fail_task"))
		})
	mcpgo.AddTool(s, r, mcp.NewTool("slow_task", mcp.WithString("title")), mcpeffect.Write,
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c.ran("slow_task")
			select {
			case <-slow:
			case <-ctx.Done():
			}
			return mcp.NewToolResultText("slow"), nil
		})
	mcpgo.AddTool(s, r, mcp.NewTool("panic_task"), mcpeffect.Write,
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c.ran("panic_task")
			panic("the handler broke")
		})
	mcpgo.AddTool(s, r, mcp.NewTool("get_task", mcp.WithString("title")), mcpeffect.Read, c.tool("get_task"))
	mcpgo.AddTool(s, r, mcp.NewTool("delete_task", mcp.WithString("task_id", mcp.Required())), mcpeffect.Destructive|mcpeffect.Idempotent, c.tool("delete_task"))
	mcpgo.AddTool(s, r, mcp.NewTool("restore_task", mcp.WithString("item_id", mcp.Required())), mcpeffect.Destructive|mcpeffect.Idempotent, c.tool("restore_task"))
	if err := r.DeclareRecovery("delete_task", mcpeffect.Compensation("restore_task", map[string]string{"item_id": "$request.body#/task_id"})); err != nil {
		t.Fatal(err)
	}
	return s, r, c, slow
}

// dialStdioWith connects a go-sdk client to s, served by mcpgo.Listen
// over pipes, through wrap's client transport.
func dialStdioWith(t testing.TB, ctx context.Context, s *server.MCPServer, wrap func(sdk.Transport) sdk.Transport) *sdk.ClientSession {
	t.Helper()
	select {
	case stdioSlot <- struct{}{}:
	case <-time.After(30 * time.Second):
		t.Fatal("another in-process connection is still open")
	}
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer func() { <-stdioSlot }()
		defer close(done)
		mcpgo.Listen(ctx, server.NewStdioServer(s), serverIn, serverOut)
		serverOut.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "v1"}, nil).
		Connect(context.Background(), wrap(&sdk.IOTransport{Reader: clientIn, Writer: clientOut}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		clientOut.Close()
		cancel()
		<-done
	})
	return cs
}

func callKey(cs *sdk.ClientSession, tool string, args map[string]any, key string) (*sdk.CallToolResult, error) {
	return cs.CallTool(context.Background(), host.WithIdempotencyKey(&sdk.CallToolParams{Name: tool, Arguments: args}, key))
}

func asJSON(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// checkRunsOnce makes the calls of SEP-3182 on cs, a session whose
// calls the server's tools count in c.
func checkRunsOnce(t *testing.T, cs *sdk.ClientSession, c *calls, prefix string) {
	t.Helper()
	args := map[string]any{"title": "ship"}
	first, err := callKey(cs, "create_task", args, prefix+"k")
	if err != nil {
		t.Fatal(err)
	}
	again, err := callKey(cs, "create_task", map[string]any{"title": "ship"}, prefix+"k")
	if err != nil || asJSON(t, first) != asJSON(t, again) {
		t.Errorf("the repeat: %v, %s; the first %s", err, asJSON(t, again), asJSON(t, first))
	}
	_, err = callKey(cs, "create_task", map[string]any{"title": "ship v2"}, prefix+"k")
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyKeyConflict {
		t.Errorf("other arguments under the key: %v", err)
	}
	f1, err1 := callKey(cs, "fail_task", args, prefix+"f")
	f2, err2 := callKey(cs, "fail_task", args, prefix+"f")
	if fmt.Sprint(err1) != fmt.Sprint(err2) || asJSON(t, f1) != asJSON(t, f2) || !strings.Contains(fmt.Sprint(err1)+asJSON(t, f1), "run 1") {
		t.Errorf("a failure and its repeat: %v %s, then %v %s", err1, asJSON(t, f1), err2, asJSON(t, f2))
	}
	for range 2 {
		if _, err := callKey(cs, "get_task", args, prefix+"g"); err != nil {
			t.Fatal(err)
		}
	}
	_, err = callKey(cs, "create_task", args, "")
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "it is empty") {
		t.Errorf("an empty key: %v", err)
	}
	// mcp-go's WithRecovery, inside the middleware, answers the panic
	// with an error: that is what the call answered, and what the
	// repeat gets.
	_, p1 := callKey(cs, "panic_task", nil, prefix+"p")
	_, p2 := callKey(cs, "panic_task", nil, prefix+"p")
	if p1 == nil || !strings.Contains(p1.Error(), "panic recovered") || fmt.Sprint(p1) != fmt.Sprint(p2) {
		t.Errorf("a call that panicked, and its repeat: %v, then %v", p1, p2)
	}
	for tool, want := range map[string]int{"create_task": 1, "fail_task": 1, "get_task": 2, "panic_task": 1} {
		if n := c.count(tool); n != want {
			t.Errorf("%s ran %d times, want %d", tool, n, want)
		}
	}
}

// TestIdempotencyStdio runs calls with keys through mcpgo.Listen, the key
// in the draft's field (host.Transport) and in _meta.
func TestIdempotencyStdio(t *testing.T) {
	for _, draft := range []bool{true, false} {
		t.Run(fmt.Sprintf("draft field %t", draft), func(t *testing.T) {
			s, _, c, _ := idemServer(t, nil)
			var tr *host.Transport
			cs := dialStdioWith(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s, func(t sdk.Transport) sdk.Transport {
				if !draft {
					return t
				}
				tr = host.NewTransport(t)
				return tr
			})
			if tr != nil && !tr.IdempotencyAdvertised() {
				t.Error("the server did not declare capabilities.tools.idempotency")
			}
			checkRunsOnce(t, cs, c, "")
		})
	}
}

// TestIdempotencyHTTP runs the same calls through mcpgo.Handler, with
// tokens: a key is its token's own.
func TestIdempotencyHTTP(t *testing.T) {
	s, r, c, _ := idemServer(t, nil)
	var mu sync.Mutex
	var bodies []string
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	h := mcpgo.Handler(r, &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{}}}, server.NewStreamableHTTPServer(s))
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			b, _ := io.ReadAll(req.Body)
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
			req.Body = io.NopCloser(strings.NewReader(string(b)))
		}
		auth.RequireBearerToken(verifyToken, nil)(h).ServeHTTP(w, req)
	}))
	session := func(token string) (*sdk.ClientSession, *host.RoundTripper) {
		rt := &host.RoundTripper{Base: bearer{token, http.DefaultTransport}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "v1"}, nil).Connect(context.Background(),
			&sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: rt}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs, rt
	}
	cs, rt := session("full-token")
	if !rt.IdempotencyAdvertised() {
		t.Error("the server did not declare capabilities.tools.idempotency")
	}
	checkRunsOnce(t, cs, c, "")
	mu.Lock()
	var sent bool
	for _, b := range bodies {
		sent = sent || strings.Contains(b, `"idempotencyKey":"k"`)
	}
	mu.Unlock()
	if !sent {
		t.Error("no POST carried params.idempotencyKey")
	}
	// Another token with the same key runs its own call.
	other, _ := session("write-token")
	res, err := callKey(other, "create_task", map[string]any{"title": "ship"}, "k")
	if err != nil || strings.Contains(asJSON(t, res), "task-1") {
		t.Errorf("another token with the same key: %v, %s", err, asJSON(t, res))
	}
	if n := c.count("create_task"); n != 2 {
		t.Errorf("create_task ran %d times, want 2", n)
	}
}

// TestIdempotencyInProgress: a repeat while the first call runs is
// refused at once.
func TestIdempotencyInProgress(t *testing.T) {
	s, r, c, slow := idemServer(t, nil)
	hs := serveHTTP(t, s, r, &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{}}})
	cs := connectHTTP(t, hs.URL+"/mcp", "full-token", nil)
	done := make(chan error, 1)
	go func() {
		_, err := callKey(cs, "slow_task", nil, "s")
		done <- err
	}()
	for c.count("slow_task") == 0 {
		time.Sleep(time.Millisecond)
	}
	_, err := callKey(cs, "slow_task", nil, "s")
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyKeyInProgress {
		t.Errorf("a repeat while the first runs: %v", err)
	}
	close(slow)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := c.count("slow_task"); n != 1 {
		t.Errorf("slow_task ran %d times", n)
	}
}

// TestIdempotencyUncarried: served without Listen or Handler, mcp-go
// would drop the draft's field: the call is refused, and the capability
// is not declared.
func TestIdempotencyUncarried(t *testing.T) {
	s, _, c, _ := idemServer(t, nil)
	hs := httptest.NewServer(auth.RequireBearerToken(verifyToken, nil)(server.NewStreamableHTTPServer(s)))
	t.Cleanup(hs.Close)
	rt := &host.RoundTripper{Base: bearer{"full-token", http.DefaultTransport}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "v1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: rt}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if rt.IdempotencyAdvertised() {
		t.Error("a server without the carrier declared the capability")
	}
	_, err = callKey(cs, "create_task", map[string]any{"title": "x"}, "k")
	if err == nil || !strings.Contains(err.Error(), "cannot reach the check") {
		t.Errorf("the draft's field on a server without the carrier: %v", err)
	}
	if n := c.count("create_task"); n != 0 {
		t.Errorf("create_task ran %d times", n)
	}
}

// TestRecoveryListed lists delete_task, which publishes its undo in its
// _meta; a declared undo that is not classified fails the listing.
func TestRecoveryListed(t *testing.T) {
	s, r, _, _ := idemServer(t, nil)
	hs := serveHTTP(t, s, r, nil)
	cs := connectHTTP(t, hs.URL+"/mcp", "read-token", nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		rec, err := host.RecoveryOf(tool)
		switch {
		case err != nil:
			t.Errorf("%s: %v", tool.Name, err)
		case tool.Name == "delete_task" && (rec == nil || rec.CompensatingOperation.OperationID != "restore_task" || rec.CompensatingOperation.Parameters["item_id"] != "$request.body#/task_id"):
			t.Errorf("delete_task's recovery: %+v", rec)
		case tool.Name != "delete_task" && rec != nil:
			t.Errorf("%s publishes a recovery: %+v", tool.Name, rec)
		}
	}
	// The server's own tool is unchanged.
	if st := s.GetTool("delete_task"); st.Tool.Meta != nil {
		t.Errorf("the server's delete_task has a _meta now: %+v", st.Tool.Meta)
	}

	s2, r2, _, _ := idemServer(t, nil)
	if err := r2.Add("purge_task", mcpeffect.Destructive); err != nil {
		t.Fatal(err)
	}
	if err := r2.DeclareRecovery("purge_task", mcpeffect.Compensation("unpurge_task", nil)); err != nil {
		t.Fatal(err)
	}
	hs2 := serveHTTP(t, s2, r2, nil)
	_, err = connectHTTP(t, hs2.URL+"/mcp", "read-token", nil).ListTools(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), `"unpurge_task", which the registry does not classify`) {
		t.Errorf("a listing with an unclassified undo: %v", err)
	}
	// A listing without params, in plain ASCII, is checked too.
	resp := asJSON(t, s2.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
	if !strings.Contains(resp, `which the registry does not classify`) {
		t.Errorf("a listing without params: %s", resp)
	}
	// The schemas: a parameter that the undo does not take.
	s3, r3, _, _ := idemServer(t, nil)
	mcpgo.AddTool(s3, r3, mcp.NewTool("archive_task", mcp.WithString("task_id")), mcpeffect.Destructive|mcpeffect.Idempotent, (&calls{}).tool("archive_task"))
	if err := r3.DeclareRecovery("archive_task", mcpeffect.Compensation("restore_task", map[string]string{"id": "$request.body#/task_id"})); err != nil {
		t.Fatal(err)
	}
	hs3 := serveHTTP(t, s3, r3, nil)
	_, err = connectHTTP(t, hs3.URL+"/mcp", "read-token", nil).ListTools(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), `the parameter "id", which its input schema does not have`) {
		t.Errorf("a listing with a parameter the undo lacks: %v", err)
	}
}

// TestIdempotencyPanic: without mcp-go's WithRecovery, a handler's panic
// goes through the middleware (net/http recovers it, and the client sees
// its connection fail): the key is kept with an error that says so, not
// left in progress, and the call does not run again.
func TestIdempotencyPanic(t *testing.T) {
	s, r, c, _ := idemServer(t, nil, server.WithToolCapabilities(true))
	hs := serveHTTP(t, s, r, &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{}}})
	hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the panic net/http recovers
	if _, err := callKey(connectHTTP(t, hs.URL+"/mcp", "full-token", nil), "panic_task", nil, "p"); err == nil {
		t.Fatal("panic_task answered")
	}
	_, err := callKey(connectHTTP(t, hs.URL+"/mcp", "full-token", nil), "panic_task", nil, "p")
	if ie, ok := mcpeffect.AsIdempotencyError(err); !ok || ie.Type != mcpeffect.IdempotencyHandlerPanicked {
		t.Errorf("the repeat of a call that panicked: %v", err)
	}
	if n := c.count("panic_task"); n != 1 {
		t.Errorf("panic_task ran %d times", n)
	}
}
