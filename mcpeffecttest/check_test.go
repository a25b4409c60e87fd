package mcpeffecttest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder is a testing.TB that keeps the failures Check reports instead
// of failing the test that runs it.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

type args struct {
	ID string `json:"id,omitempty"`
}

// server builds a server with a read, a write and a destructive write, and
// counts the calls that reach the handlers.
func server(t *testing.T, middleware bool, opts *mcpeffect.MiddlewareOptions) (*mcp.Server, *mcpeffect.Registry, *int) {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "v1"}, nil)
	ran := new(int)
	var mu sync.Mutex
	h := func(context.Context, *mcp.CallToolRequest, args) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		defer mu.Unlock()
		*ran++
		return &mcp.CallToolResult{}, nil, nil
	}
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "get_task"}, mcpeffect.Read, h)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "create_task"}, mcpeffect.Write, h)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "delete_task"}, mcpeffect.Destructive|mcpeffect.Idempotent, h)
	if middleware {
		s.AddReceivingMiddleware(r.Middleware(opts))
	}
	return s, r, ran
}

func TestCheck(t *testing.T) {
	h := func(context.Context, *mcp.CallToolRequest, args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	}
	yes := true
	tests := []struct {
		name       string
		middleware bool
		opts       *mcpeffect.MiddlewareOptions
		change     func(*mcp.Server, *mcpeffect.Registry)
		want       []string // one substring per expected failure, in order
		wantRan    int
	}{
		{name: "agrees", middleware: true},
		{name: "agrees with hidden tools", middleware: true, opts: &mcpeffect.MiddlewareOptions{HideDenied: true}},
		{
			name: "no middleware", middleware: false,
			want: []string{
				`"create_task" with a read-only scope: the server has no mcpeffect middleware: the call was refused by mcpeffect.AddTool`,
				`"delete_task" with a read-only scope: the server has no mcpeffect middleware`,
				`"delete_task" with a non-destructive scope: the server has no mcpeffect middleware`,
			},
		},
		{
			name: "read-only enforced and nothing else", middleware: false,
			change: func(s *mcp.Server, r *mcpeffect.Registry) {
				r.Add("purge_all", mcpeffect.Destructive)
				mcp.AddTool(s, &mcp.Tool{Name: "purge_all", Annotations: mcpeffect.Destructive.Annotations()}, h)
				s.AddReceivingMiddleware(readOnlyMode(r))
			},
			want: []string{
				`"delete_task" with a non-destructive scope: the server has no mcpeffect middleware`,
				`"purge_all" with a non-destructive scope: want a refusal, but the call returned a result (isError false): its handler ran`,
			},
		},
		{
			name: "no middleware, a tool added by go-sdk alone", middleware: false,
			change: func(s *mcp.Server, r *mcpeffect.Registry) {
				r.Add("wipe", mcpeffect.Destructive)
				mcp.AddTool(s, &mcp.Tool{Name: "wipe", Annotations: mcpeffect.Destructive.Annotations()}, h)
			},
			want: []string{
				`"create_task" with a read-only scope: the server has no mcpeffect middleware`,
				`"delete_task" with a read-only scope: the server has no mcpeffect middleware`,
				`"wipe" with a read-only scope: want a refusal, but the call returned a result (isError false): its handler ran`,
				`"delete_task" with a non-destructive scope: the server has no mcpeffect middleware`,
				`"wipe" with a non-destructive scope: want a refusal, but the call returned a result (isError false): its handler ran`,
			},
		},
		{
			name: "no middleware, arguments the schema refuses", middleware: false,
			change: func(s *mcp.Server, r *mcpeffect.Registry) {
				mcpeffect.AddTool(s, r, &mcp.Tool{Name: "rename_task"}, mcpeffect.Destructive,
					func(context.Context, *mcp.CallToolRequest, struct {
						Name string `json:"name"`
					}) (*mcp.CallToolResult, any, error) {
						panic("rename_task's handler ran")
					})
			},
			want: []string{
				`"create_task" with a read-only scope: the server has no mcpeffect middleware`,
				`"delete_task" with a read-only scope: the server has no mcpeffect middleware`,
				`"rename_task" with a read-only scope: want a refusal by the mcpeffect middleware, but go-sdk's schema validation refused the empty arguments (validating "arguments"`,
				`"delete_task" with a non-destructive scope: the server has no mcpeffect middleware`,
				`"rename_task" with a non-destructive scope: want a refusal by the mcpeffect middleware, but go-sdk's schema validation refused the empty arguments (validating "arguments"`,
			},
		},
		{
			name: "tool added without classification", middleware: true, opts: &mcpeffect.MiddlewareOptions{HideDenied: true},
			change: func(s *mcp.Server, r *mcpeffect.Registry) { mcp.AddTool(s, &mcp.Tool{Name: "sneaky"}, h) },
			want:   []string{`tool "sneaky" is on the server but has no effect classification`},
		},
		{
			name: "classified tool not on the server", middleware: true,
			change: func(s *mcp.Server, r *mcpeffect.Registry) { r.Add("ghost", mcpeffect.Write) },
			want:   []string{`tool "ghost" is classified write but is not on the server`},
		},
		{
			name: "tool removed from the server", middleware: true,
			change: func(s *mcp.Server, r *mcpeffect.Registry) { s.RemoveTools("get_task") },
			want:   []string{`tool "get_task" is classified read but is not on the server`},
		},
		{
			name: "hints written by hand", middleware: true,
			change: func(s *mcp.Server, r *mcpeffect.Registry) {
				r.Add("purge", mcpeffect.Destructive)
				mcp.AddTool(s, &mcp.Tool{Name: "purge", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &yes}}, h)
			},
			want: []string{
				`tool "purge", classified write|destructive: readOnlyHint is true, want false`,
				`tool "purge", classified write|destructive: destructiveHint is missing (hosts assume true), want true`,
				`tool "purge", classified write|destructive: openWorldHint is true, want false`,
			},
		},
		{
			name: "no annotations at all", middleware: true,
			change: func(s *mcp.Server, r *mcpeffect.Registry) {
				r.Add("bare", mcpeffect.Read)
				mcp.AddTool(s, &mcp.Tool{Name: "bare"}, h)
			},
			want: []string{`tool "bare", classified read: the server advertises no annotations`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, r, ran := server(t, tt.middleware, tt.opts)
			if tt.change != nil {
				tt.change(s, r)
			}
			rec := &recorder{TB: t}
			mcpeffecttest.Check(rec, s, r)
			if len(rec.errs) != len(tt.want) {
				t.Fatalf("Check reported %d failures, want %d:\n%s", len(rec.errs), len(tt.want), strings.Join(rec.errs, "\n"))
			}
			for i, w := range tt.want {
				if !strings.Contains(rec.errs[i], w) {
					t.Errorf("failure %d = %q, want it to contain %q", i, rec.errs[i], w)
				}
			}
			if *ran != tt.wantRan {
				t.Errorf("%d handlers ran, want %d", *ran, tt.wantRan)
			}
		})
	}
}

// readOnlyMode enforces r on read-only callers and lets through every call
// that r refuses to a wider scope: a server that has a read-only mode and
// nothing more, so that a non-destructive token may still delete. The
// calls it lets through never pass r's middleware, so the tools that
// mcpeffect.AddTool added still refuse to run; those added with go-sdk
// alone run.
func readOnlyMode(r *mcpeffect.Registry) mcp.Middleware {
	enforce := r.Middleware(nil)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		enforced := enforce(next)
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := enforced(ctx, method, req)
			if d, ok := mcpeffect.AsDeniedError(err); ok && d.Granted != mcpeffect.ReadOnly {
				return next(ctx, method, req)
			}
			return res, err
		}
	}
}
