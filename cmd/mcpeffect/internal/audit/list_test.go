package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
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

func TestWriteText(t *testing.T) {
	r, err := Review(Server{Name: "notes", Title: "Notes", Version: "2.0", ProtocolVersion: "2025-11-25"}, []Listed{
		{Name: "get_note", Annotations: json.RawMessage(`{"readOnlyHint": true, "openWorldHint": false}`)},
		{Name: "wipe", Annotations: json.RawMessage(`{"readOnlyHint": true, "destructiveHint": true, "openWorldHint": false}`)},
		{Name: "export"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const want = `notes "Notes" 2.0 (MCP 2025-11-25): 3 tools

TOOL      READ-ONLY  DESTRUCTIVE  IDEMPOTENT  OPEN-WORLD  EFFECT
get_note  true       n/a          n/a         false       read
wipe      true       true         (false)     false       write|destructive
export    (false)    (true)       (false)     (true)      write|destructive|openworld
(x): hint missing, hosts assume x
n/a: hint missing, and meaningless for a read-only tool

LEVEL    TOOL    RULE                       FINDING
error    wipe    read-only-and-destructive  readOnlyHint and destructiveHint are both true: hosts cannot tell which is wrong, and must treat it as a destructive write
warning  wipe    missing-idempotent-hint    a write without idempotentHint: hosts must assume that repeating it changes more
error    export  no-annotations             declares none of the four hints: hosts must assume a destructive, non-idempotent write on an open world

3 tools: 1 read, 2 writes (2 destructive, 0 idempotent), 1 open-world. 2 errors, 1 warning.
`
	var plain bytes.Buffer
	if err := WriteText(&plain, r, false); err != nil {
		t.Fatal(err)
	}
	if plain.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", plain.String(), want)
	}

	var colored bytes.Buffer
	if err := WriteText(&colored, r, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"\x1b[1;31merror\x1b[0m", "\x1b[33mwarning\x1b[0m", "\x1b[2m(true)\x1b[0m", "\x1b[1;31m2 errors\x1b[0m"} {
		if !strings.Contains(colored.String(), s) {
			t.Errorf("coloured text lacks %q:\n%s", s, colored.String())
		}
	}
	// Colour changes nothing else, alignment included.
	escapes := regexp.MustCompile("\x1b\\[[0-9;]*m")
	if got := escapes.ReplaceAllString(colored.String(), ""); got != want {
		t.Errorf("coloured text without escapes:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteTextNoTools(t *testing.T) {
	r, err := Review(Server{Name: "empty", Version: "1", ProtocolVersion: "2025-06-18"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, r, false); err != nil {
		t.Fatal(err)
	}
	const want = "empty 1 (MCP 2025-06-18): 0 tools\n\nNo findings.\n\n0 tools: 0 reads, 0 writes (0 destructive, 0 idempotent), 0 open-world. 0 errors, 0 warnings.\n"
	if b.String() != want {
		t.Errorf("text:\n%q\nwant:\n%q", b.String(), want)
	}
}

func TestWriteTextEscapes(t *testing.T) {
	// A server must not be able to write escapes to the terminal.
	r, err := Review(Server{Name: "evil\x1b[2J", Version: "1\n"}, []Listed{{Name: "x\x1b]0;title\x07"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, r, false); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") {
		t.Errorf("text holds control characters:\n%q", b.String())
	}
	for _, s := range []string{`"evil\x1b[2J 1\n"`, `"x\x1b]0;title\a"`} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %s:\n%s", s, b.String())
		}
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
