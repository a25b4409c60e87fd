package connect

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/hostile"
)

// TestSessionBounds opens sessions with hostile servers over HTTP, with
// limits far below the defaults: every answer past a limit, to
// tools/list or to tools/call, fails with a *LimitError that names it,
// and a server that never answers is held to the target's timeout.
func TestSessionBounds(t *testing.T) {
	limits := Limits{Message: 64 << 10, Tools: 20, Pages: 5}
	for _, tc := range []struct {
		name   string
		server *hostile.Server
		limit  Limit
		what   string // what the error says
	}{
		{"answer", &hostile.Server{Attack: hostile.Huge, Size: 1 << 20}, LimitHTTPAnswer, "an HTTP answer of more than 64 KiB"},
		{"event stream", &hostile.Server{Attack: hostile.Flood, Size: 1 << 10, SSE: true}, LimitHTTPAnswer, "an HTTP answer of more than 64 KiB"},
		{"tools", &hostile.Server{Attack: hostile.EndlessPages, Size: 8}, LimitTools, "more than 20 tools"},
		{"pages", &hostile.Server{Attack: hostile.EndlessPages, Size: 1}, LimitPages, "more than 5 pages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(tc.server.Handler())
			defer ts.Close()
			s, err := Target{URL: ts.URL, Timeout: 30 * time.Second, Limits: limits}.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.ListTools(t.Context())
			var le *LimitError
			if !errors.As(err, new(*ConnectError)) || !strings.Contains(err.Error(), tc.what) {
				t.Errorf("ListTools: %v, want a ConnectError that says %q", err, tc.what)
			}
			if tc.limit == LimitHTTPAnswer {
				if s.breach.get() == nil || s.breach.get().Limit != LimitHTTPAnswer {
					t.Errorf("breach %v, want the HTTP answer's", s.breach.get())
				}
			} else if !errors.As(err, &le) || le.Limit != tc.limit {
				t.Errorf("ListTools: %v, want a *LimitError of %s", err, tc.limit)
			}
		})
	}

	t.Run("call", func(t *testing.T) {
		ts := httptest.NewServer((&hostile.Server{Attack: hostile.Huge, Size: 1 << 20}).Handler())
		defer ts.Close()
		s, err := Target{URL: ts.URL, Limits: limits}.Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.CallTool(t.Context(), &mcp.CallToolParams{Name: "huge"})
		if err == nil || !strings.Contains(err.Error(), "an HTTP answer of more than 64 KiB (the limit of one answer) while calling a tool") {
			t.Errorf("CallTool: %v, want the limit", err)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		ts := httptest.NewServer((&hostile.Server{Attack: hostile.Silent}).Handler())
		defer ts.Close()
		s, err := Target{URL: ts.URL, Timeout: 200 * time.Millisecond}.Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.CallTool(t.Context(), &mcp.CallToolParams{Name: "any"})
		if err == nil || !strings.Contains(err.Error(), "no answer within 200ms (-timeout) while calling a tool") {
			t.Errorf("CallTool: %v, want the timeout", err)
		}
	})
}
