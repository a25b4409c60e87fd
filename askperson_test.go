package mcpeffect_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// page is a server's own page where a person confirms calls, as
// ConfirmOptions AskPerson asks on it: each question is bound to its
// call's Binding, expires, is answered once on the page, and its answer
// used once, by a call of that Binding. Its clock is the test's.
type page struct {
	now func() time.Time
	ttl time.Duration

	mu        sync.Mutex
	questions map[string]*pageQuestion
	asks      int // the times AskPerson was called
	ids       atomic.Int64
}

type pageQuestion struct {
	binding   [32]byte
	tool      string
	arguments string // canonical
	expires   time.Time
	answer    string // "accept" or "decline" once answered on the page
	answered  chan struct{}
	used      bool
	withdrawn bool
}

func newPage(now func() time.Time) *page {
	return &page{now: now, ttl: time.Minute, questions: map[string]*pageQuestion{}}
}

const pagePrefix = "https://done.example/confirm/"

// ask is ConfirmOptions AskPerson.
func (p *page) ask(ctx context.Context, call *mcpeffect.ConfirmCall) (mcpeffect.ConfirmReply, error) {
	p.mu.Lock()
	p.asks++
	p.mu.Unlock()
	if caps := call.Request.ClientCapabilities(); caps == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil {
		return mcpeffect.ConfirmReply{Answer: "unsupported", Detail: "the client cannot open a page"}, nil
	}
	if call.State == "" {
		id := fmt.Sprintf("q%d", p.ids.Add(1))
		p.mu.Lock()
		p.questions[id] = &pageQuestion{binding: call.Binding, tool: call.Tool, arguments: string(call.CanonicalArguments()),
			expires: p.now().Add(p.ttl), answered: make(chan struct{})}
		p.mu.Unlock()
		return mcpeffect.ConfirmReply{
			Ask:   &mcp.ElicitParams{Mode: "url", URL: pagePrefix + id, ElicitationID: id, Message: "Confirm " + call.Title + " on the page"},
			State: id,
		}, nil
	}
	p.mu.Lock()
	q := p.questions[call.State]
	p.mu.Unlock()
	if q == nil || q.binding != call.Binding {
		return mcpeffect.ConfirmReply{Answer: "invalid", Detail: "the state names no question about this call"}, nil
	}
	if call.Reply == nil || call.Reply.Action != "accept" {
		p.withdraw(call.State)
		return mcpeffect.ConfirmReply{Answer: "cancel", Detail: "the page was not opened"}, nil
	}
	select {
	case <-q.answered:
	case <-ctx.Done():
		p.withdraw(call.State)
		return mcpeffect.ConfirmReply{}, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case q.used:
		return mcpeffect.ConfirmReply{Answer: "invalid", Detail: "the answer was used already"}, nil
	case !p.now().Before(q.expires):
		return mcpeffect.ConfirmReply{Answer: "cancel", Detail: "the question expired"}, nil
	}
	q.used = true
	return mcpeffect.ConfirmReply{Answer: q.answer, Detail: "answered on the page"}, nil
}

// answer is the person's answer on the page; it fails for a question that
// is over.
func (p *page) answer(id string, yes bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.questions[id]
	switch {
	case q == nil || q.withdrawn:
		return errors.New("no such question")
	case q.answer != "":
		return errors.New("answered already")
	case !p.now().Before(q.expires):
		return errors.New("expired")
	}
	q.answer = "decline"
	if yes {
		q.answer = "accept"
	}
	close(q.answered)
	return nil
}

func (p *page) withdraw(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if q := p.questions[id]; q != nil {
		q.withdrawn = true
	}
}

// open reports the questions neither answered nor withdrawn.
func (p *page) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, q := range p.questions {
		if q.answer == "" && !q.withdrawn {
			n++
		}
	}
	return n
}

// host is a client that opens each page it is sent to, where the person
// answers yes (or no); it accepts the elicitation, since it did open the
// page, or declines to open it.
type pageHost struct {
	p        *page
	personOK bool // the person's answer on the page
	open     bool // the host opens the page
	mu       sync.Mutex
	seen     []*mcp.ElicitParams
}

