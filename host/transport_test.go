package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server of another SDK, as a go-sdk client cannot see it whole: it
// declares capabilities.tools.idempotency and lists a tool with
// annotations.recovery, where SEP-3182 and SEP-3172 put them.
const (
	draftInitialize = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"idempotency":{}}},"serverInfo":{"name":"draft","version":"v1"}}`
	draftTools      = `{"tools":[{"name":"charge_payment","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true,` +
		`"recovery":{"strategy":"compensation","compensatingOperation":{"operationId":"refund_payment","parameters":{"transactionId":"$response.body#/transactionId"}}}}},` +
		`{"name":"refund_payment","inputSchema":{"type":"object"}}]}`
)

// draftServer answers the requests of a client on conn as a server of
// another SDK would, and records the params of each tools/call.
type draftServer struct {
	mu    sync.Mutex
	calls []string
}

func (d *draftServer) answer(method string, params json.RawMessage) (string, bool) {
	switch method {
	case "initialize":
		return draftInitialize, true
	case "tools/list":
		return draftTools, true
	case "tools/call":
		d.mu.Lock()
		d.calls = append(d.calls, string(params))
		d.mu.Unlock()
		return `{"content":[{"type":"text","text":"charged"}],"structuredContent":{"transactionId":"TXN-1"}}`, true
	}
	return "", false
}

func (d *draftServer) serve(t *testing.T, st mcp.Transport) {
	conn, err := st.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go func() {
		for {
			msg, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			req, ok := msg.(*jsonrpc.Request)
			if !ok || !req.IsCall() {
				continue
			}
			res, ok := d.answer(req.Method, req.Params)
			resp := &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(res)}
			if !ok {
				resp = &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + req.Method}}
			}
			if conn.Write(context.Background(), resp) != nil {
				return
			}
		}
	}()
}

func (d *draftServer) sent() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

// checkDraftSession lists the tools and calls one with a key, as a host
// would, and checks what the server saw.
func checkDraftSession(t *testing.T, cs *mcp.ClientSession, d *draftServer, advertised bool) {
	t.Helper()
	if !advertised {
		t.Error("the capability the server declared was not seen")
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := host.RecoveryOf(res.Tools[0])
	if err != nil || rec == nil || rec.CompensatingOperation.OperationID != "refund_payment" {
		t.Fatalf("RecoveryOf(%s) = %+v, %v", res.Tools[0].Name, rec, err)
	}
	if rec, err := host.RecoveryOf(res.Tools[1]); rec != nil || err != nil {
		t.Errorf("RecoveryOf(refund_payment) = %+v, %v; want none", rec, err)
	}
	call, err := cs.CallTool(context.Background(), host.WithIdempotencyKey(&mcp.CallToolParams{Name: "charge_payment", Arguments: map[string]any{"amount": 4200}}, "b3b6c1e4"))
	if err != nil {
		t.Fatal(err)
	}
	undo, err := rec.Bind(json.RawMessage(`{"amount":4200}`), mustJSON(t, call.StructuredContent))
	if err != nil || string(undo["transactionId"]) != `"TXN-1"` {
		t.Errorf("the undo's arguments: %s, %v", undo, err)
	}
	sent := d.sent()
	if len(sent) != 1 || !strings.Contains(sent[0], `"idempotencyKey":"b3b6c1e4"`) || strings.Contains(sent[0], mcpeffect.IdempotencyKeyMetaKey) {
		t.Errorf("the server saw the call as %q, want the key in params.idempotencyKey only", sent)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestTransport connects a go-sdk client through a Transport to a server
// of another SDK, in memory: the key goes in the draft's field, and what
// the server declares and lists of the drafts is seen.
func TestTransport(t *testing.T) {
	d := &draftServer{}
	ct, st := mcp.NewInMemoryTransports()
	d.serve(t, st)
	tr := host.NewTransport(ct)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	checkDraftSession(t, cs, d, tr.IdempotencyAdvertised())
}

// TestRoundTripper does the same over Streamable HTTP, with answers in
// JSON and in SSE.
func TestRoundTripper(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse %t", sse), func(t *testing.T) {
			d := &draftServer{}
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if req.Method != http.MethodPost {
					http.Error(w, "POST only", http.StatusMethodNotAllowed)
					return
				}
				body, _ := io.ReadAll(req.Body)
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
				}
				json.Unmarshal(body, &m)
				if len(m.ID) == 0 {
					w.WriteHeader(http.StatusAccepted)
					return
				}
				res, _ := d.answer(m.Method, m.Params)
				msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, res)
				w.Header().Set("Mcp-Session-Id", "s1")
				if sse {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "event: message\nid: 1\ndata: %s\n\n", msg)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, msg)
			}))
			defer ts.Close()
			rt := &host.RoundTripper{}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			checkDraftSession(t, cs, d, rt.IdempotencyAdvertised())
		})
	}
}

