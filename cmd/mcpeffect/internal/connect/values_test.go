package connect

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestValueCounter(t *testing.T) {
	for text, want := range map[string]int{
		`{}`:                                 1,
		`[0,0,0]`:                            4,
		`{"a": 1, "b": [true, null, "x"]}`:   8,
		`"a \"quoted\" [string] {0,1}"`:      1,
		`{"k\\": "v"}`:                       3,
		`  12345  , -1.5e3 ,"",[]`:           4,
		"{\"nested\": [[[[]]]], \"n\": 0}\n": 8,
	} {
		var c ValueCounter
		// In pieces of a byte, as a stream gives them.
		for i := range len(text) {
			c.Write([]byte{text[i]})
		}
		if c.Count() != want {
			t.Errorf("%s: %d values, want %d", text, c.Count(), want)
		}
	}
}

// numbers is a server with one tool, numbers, a read whose structured
// result holds n numbers: few bytes, and many values once decoded.
func numbers(n int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "numbers", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "numbers", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"numbers": make([]int, n)}, nil
		})
	return s
}

// TestValuesBound: a message of more JSON values than Limits.Values, over
// HTTP and over stdio, is refused before go-sdk decodes it, which would
// hold some 30 bytes of memory a value of two bytes of text; the error
// names the limit. A message within it is read.
func TestValuesBound(t *testing.T) {
	limits := Limits{Values: 1000}
	t.Run("http", func(t *testing.T) {
		for n, refused := range map[int]bool{500: false, 5000: true} {
			s := numbers(n)
			ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
			session, err := Target{URL: ts.URL, Timeout: 30 * time.Second, Limits: limits}.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			_, err = session.CallTool(t.Context(), &mcp.CallToolParams{Name: "numbers"})
			session.Close()
			ts.Close()
			switch {
			case refused && (err == nil || !strings.Contains(err.Error(), "a message of more than 1000 JSON values (the limit of one message, once decoded) while calling a tool")):
				t.Errorf("%d numbers: %v, want the limit", n, err)
			case !refused && err != nil:
				t.Errorf("%d numbers: %v", n, err)
			}
		}
	})
	t.Run("stdio", func(t *testing.T) {
		r, w := io.Pipe()
		tr := &lineTransport{r: r, w: nopWriteCloser{io.Discard}, max: 1 << 20, values: 1000, breach: &breach{}}
		conn, err := tr.Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go w.Write([]byte(`{"jsonrpc": "2.0", "id": 1, "result": {"n": [` + strings.Repeat("0,", 2000) + "0]}}\n"))
		_, err = conn.Read(t.Context())
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != LimitValues || le.Max != 1000 {
			t.Errorf("a line of 2000 values: %v, want the limit of values", err)
		}
	})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