func (h *pageHost) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	h.mu.Lock()
	h.seen = append(h.seen, req.Params)
	h.mu.Unlock()
	if !h.open {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	if err := h.p.answer(strings.TrimPrefix(req.Params.URL, pagePrefix), h.personOK); err != nil {
		return nil, err
	}
	return &mcp.ElicitResult{Action: "accept"}, nil
}

func (h *pageHost) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities:       &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: h.handler,
	}
}

func (h *pageHost) asked() []*mcp.ElicitParams {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*mcp.ElicitParams(nil), h.seen...)
}

// testClock is a clock that only the test moves.
type testClock struct{ ms atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ms.Store(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC).UnixMilli())
	return c
}

func (c *testClock) now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *testClock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// newPageServer returns the test tools behind a middleware whose
// confirmations p asks on its page, with opts besides.
func newPageServer(t *testing.T, p *page, opts mcpeffect.ConfirmOptions) (*mcp.Server, *calls, *[]mcpeffect.Decision) {
	t.Helper()
	opts.AskPerson = p.ask
	var mu sync.Mutex
	var decisions []mcpeffect.Decision
	s, _, c := newTestServer(t, &mcpeffect.MiddlewareOptions{Confirm: &opts, OnDecision: func(_ context.Context, d mcpeffect.Decision) {
		mu.Lock()
		defer mu.Unlock()
		if d.Answer != "" {
			decisions = append(decisions, d)
		}
	}})
	return s, c, &decisions
}

// TestAskPersonOnPage asks on a server's page on both protocols: the
// client is sent there by a URL-mode elicitation (a request of the
// server's before 2026-07-28, an input request from it), and the call
// runs on the person's yes on the page alone; a no there, a host that
// will not open the page, and a client that cannot open one refuse it,
// and leave no question open.
func TestAskPersonOnPage(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	for _, protocol := range []string{legacyProtocol, modernProtocol} {
		for _, c := range []struct {
			name       string
			personOK   bool
			hostOpens  bool
			canOpen    bool
			wantAnswer string // "" for run
		}{
			{"the person confirms", true, true, true, ""},
			{"the person declines on the page", false, true, true, "decline"},
			{"the host will not open the page", true, false, true, "cancel"},
			{"a client that cannot open a page", true, true, false, "unsupported"},
		} {
			t.Run(protocol+"/"+c.name, func(t *testing.T) {
				clock := newTestClock()
				p := newPage(clock.now)
				s, calls, decisions := newPageServer(t, p, mcpeffect.ConfirmOptions{})
				h := &pageHost{p: p, personOK: c.personOK, open: c.hostOpens}
				opts := h.options()
				if !c.canOpen {
					opts.Capabilities = nil // a form at most
				}
				cs := connectAs(t, ctx, s, opts, protocol)
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "7"}})
				ran := calls.count("delete_task")
				if c.wantAnswer == "" {
					if err != nil || ran != 1 {
						t.Fatalf("err %v, ran %d times; want it run once", err, ran)
					}
				} else if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != c.wantAnswer || n.Tool != "delete_task" || ran != 0 {
					t.Fatalf("err %v, ran %d times; want it refused, %s", err, ran, c.wantAnswer)
				}
				if n := p.open(); n != 0 {
					t.Errorf("%d questions still open on the page", n)
				}
				asked := h.asked()
				if c.canOpen && (len(asked) != 1 || asked[0].Mode != "url" || !strings.HasPrefix(asked[0].URL, pagePrefix) || asked[0].ElicitationID == "") {
					t.Errorf("the host was asked %+v, want one URL-mode elicitation to the page", asked)
				}
				want := c.wantAnswer
				if want == "" {
					want = "accept"
				}
				if got := *decisions; len(got) != 1 || got[0].Answer != want {
					t.Errorf("decisions told of %+v, want one answered %q", got, want)
				}
				// Questions that do not need a person are not put.
				if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_task", Arguments: taskArgs{ID: "7"}}); err != nil || calls.count("create_task") != 1 {
					t.Errorf("create_task: %v", err)
				}
			})
		}
	}
}