// TestTransportWithoutCarrier shows what the carriers are for: a go-sdk
// server without one drops the draft's field, so a key sent there is
// lost and the call runs twice, and the server does not declare the
// capability, which tells the host; sent in _meta, the key reaches the
// middleware all the same.
func TestTransportWithoutCarrier(t *testing.T) {
	r := mcpeffect.NewRegistry()
	opts := &mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{}}
	e := r.Enforcer(opts)
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "v1"}, nil)
	runs := 0
	var mu sync.Mutex
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "create_task"}, mcpeffect.Write,
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			runs++
			mu.Unlock()
			return &mcp.CallToolResult{}, nil, nil
		})
	s.AddReceivingMiddleware(e.Middleware())
	for _, tc := range []struct {
		name           string
		carrier, draft bool // the server's carrier; the host's Transport
		runs           int
	}{
		{"both", true, true, 1},
		{"_meta alone", false, false, 1},
		{"the draft's field, dropped", false, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			runs = 0
			mu.Unlock()
			ct, mem := mcp.NewInMemoryTransports()
			var st mcp.Transport = mem
			if tc.carrier {
				st = e.IdempotencyTransport(mem)
			}
			ss, err := s.Connect(mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			var client mcp.Transport = ct
			var tr *host.Transport
			if tc.draft {
				tr = host.NewTransport(ct)
				client = tr
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil).Connect(context.Background(), client, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if tr != nil && tr.IdempotencyAdvertised() != tc.carrier {
				t.Errorf("IdempotencyAdvertised = %t, want %t", tr.IdempotencyAdvertised(), tc.carrier)
			}
			key := host.NewIdempotencyKey()
			for range 2 {
				if _, err := cs.CallTool(context.Background(), host.WithIdempotencyKey(&mcp.CallToolParams{Name: "create_task", Arguments: map[string]any{}}, key)); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if runs != tc.runs {
				t.Errorf("the handler ran %d times, want %d", runs, tc.runs)
			}
		})
	}
}

func TestParseRecovery(t *testing.T) {
	const rec = `{"strategy":"compensation","compensatingOperation":{"operationId":"undo","parameters":{"id":"$response.body#/id"}}}`
	for _, tc := range []struct {
		name, tool string
		undo       string // "" for none
		err        string
	}{
		{"annotations", `{"name":"t","annotations":{"recovery":` + rec + `}}`, "undo", ""},
		{"_meta", `{"name":"t","_meta":{"io.github.mcpeffect/recovery":` + rec + `}}`, "undo", ""},
		{"annotations first", `{"name":"t","annotations":{"recovery":` + rec + `},"_meta":{"io.github.mcpeffect/recovery":` + strings.Replace(rec, "undo", "other", 1) + `}}`, "undo", ""},
		{"none", `{"name":"t","annotations":{"destructiveHint":true}}`, "", ""},
		{"null", `{"name":"t","annotations":{"recovery":null}}`, "", ""},
		{"another strategy", `{"name":"t","annotations":{"recovery":{"strategy":"manual-only","compensatingOperation":{"operationId":"undo","parameters":{}}}}}`, "undo", `strategy "manual-only"`},
		{"a bad expression", `{"name":"t","annotations":{"recovery":{"strategy":"compensation","compensatingOperation":{"operationId":"undo","parameters":{"id":"id"}}}}}`, "undo", `parameter "id"`},
		{"not an object", `{"name":"t","annotations":{"recovery":"undo it"}}`, "", "not a recovery object"},
		{"not JSON", `{"name":`, "", "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := host.ParseRecovery([]byte(tc.tool))
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("ParseRecovery: %v, want an error with %q", err, tc.err)
			}
			switch {
			case tc.undo == "" && got != nil:
				t.Errorf("ParseRecovery = %+v, want none", got)
			case tc.undo != "" && (got == nil || got.CompensatingOperation.OperationID != tc.undo):
				t.Errorf("ParseRecovery = %+v, want the undo %q", got, tc.undo)
			}
		})
	}
}

// TestDeclaresIdempotency reads capabilities.tools.idempotency (SEP-3182)
// from a handshake's answer: declared
// by any value but null, the draft's being {}; and nothing declared by
// an answer that is not what it should be.
func TestDeclaresIdempotency(t *testing.T) {
	for _, tc := range []struct {
		result string
		want   bool
	}{
		{`{"capabilities": {"tools": {"idempotency": {}}}}`, true},
		{`{"capabilities": {"tools": {"listChanged": true, "idempotency": {"retention": "24h"}}}}`, true},
		{`{"capabilities": {"tools": {"idempotency": null}}}`, false},
		{`{"capabilities": {"tools": {"listChanged": true}}}`, false},
		{`{"capabilities": {"idempotency": {}}}`, false},
		{`{"capabilities": {"tools": []}}`, false},
		{`{"capabilities": "tools"}`, false},
		{`[]`, false},
		{``, false},
	} {
		if got := host.DeclaresIdempotency(json.RawMessage(tc.result)); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.result, got, tc.want)
		}
	}
}
