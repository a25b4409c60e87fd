package host_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/host"
)

// A recorder records the requests a server receives.
type recorder struct {
	mu      sync.Mutex
	calls   []string // names of the tools called
	listing int      // tools/list requests
}

func (r *recorder) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r.mu.Lock()
		switch method {
		case "tools/call":
			r.calls = append(r.calls, req.(*mcp.CallToolRequest).Params.Name)
		case "tools/list":
			r.listing++
		}
		r.mu.Unlock()
		return next(ctx, method, req)
	}
}

func (r *recorder) called() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func (r *recorder) lists() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.listing
}

func noop(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}

// notesServer returns a server whose tools are classified with AddTool,
// but for bare_tool, which has no annotations, and the recorder of the
// requests it receives.
func notesServer(pageSize int) (*mcp.Server, *recorder) {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
	r := mcpeffect.NewRegistry()
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "get_note"}, mcpeffect.Read, noop)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "search_web"}, mcpeffect.Read|mcpeffect.OpenWorld, noop)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "create_note"}, mcpeffect.Write, noop)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "tag_note"}, mcpeffect.Idempotent, noop)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "delete_note"}, mcpeffect.Destructive, noop)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "send_note"}, mcpeffect.Write|mcpeffect.OpenWorld, noop)
	mcp.AddTool(s, &mcp.Tool{Name: "bare_tool"}, noop)
	rec := &recorder{}
	// The recorder sees every call that reaches the server; the registry's
	// middleware, inside it, enforces the effects (connectApprover gives
	// the connection the full scope).
	s.AddReceivingMiddleware(rec.middleware, r.Middleware(nil))
	return s, rec
}

// connect connects a client that applies a to server s, in memory.
func connectApprover(t *testing.T, s *mcp.Server, a *host.Approver, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := t.Context()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(mcpeffect.WithConnectionScope(ctx, mcpeffect.Full), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	if opts == nil {
		opts = &mcp.ClientOptions{ToolListChangedHandler: a.ToolListChanged}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts)
	client.AddSendingMiddleware(a.Middleware())
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A person answers confirmations, and remembers what they were asked.
type person struct {
	answer bool
	err    error

	mu    sync.Mutex
	asked []*host.Confirmation
}

func (p *person) confirm(_ context.Context, c *host.Confirmation) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, c)
	return p.answer, p.err
}

var errNoTerminal = errors.New("no terminal to ask on")