// TestAskPersonInputRequest: on 2026-07-28 the question on the page is an
// input request, a URL-mode elicitation whose message shows what it
// says, with the state AskPerson gave, and a structured denial whose
// hint is the draft's url.
func TestAskPersonInputRequest(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	p := newPage(newTestClock().now)
	s := mcp.NewServer(&mcp.Implementation{Name: "titles", Version: "v1"}, nil)
	r := mcpeffect.NewRegistry()
	s.AddReceivingMiddleware(r.Middleware(&mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{AskPerson: p.ask}}))
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "delete_task", Title: "Delete \u202etask"}, mcpeffect.Destructive,
		func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	h := &pageHost{p: p, open: true}
	opts := h.options()
	opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	cs := connectAs(t, ctx, s, opts, modernProtocol)
	res, err := rawCall(t, cs, "delete_task", taskArgs{ID: "7"}, "", "")
	if err != nil || !res.NeedsInput() {
		t.Fatalf("%+v, %v; want an input request", res, err)
	}
	q, ok := res.InputRequests["mcpeffect/confirm"].(*mcp.ElicitParams)
	if !ok || q.Mode != "url" || q.URL != pagePrefix+res.RequestState || q.Message != `Confirm Delete \u202etask on the page` {
		t.Errorf("input requests %+v, state %q", res.InputRequests, res.RequestState)
	}
	raw, _ := json.Marshal(res.Meta[mcpeffect.AuthorizationMetaKey])
	var denial mcpeffect.AuthorizationDenial
	if json.Unmarshal(raw, &denial) != nil || denial.Remediation != mcpeffect.RemediationAvailable ||
		len(denial.RemediationHints) != 1 || denial.RemediationHints[0].Type != "url" {
		t.Errorf("the asking result's _meta %s, want remediation available by a url", raw)
	}
}

// TestAskPersonAttacks plays a client that lies on 2026-07-28, where the
// state of a question and the client's answer come with a call of its
// own: a state sent with other arguments, by another caller, made up,
// used again once its call ran, or after the question expired; an accept
// sent on a first call. None runs the handler, and the honest call runs
// once.
func TestAskPersonAttacks(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	clock := newTestClock()
	p := newPage(clock.now)
	s, c, _ := newPageServer(t, p, mcpeffect.ConfirmOptions{})
	noLoop := (&pageHost{p: p}).options()
	noLoop.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	cs := connectAs(t, ctx, s, noLoop, modernProtocol)
	other := connectAs(t, ctx, s, noLoop, modernProtocol)
	seven := taskArgs{ID: "7"}

	// confirmed returns the state of a question about a call of tool with
	// args by cs, which the person has confirmed on the page.
	confirmed := func(cs *mcp.ClientSession, tool string, args any) string {
		t.Helper()
		res, err := rawCall(t, cs, tool, args, "", "")
		if err != nil || !res.NeedsInput() || res.RequestState == "" {
			t.Fatalf("first call of %s: %+v, %v; want an input request", tool, res, err)
		}
		if err := p.answer(res.RequestState, true); err != nil {
			t.Fatal(err)
		}
		return res.RequestState
	}
	for _, tt := range []struct {
		name   string
		call   func() (*mcp.CallToolResult, error)
		answer string // "" for asked again
		detail string
	}{
		{"an accept on a first call", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "delete_task", seven, "", "accept")
		}, "", ""},
		{"a made-up state", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "delete_task", seven, "q999", "accept")
		}, "invalid", "no question about this call"},
		{"the state of other arguments", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "delete_task", taskArgs{ID: "8"}, confirmed(cs, "delete_task", seven), "accept")
		}, "invalid", "no question about this call"},
		{"the state of another tool", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "rotate_link", seven, confirmed(cs, "delete_task", seven), "accept")
		}, "invalid", "no question about this call"},
		{"the state of another caller", func() (*mcp.CallToolResult, error) {
			return rawCall(t, other, "delete_task", seven, confirmed(cs, "delete_task", seven), "accept")
		}, "invalid", "no question about this call"},
		{"a state without the host's answer", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "delete_task", seven, confirmed(cs, "delete_task", seven), "")
		}, "cancel", "not opened"},
		{"a state whose question expired", func() (*mcp.CallToolResult, error) {
			state := confirmed(cs, "delete_task", seven)
			clock.advance(p.ttl)
			return rawCall(t, cs, "delete_task", seven, state, "accept")
		}, "cancel", "expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.call()
			if c.count("delete_task")+c.count("rotate_link") != 0 {
				t.Fatalf("a handler ran")
			}
			if tt.answer == "" {
				if err != nil || !res.NeedsInput() {
					t.Errorf("%+v, %v; want the person asked", res, err)
				}
				return
			}
			n, ok := mcpeffect.AsNotConfirmedError(err)
			if !ok || n.Answer != tt.answer || !strings.Contains(n.Detail, tt.detail) {
				t.Errorf("err %v; want %s: %s", err, tt.answer, tt.detail)
			}
		})
	}

	// The honest round, its arguments spaced and ordered otherwise: the
	// same call, run once; the state used again is refused.
	state := confirmed(cs, "delete_task", seven)
	if res, err := rawCall(t, cs, "delete_task", json.RawMessage(` { "id" : "7" } `), state, "accept"); err != nil || res.IsError || c.count("delete_task") != 1 {
		t.Fatalf("the honest retry: %+v, %v, ran %d times", res, err, c.count("delete_task"))
	}
	_, err := rawCall(t, cs, "delete_task", seven, state, "accept")
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "invalid" || !strings.Contains(n.Detail, "used already") || c.count("delete_task") != 1 {
		t.Errorf("the replay: %v, ran %d times", err, c.count("delete_task"))
	}
}

