package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func noop(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}

// testServer returns a server with tools annotated by hand, listed one a
// page.
func testServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Title: "Test server", Version: "0.1"}, &mcp.ServerOptions{PageSize: 1})
	no := false
	mcp.AddTool(s, &mcp.Tool{Name: "a_bare"}, noop)
	mcp.AddTool(s, &mcp.Tool{Name: "b_read", Title: "Read", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, noop)
	mcp.AddTool(s, &mcp.Tool{Name: "c_write", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no}}, noop)
	return s
}

func TestList(t *testing.T) {
	ctx := t.Context()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := testServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()

	server, tools, err := List(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	if server.Name != "test" || server.Title != "Test server" || server.Version != "0.1" || server.ProtocolVersion == "" {
		t.Errorf("server %+v", server)
	}
	// go-sdk sends readOnlyHint and idempotentHint even when false; the
	// raw annotations show what went on the wire, and a tool without
	// annotations has none.
	want := []Listed{
		{Name: "a_bare"},
		{Name: "b_read", Title: "Read", Annotations: json.RawMessage(`{"idempotentHint":false,"openWorldHint":false,"readOnlyHint":true}`)},
		{Name: "c_write", Annotations: json.RawMessage(`{"destructiveHint":false,"idempotentHint":false,"readOnlyHint":false}`)},
	}
	if len(tools) != len(want) {
		t.Fatalf("listed %d tools, want %d (one a page): %+v", len(tools), len(want), tools)
	}
	for i, got := range tools {
		w := want[i]
		if got.Name != w.Name || got.Title != w.Title || !bytes.Equal(compact(t, got.Annotations), compact(t, w.Annotations)) {
			t.Errorf("tool %d: got %s %q %s, want %s %q %s", i, got.Name, got.Title, got.Annotations, w.Name, w.Title, w.Annotations)
		}
	}
}

func compact(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestHTTPTransport(t *testing.T) {
	s := testServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)

	type seen struct {
		method, token, version string
	}
	var (
		mu       sync.Mutex
		requests []seen
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		json.Unmarshal(body, &msg)
		mu.Lock()
		requests = append(requests, seen{r.Method + " " + msg.Method, r.Header.Get("Authorization"), r.Header.Get("Mcp-Protocol-Version")})
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	header := http.Header{"Authorization": {"Bearer t0ken"}}
	server, tools, err := List(t.Context(), HTTPTransport(ts.URL, header))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 3 {
		t.Errorf("listed %d tools, want 3", len(tools))
	}
	mu.Lock()
	defer mu.Unlock()
	initialized := false
	for _, r := range requests {
		if r.token != "Bearer t0ken" {
			t.Errorf("%s: Authorization %q, want the bearer token", r.method, r.token)
		}
		// Once the session is initialized, every request names its
		// protocol version.
		if initialized && r.version != server.ProtocolVersion {
			t.Errorf("%s: Mcp-Protocol-Version %q, want %q", r.method, r.version, server.ProtocolVersion)
		}
		if r.method == "POST initialize" {
			initialized = true
		}
	}
	if !initialized {
		t.Errorf("no initialize among %+v", requests)
	}
}

func TestTailWriter(t *testing.T) {
	var w tailWriter
	for i := range 2000 {
		fmt.Fprintf(&w, "line %d\n", i)
	}
	w.Write([]byte("\n  \r\n"))
	w.Write([]byte("evil \x1b[2J line\n"))
	w.Write([]byte(strings.Repeat("x", 1000) + "\n"))
	w.Write([]byte("last, without a newline"))
	got := w.lines(4)
	want := []string{
		"line 1999",
		`"evil \x1b[2J line"`,
		strings.Repeat("x", stderrLineMax) + stderrOverflow,
		"last, without a newline",
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines:\n%q\nwant:\n%q", got, want)
	}
	if len(w.buf) > stderrKeep {
		t.Errorf("kept %d bytes, want at most %d", len(w.buf), stderrKeep)
	}
	// One write larger than what is kept keeps its end.
	var big tailWriter
	big.Write([]byte(strings.Repeat("a", 3*stderrKeep) + "\nend\n"))
	if got := big.lines(1); !slices.Equal(got, []string{"end"}) {
		t.Errorf("lines after a big write: %q", got)
	}
}