func TestApprover(t *testing.T) {
	var (
		trusted = host.Policy{Trusted: true}
		yes     = func() *person { return &person{answer: true} }
		no      = func() *person { return &person{answer: false} }
		broken  = func() *person { return &person{err: errNoTerminal} }
	)
	for _, tc := range []struct {
		name     string
		policy   host.Policy
		person   func() *person // nil: no ConfirmFunc
		tool     string
		asked    bool
		sent     bool
		decision host.Action // of the NotSentError, if not sent
		reason   string      // what the error says, if not sent
	}{
		{"untrusted read, yes", host.Policy{}, yes, "get_note", true, true, 0, ""},
		{"untrusted read, no", host.Policy{}, no, "get_note", true, false, host.Ask, "the server is not trusted"},
		{"trusted read", trusted, no, "get_note", false, true, 0, ""},
		{"trusted open-world read", trusted, nil, "search_web", false, true, 0, ""},
		{"trusted write, yes", trusted, yes, "create_note", true, true, 0, ""},
		{"trusted write, no", trusted, no, "create_note", true, false, host.Ask, "it is a write"},
		{"trusted destructive, yes", trusted, yes, "delete_note", true, true, 0, ""},
		{"trusted destructive, no", trusted, no, "delete_note", true, false, host.Ask, "it is destructive"},
		{"trusted destructive, no one to ask", trusted, nil, "delete_note", false, false, host.Ask, "there is no one to ask"},
		{"trusted, no annotations", trusted, no, "bare_tool", true, false, host.Ask, "it is destructive (destructiveHint missing)"},
		{"idempotent write allowed", host.Policy{Trusted: true, AllowIdempotentWrites: true}, no, "tag_note", false, true, 0, ""},
		{"open-world write denied", host.Policy{Trusted: true, DenyOpenWorldWrites: true}, yes, "send_note", false, false, host.Deny, "a write that may reach an open world"},
		{"tool denied by name", host.Policy{Trusted: true, Tools: map[string]host.Action{"get_note": host.Deny}}, yes, "get_note", false, false, host.Deny, "the policy names this tool: deny"},
		{"tool allowed by name", host.Policy{Tools: map[string]host.Action{"delete_note": host.Allow}}, no, "delete_note", false, true, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, rec := notesServer(0)
			var (
				p       *person
				confirm host.ConfirmFunc
			)
			if tc.person != nil {
				p = tc.person()
				confirm = p.confirm
			}
			cs := connectApprover(t, s, host.NewApprover(tc.policy, confirm), nil)

			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool})

			if sent := slices.Contains(rec.called(), tc.tool); sent != tc.sent {
				t.Errorf("sent to the server: %t, want %t", sent, tc.sent)
			}
			if asked := p != nil && len(p.asked) > 0; asked != tc.asked {
				t.Errorf("asked: %t, want %t", asked, tc.asked)
			}
			if tc.sent {
				if err != nil {
					t.Errorf("CallTool: %v", err)
				}
				return
			}
			var r *host.NotSentError
			if !errors.As(err, &r) {
				t.Fatalf("CallTool error %v, want a *NotSentError", err)
			}
			if r.Tool != tc.tool || r.Action != tc.decision || r.Asked != tc.asked {
				t.Errorf("refusal of tool %q, decision %s, asked %t; want tool %q, decision %s, asked %t",
					r.Tool, r.Action, r.Asked, tc.tool, tc.decision, tc.asked)
			}
			if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("tool %q not sent", tc.tool)) || !strings.Contains(msg, tc.reason) {
				t.Errorf("error %q does not name the tool and say %q", msg, tc.reason)
			}
		})
	}

	t.Run("confirmation fails", func(t *testing.T) {
		s, rec := notesServer(0)
		p := broken()
		cs := connectApprover(t, s, host.NewApprover(trusted, p.confirm), nil)
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_note"})
		if !errors.Is(err, errNoTerminal) {
			t.Errorf("CallTool error %v, want one wrapping %v", err, errNoTerminal)
		}
		if calls := rec.called(); len(calls) != 0 {
			t.Errorf("the server received calls %v, want none", calls)
		}
	})
}

func TestApproverConfirmation(t *testing.T) {
	s, _ := notesServer(0)
	p := &person{answer: true}
	cs := connectApprover(t, s, host.NewApprover(host.Policy{Trusted: true}, p.confirm), nil)
	args := map[string]any{"id": "n1"}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_note", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	// A tool the server does not list has no hints: the worst case.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "unlisted_tool"}); err == nil {
		t.Error("calling a tool the server does not have succeeded")
	}
	if len(p.asked) != 2 {
		t.Fatalf("asked %d times, want 2", len(p.asked))
	}

	c := p.asked[0]
	if c.Session != cs || c.Params.Name != "delete_note" || c.Params.Arguments.(map[string]any)["id"] != "n1" {
		t.Errorf("confirmation of %+v, want delete_note with its arguments on the session", c.Params)
	}
	if c.Tool == nil || c.Tool.Name != "delete_note" {
		t.Errorf("confirmation tool %+v, want delete_note as listed", c.Tool)
	}
	if c.Effect != mcpeffect.Destructive || c.Reason != "it is destructive" {
		t.Errorf("confirmation effect %s, reason %q; want %s, %q", c.Effect, c.Reason, mcpeffect.Destructive, "it is destructive")
	}

	c = p.asked[1]
	if c.Tool != nil || c.Effect != mcpeffect.Destructive|mcpeffect.OpenWorld {
		t.Errorf("unlisted tool: confirmation tool %v, effect %s; want nil, %s", c.Tool, c.Effect, mcpeffect.Destructive|mcpeffect.OpenWorld)
	}
}