// TestAskPersonBinding: the Binding that AskPerson sees is the same for
// the same call however its arguments are written, and differs for other
// arguments, another tool, another caller and another scope; its
// canonical arguments are what the handler acts on.
func TestAskPersonBinding(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]*mcpeffect.ConfirmCall{}
	ask := func(_ context.Context, call *mcpeffect.ConfirmCall) (mcpeffect.ConfirmReply, error) {
		mu.Lock()
		defer mu.Unlock()
		seen[call.Request.Params.Meta["label"].(string)] = call
		return mcpeffect.ConfirmReply{Answer: "decline"}, nil
	}
	s, _, _ := newTestServer(t, &mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{
		AskPerson: ask,
		Ask:       func(_ string, e mcpeffect.Effect) bool { return e&mcpeffect.Write != 0 },
	}})
	full := connectAs(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s, nil, modernProtocol)
	other := connectAs(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s, nil, modernProtocol)
	for _, c := range []struct {
		label string
		cs    *mcp.ClientSession
		tool  string
		args  any
	}{
		{"plain", full, "create_task", json.RawMessage(`{"id":"7"}`)},
		{"spaced, given twice", full, "create_task", json.RawMessage(` { "id" : "6" , "id":"7" } `)},
		{"other arguments", full, "create_task", json.RawMessage(`{"id":"8"}`)},
		{"another tool", full, "post_message", json.RawMessage(`{"id":"7"}`)},
		{"another caller", other, "create_task", json.RawMessage(`{"id":"7"}`)},
	} {
		_, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args, Meta: mcp.Meta{"label": c.label}})
		if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "decline" {
			t.Fatalf("%s: %v", c.label, err)
		}
	}
	plain := seen["plain"]
	if plain.Binding == ([32]byte{}) || string(plain.CanonicalArguments()) != `{"id":"7"}` || plain.Title != "" || plain.Effect != mcpeffect.Write {
		t.Fatalf("the plain call: %+v", plain)
	}
	if got := seen["spaced, given twice"]; got.Binding != plain.Binding || string(got.CanonicalArguments()) != `{"id":"7"}` {
		t.Errorf("the same call written otherwise: %s, binding equal %t", got.CanonicalArguments(), got.Binding == plain.Binding)
	}
	for _, label := range []string{"other arguments", "another tool", "another caller"} {
		if seen[label].Binding == plain.Binding {
			t.Errorf("%s: the same Binding", label)
		}
	}
}

// TestAskPersonAfterSchema: the arguments a tool's schema refuses get
// go-sdk's own refusal, and no person is asked; an error of AskPerson's
// is the call's, as its handler's would be.
func TestAskPersonAfterSchema(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	var asked atomic.Int32
	var fail atomic.Bool
	s, _, c := newTestServer(t, &mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{
		AskPerson: func(context.Context, *mcpeffect.ConfirmCall) (mcpeffect.ConfirmReply, error) {
			asked.Add(1)
			if fail.Load() {
				return mcpeffect.ConfirmReply{}, errors.New("too many calls wait for a person already: try again later")
			}
			return mcpeffect.ConfirmReply{Answer: "accept"}, nil
		},
	}})
	cs := connectAs(t, ctx, s, nil, legacyProtocol)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: map[string]any{"id": 42}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `validating "arguments"`) || asked.Load() != 0 {
		t.Errorf("arguments the schema refuses: %+v, %v, asked %d times", res, err, asked.Load())
	}
	fail.Store(true)
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "7"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "try again later") || c.count("delete_task") != 0 {
		t.Errorf("AskPerson failing: %+v, %v", res, err)
	}
}

// TestAskPersonLegacyFailures: before 2026-07-28, an elicitation request
// that fails refuses the call as failed, and AskPerson hears of it, so
// that it withdraws its question; an AskPerson that would ask after every
// answer is stopped; a client that cannot be asked runs the call
// unconfirmed where the options say so.
func TestAskPersonLegacyFailures(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	t.Run("the elicitation fails", func(t *testing.T) {
		p := newPage(newTestClock().now)
		s, c, _ := newPageServer(t, p, mcpeffect.ConfirmOptions{})
		opts := (&pageHost{p: p}).options()
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("the host has no browser")
		}
		cs := connectAs(t, ctx, s, opts, legacyProtocol)
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "7"}})
		if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "failed" || !strings.Contains(n.Detail, "no browser") || c.count("delete_task") != 0 {
			t.Errorf("err %v", err)
		}
		if n := p.open(); n != 0 {
			t.Errorf("%d questions left open", n)
		}
	})
	t.Run("asking without end", func(t *testing.T) {
		var asks atomic.Int32
		s, _, c := newTestServer(t, &mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{
			AskPerson: func(context.Context, *mcpeffect.ConfirmCall) (mcpeffect.ConfirmReply, error) {
				asks.Add(1)
				return mcpeffect.ConfirmReply{Ask: &mcp.ElicitParams{Message: "again?", RequestedSchema: nil}, State: "s"}, nil
			},
		}})
		cs := connectAs(t, ctx, s, &mcp.ClientOptions{ElicitationHandler: (&person{answer: "accept"}).handler}, legacyProtocol)
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "7"}})
		if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "failed" || c.count("delete_task") != 0 || asks.Load() != 4 {
			t.Errorf("err %v, asked %d times", err, asks.Load())
		}
	})
	t.Run("a reply that says nothing", func(t *testing.T) {
		for _, reply := range []mcpeffect.ConfirmReply{{}, {Ask: &mcp.ElicitParams{Message: "no state"}}} {
			s, _, c := newTestServer(t, &mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{
				AskPerson: func(context.Context, *mcpeffect.ConfirmCall) (mcpeffect.ConfirmReply, error) { return reply, nil },
			}})
			for _, protocol := range []string{legacyProtocol, modernProtocol} {
				cs := connectAs(t, ctx, s, &mcp.ClientOptions{ElicitationHandler: (&person{answer: "accept"}).handler}, protocol)
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "7"}})
				if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "failed" || c.count("delete_task") != 0 {
					t.Errorf("%s, %+v: %v", protocol, reply, err)
				}
			}
		}
	})
	t.Run("run if the client cannot ask", func(t *testing.T) {
		p := newPage(newTestClock().now)
		s, c, decisions := newPageServer(t, p, mcpeffect.ConfirmOptions{RunIfClientCannotAsk: true})
		cs := connectAs(t, ctx, s, nil, legacyProtocol)
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "7"}}); err != nil || c.count("delete_task") != 1 {
			t.Errorf("err %v", err)
		}
		if got := *decisions; len(got) != 1 || got[0].Answer != "unasked" {
			t.Errorf("decisions %+v, want one unasked", got)
		}
	})
}