func TestApproverPagination(t *testing.T) {
	// One tool a page, in order of name: search_web is on the fifth of
	// seven.
	s, rec := notesServer(1)
	cs := connectApprover(t, s, host.NewApprover(host.Policy{Trusted: true}, nil), nil)
	ctx := t.Context()

	// Had the approver not found the read on its page, it would have
	// asked, and without anyone to ask, refused.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_web"}); err != nil {
		t.Fatalf("calling a trusted read: %v", err)
	}
	listed := rec.lists()
	if listed != 7 {
		t.Errorf("%d tools/list requests to find one tool, want 7: every page", listed)
	}

	// Once every page is seen, calls to listed tools list nothing
	// more, even when many run at once.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_note"}); err != nil {
				t.Errorf("calling a trusted read: %v", err)
			}
		})
	}
	wg.Wait()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bare_tool"}); err == nil {
		t.Error("calling a tool without annotations, with no one to ask, succeeded")
	}
	if n := rec.lists(); n != listed {
		t.Errorf("%d more tools/list requests after every page was seen, want none", n-listed)
	}
}

func TestApproverRemembersHostListing(t *testing.T) {
	// Four tools a page, in order of name: get_note is on the first.
	s, rec := notesServer(4)
	cs := connectApprover(t, s, host.NewApprover(host.Policy{Trusted: true}, nil), nil)
	ctx := t.Context()

	// The host lists the first page itself.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_note"}); err != nil {
		t.Fatalf("calling a trusted read: %v", err)
	}
	if n := rec.lists(); n != 1 {
		t.Errorf("%d tools/list requests, want the host's one", n)
	}

	// search_web is on the second page, which the approver lists.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_web"}); err != nil {
		t.Fatalf("calling a trusted read: %v", err)
	}
	if n := rec.lists(); n != 3 {
		t.Errorf("%d tools/list requests, want 3: the host's, and both pages", n)
	}
}

func TestApproverToolListChanged(t *testing.T) {
	s, rec := notesServer(0)
	a := host.NewApprover(host.Policy{Trusted: true}, nil)
	changed := make(chan struct{}, 10)
	cs := connectApprover(t, s, a, &mcp.ClientOptions{
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) {
			a.ToolListChanged(ctx, req)
			changed <- struct{}{}
		},
	})
	ctx := t.Context()

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_note"}); err != nil {
		t.Fatalf("calling a trusted read: %v", err)
	}

	// The server now says get_note is destructive.
	destructive := true
	s.AddTool(&mcp.Tool{
		Name:        "get_note",
		InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}

	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_note"})
	var r *host.NotSentError
	if !errors.As(err, &r) || r.Action != host.Ask {
		t.Errorf("calling get_note once destructive: error %v, want a refusal (no one to ask)", err)
	}
	if calls := rec.called(); len(calls) != 1 {
		t.Errorf("the server received calls %v, want only the first", calls)
	}
}

func TestApproverSessions(t *testing.T) {
	// Two servers with the same tool name, a read on one and a
	// destructive write on the other, behind one Approver: each call is
	// decided from its own session's listing.
	readServer, readRec := notesServer(0)
	writeServer := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "1"}, nil)
	writeRec := &recorder{}
	writeServer.AddReceivingMiddleware(writeRec.middleware)
	mcpeffect.AddTool(writeServer, mcpeffect.NewRegistry(), &mcp.Tool{Name: "get_note"}, mcpeffect.Destructive, noop)

	a := host.NewApprover(host.Policy{Trusted: true}, nil)
	readSession := connectApprover(t, readServer, a, nil)
	writeSession := connectApprover(t, writeServer, a, nil)
	ctx := t.Context()

	for range 2 {
		if _, err := readSession.CallTool(ctx, &mcp.CallToolParams{Name: "get_note"}); err != nil {
			t.Errorf("read: %v", err)
		}
		if _, err := writeSession.CallTool(ctx, &mcp.CallToolParams{Name: "get_note"}); err == nil {
			t.Error("destructive write, with no one to ask: sent")
		}
	}
	if n := len(readRec.called()); n != 2 {
		t.Errorf("the read server received %d calls, want 2", n)
	}
	if calls := writeRec.called(); len(calls) != 0 {
		t.Errorf("the other server received calls %v, want none", calls)
	}
}
