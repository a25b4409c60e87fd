package mcpeffect_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The protocol versions a go-sdk client may speak: the last before
// multi-round-trip requests, where the server asks through an elicitation
// request of its own, and the first with them.
const (
	legacyProtocol = "2025-11-25"
	modernProtocol = "2026-07-28"
)

// person answers elicitations as a person would, with answer ("accept",
// "decline", "cancel"), and remembers the questions.
type person struct {
	answer string
	mu     sync.Mutex
	asked  []string
}

func (p *person) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Params.Message)
	return &mcp.ElicitResult{Action: p.answer}, nil
}

func (p *person) questions() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// newConfirmServer returns the test tools and the rule tools behind a
// middleware that asks for confirmation with opts.
func newConfirmServer(t testing.TB, opts *mcpeffect.ConfirmOptions) (*mcp.Server, *calls, *seen) {
	t.Helper()
	sn := &seen{args: map[string][]string{}}
	s, r, c := newTestServer(t, &mcpeffect.MiddlewareOptions{Confirm: opts})
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "resources"}, mcpeffect.EffectByArgument("action", resourceEffects),
		func(_ context.Context, _ *mcp.CallToolRequest, in resourceArgs) (*mcp.CallToolResult, any, error) {
			sn.add("resources", in.Action)
			return &mcp.CallToolResult{}, nil, nil
		})
	return s, c, sn
}

// TestConfirmAnswers asks a go-sdk client's person on both protocols,
// with every answer: the handler runs on accept alone.
func TestConfirmAnswers(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	for _, protocol := range []string{legacyProtocol, modernProtocol} {
		for _, answer := range []string{"accept", "decline", "cancel", "none"} {
			t.Run(protocol+"/"+answer, func(t *testing.T) {
				s, c, sn := newConfirmServer(t, &mcpeffect.ConfirmOptions{})
				p := &person{answer: answer}
				opts := &mcp.ClientOptions{ElicitationHandler: p.handler}
				if answer == "none" {
					opts = nil // no elicitation capability
				}
				cs := connectAs(t, ctx, s, opts, protocol)
				if got := cs.InitializeResult().ProtocolVersion; got != protocol {
					t.Fatalf("the session speaks %s", got)
				}
				for _, call := range []struct {
					tool string
					args any
					ask  bool // the call needs confirmation
				}{
					{"delete_task", taskArgs{ID: "7"}, true},
					{"rotate_link", taskArgs{ID: "7"}, true},
					{"create_task", taskArgs{ID: "7"}, false},
					{"get_task", taskArgs{ID: "7"}, false},
					{"resources", resourceArgs{Action: "get"}, false},
					{"resources", resourceArgs{Action: "delete", Name: "x"}, true},
				} {
					before := len(p.questions())
					_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
					ran := c.count(call.tool) > 0 || len(sn.take(call.tool)) > 0
					c.mu.Lock()
					delete(c.n, call.tool)
					c.mu.Unlock()
					asked := len(p.questions()) > before
					if asked != (call.ask && answer != "none") {
						t.Errorf("%s %v: asked %t", call.tool, call.args, asked)
					}
					if !call.ask || answer == "accept" {
						if err != nil || !ran {
							t.Errorf("%s %v: err %v, ran %t; want it run", call.tool, call.args, err, ran)
						}
						continue
					}
					n, ok := mcpeffect.AsNotConfirmedError(err)
					want := map[string]string{"decline": "decline", "cancel": "cancel", "none": "unsupported"}[answer]
					if ran || !ok || n.Tool != call.tool || n.Answer != want {
						t.Errorf("%s %v: err %v, ran %t; want not confirmed, %q", call.tool, call.args, err, ran, want)
						continue
					}
					for _, part := range []string{fmt.Sprintf("tool %q was not run", call.tool), map[string]string{
						"decline": "the person declined it", "cancel": "dismissed the confirmation", "unsupported": "the client cannot ask",
					}[want]} {
						if !strings.Contains(err.Error(), part) {
							t.Errorf("%s: message %q does not say %q", call.tool, err, part)
						}
					}
				}
				if answer != "none" {
					q := p.questions()
					if len(q) == 0 || !strings.Contains(q[0], `Allow the tool "delete_task" to run? It changes or deletes what exists. Arguments: {"id":"7"}`) {
						t.Errorf("questions %q", q)
					}
				}
			})
		}
	}
}

// TestConfirmAskingFails: a client whose person cannot be asked (its
// handler fails) gets a refusal that says so.
func TestConfirmAskingFails(t *testing.T) {
	s, c, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{})
	failing := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return nil, fmt.Errorf("no person at the keyboard")
	}
	cs := connectAs(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s, &mcp.ClientOptions{ElicitationHandler: failing}, legacyProtocol)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "1"}})
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "failed" || !strings.Contains(n.Detail, "no person at the keyboard") || c.count("delete_task") != 0 {
		t.Errorf("err %v", err)
	}
}

// TestConfirmOptions: the effects that need confirmation, the wording of
// the question, and going ahead where the client cannot ask.
func TestConfirmOptions(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	s, c, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{
		Ask: func(tool string, e mcpeffect.Effect) bool { return e&mcpeffect.Write != 0 && tool != "add_label" },
		Message: func(_ context.Context, call *mcpeffect.ConfirmCall) string {
			var in taskArgs
			json.Unmarshal(call.Arguments, &in)
			if call.Tool == "create_task" {
				return fmt.Sprintf("Create task %q (%s)?", in.ID, call.Effect)
			}
			return ""
		},
		RunIfClientCannotAsk: true,
	})
	p := &person{answer: "accept"}
	cs := connectAs(t, ctx, s, &mcp.ClientOptions{ElicitationHandler: p.handler}, modernProtocol)
	for _, tool := range []string{"create_task", "add_label", "post_message"} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: taskArgs{ID: "ship v2"}}); err != nil {
			t.Errorf("%s: %v", tool, err)
		}
	}
	q := p.questions()
	if len(q) != 2 || q[0] != `Create task "ship v2" (write)?` || !strings.Contains(q[1], `"post_message" to run? It adds data, outside this server`) {
		t.Errorf("questions %q", q)
	}
	// A client that cannot ask: the calls go ahead, as the author chose.
	plain := connectAs(t, ctx, s, nil, modernProtocol)
	if _, err := plain.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "1"}}); err != nil || c.count("delete_task") != 1 {
		t.Errorf("without elicitation, proceeding: %v", err)
	}
}

// rawCall makes a call on a client that does not answer input requests
// itself, so that the test sends what it likes.
func rawCall(t *testing.T, cs *mcp.ClientSession, tool string, args any, state string, answer string) (*mcp.CallToolResult, error) {
	t.Helper()
	params := &mcp.CallToolParams{Name: tool, Arguments: args, RequestState: state}
	if answer != "" {
		params.InputResponses = mcp.InputResponseMap{"mcpeffect/confirm": &mcp.ElicitResult{Action: answer}}
	}
	return cs.CallTool(context.Background(), params)
}

// TestConfirmCannotBeForgedOrReplayed plays a client that lies, on the
// 2026-07-28 protocol where the answer comes with a call of its own: an
// accept sent on a first call, a request state made up or altered, the
// state of one call given with another (other arguments, another tool,
// another caller), a state used twice. None runs the handler.
func TestConfirmCannotBeForgedOrReplayed(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	s, c, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{})
	noLoop := &mcp.ClientOptions{
		ElicitationHandler: (&person{answer: "accept"}).handler, // declares the capability
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}
	cs := connectAs(t, ctx, s, noLoop, modernProtocol)
	other := connectAs(t, ctx, s, noLoop, modernProtocol)
	seven := taskArgs{ID: "7"}

	// ask returns a fresh request state for a call of tool with args.
	ask := func(cs *mcp.ClientSession, tool string, args any) string {
		t.Helper()
		res, err := rawCall(t, cs, tool, args, "", "")
		if err != nil || !res.NeedsInput() || res.RequestState == "" {
			t.Fatalf("first call of %s: %+v, %v; want an input request", tool, res, err)
		}
		if _, ok := res.InputRequests["mcpeffect/confirm"].(*mcp.ElicitParams); !ok {
			t.Fatalf("input requests %+v", res.InputRequests)
		}
		return res.RequestState
	}
	tamper := func(state string) string {
		b, _ := base64.RawURLEncoding.DecodeString(state)
		b[20] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}

	for _, tt := range []struct {
		name    string
		call    func() (*mcp.CallToolResult, error)
		invalid string // "" for asked again, else the refusal's detail
	}{
		{"an accept on a first call", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "delete_task", seven, "", "accept")
		}, ""},
		{"a made-up state", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "delete_task", seven, "trust-me", "accept")
		}, "not one this server makes"},
		{"an altered state", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "delete_task", seven, tamper(ask(cs, "delete_task", seven)), "accept")
		}, "not signed by this server"},
		{"the state of other arguments", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "delete_task", taskArgs{ID: "8"}, ask(cs, "delete_task", seven), "accept")
		}, "another call"},
		{"the state of another tool", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "rotate_link", seven, ask(cs, "delete_task", seven), "accept")
		}, "another call"},
		{"the state of another caller", func() (*mcp.CallToolResult, error) {
			return rawCall(t, other, "delete_task", seven, ask(cs, "delete_task", seven), "accept")
		}, "another call"},
		{"a state without an answer", func() (*mcp.CallToolResult, error) {
			return rawCall(t, cs, "delete_task", seven, ask(cs, "delete_task", seven), "")
		}, "carries no answer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.call()
			if c.count("delete_task")+c.count("rotate_link") != 0 {
				t.Fatalf("a handler ran")
			}
			if tt.invalid == "" {
				if err != nil || !res.NeedsInput() {
					t.Errorf("%+v, %v; want the person asked", res, err)
				}
				return
			}
			n, ok := mcpeffect.AsNotConfirmedError(err)
			if !ok || n.Answer != "invalid" || !strings.Contains(n.Detail, tt.invalid) {
				t.Errorf("err %v; want an invalid answer: %s", err, tt.invalid)
			}
		})
	}

	// The honest round: the answer runs the call once, and only once.
	state := ask(cs, "delete_task", seven)
	// The same arguments, spaced and ordered otherwise, are the same call.
	if res, err := rawCall(t, cs, "delete_task", json.RawMessage(` { "id" : "7" } `), state, "accept"); err != nil || res.IsError || c.count("delete_task") != 1 {
		t.Fatalf("the honest retry: %+v, %v, ran %d times", res, err, c.count("delete_task"))
	}
	_, err := rawCall(t, cs, "delete_task", seven, state, "accept")
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || !strings.Contains(n.Detail, "accepted once already") || c.count("delete_task") != 1 {
		t.Errorf("the replay: %v, ran %d times", err, c.count("delete_task"))
	}
	// A decline with a good state refuses.
	_, err = rawCall(t, cs, "delete_task", seven, ask(cs, "delete_task", seven), "decline")
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "decline" {
		t.Errorf("a decline: %v", err)
	}
}

// TestConfirmLegacyIgnoresSentAnswers: before 2026-07-28 the server asks
// with a request of its own, and an answer or a state that a client puts
// in its call counts for nothing.
func TestConfirmLegacyIgnoresSentAnswers(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	s, c, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{})
	p := &person{answer: "decline"}
	cs := connectAs(t, ctx, s, &mcp.ClientOptions{ElicitationHandler: p.handler, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}, legacyProtocol)
	_, err := rawCall(t, cs, "delete_task", taskArgs{ID: "7"}, "any-state", "accept")
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "decline" || len(p.questions()) != 1 || c.count("delete_task") != 0 {
		t.Errorf("err %v, asked %d times, ran %d times; want the person asked, and their decline to count", err, len(p.questions()), c.count("delete_task"))
	}
}

// TestConfirmExpiryAndKeys: an answer that comes late is asked again; a
// state signed with the same key in another process (another middleware)
// is good there, and one signed with another key is not.
func TestConfirmExpiryAndKeys(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	key := []byte(strings.Repeat("k", 32))
	same := func(context.Context, *mcp.CallToolRequest) string { return "user-1" }
	noLoop := &mcp.ClientOptions{
		ElicitationHandler: (&person{answer: "accept"}).handler,
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}
	a, _, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{Key: key, Caller: same})
	b, cb, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{Key: key, Caller: same})
	other, co, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{Caller: same})
	// The clock of the late server is the test's: nothing sleeps.
	var clock atomic.Int64
	clock.Store(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC).UnixMilli())
	now := func() time.Time { return time.UnixMilli(clock.Load()) }
	late, cl, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{Expiry: time.Minute, Now: now})
	csA := connectAs(t, ctx, a, noLoop, modernProtocol)
	args := taskArgs{ID: "7"}
	first, err := rawCall(t, csA, "delete_task", args, "", "")
	if err != nil || !first.NeedsInput() {
		t.Fatal(err)
	}
	if _, err := rawCall(t, connectAs(t, ctx, other, noLoop, modernProtocol), "delete_task", args, first.RequestState, "accept"); err == nil || co.count("delete_task") != 0 {
		t.Errorf("another key: %v", err)
	}
	if _, err := rawCall(t, connectAs(t, ctx, b, noLoop, modernProtocol), "delete_task", args, first.RequestState, "accept"); err != nil || cb.count("delete_task") != 1 {
		t.Errorf("the same key and caller: %v", err)
	}

	csLate := connectAs(t, ctx, late, noLoop, modernProtocol)
	first, err = rawCall(t, csLate, "delete_task", args, "", "")
	if err != nil {
		t.Fatal(err)
	}
	clock.Add((time.Minute + time.Millisecond).Milliseconds())
	res, err := rawCall(t, csLate, "delete_task", args, first.RequestState, "accept")
	if err != nil || !res.NeedsInput() || res.RequestState == first.RequestState || cl.count("delete_task") != 0 {
		t.Errorf("a late answer: %+v, %v; want the person asked again", res, err)
	}

	for _, bad := range [][]byte{[]byte("short")} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "at least 32 are needed") {
					t.Errorf("key %q: panic %v", bad, p)
				}
			}()
			mcpeffect.NewRegistry().Middleware(&mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{Key: bad}})
		}()
	}
}

// TestConfirmQuestionShowsWhatItSays: text from the arguments or from
// the author's wording cannot disguise the question: controls, format
// characters (U+202E shows the text after it reversed; U+200B is
// invisible) and bytes that are not UTF-8 reach the person as escapes.
func TestConfirmQuestionShowsWhatItSays(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	for _, c := range []struct {
		name    string
		message string // what the author's Message returns; "" for the default
		args    taskArgs
		want    string // a part of the question
		notWant []string
	}{
		{"bidi override in the arguments", "", taskArgs{ID: "exe.\u202etxt"}, `exe.\u202etxt`, []string{"\u202e"}},
		{"zero-width space in the arguments", "", taskArgs{ID: "a\u200bb"}, `a\u200bb`, []string{"\u200b"}},
		{"bidi override in the wording", "Delete task \"\u202eevil\"?", taskArgs{ID: "1"}, `Delete task "\u202eevil"?`, []string{"\u202e"}},
		{"control characters in the wording", "Delete\x00 \x1b[2Jtask?", taskArgs{ID: "1"}, `Delete\u0000 \u001b[2Jtask?`, []string{"\x00", "\x1b"}},
		{"a byte that is not UTF-8", "Delete \xff?", taskArgs{ID: "1"}, `Delete \xff?`, []string{"\xff"}},
		{"what shows as itself stays", "Supprimer «ÉTÉ» 🗑\n\tet ses 3 étapes ?", taskArgs{ID: "1"}, "Supprimer «ÉTÉ» 🗑\n\tet ses 3 étapes ?", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{
				Message: func(context.Context, *mcpeffect.ConfirmCall) string { return c.message },
			})
			p := &person{answer: "accept"}
			for _, protocol := range []string{legacyProtocol, modernProtocol} {
				cs := connectAs(t, ctx, s, &mcp.ClientOptions{ElicitationHandler: p.handler}, protocol)
				if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: c.args}); err != nil {
					t.Fatalf("%s: %v", protocol, err)
				}
			}
			q := p.questions()
			if len(q) != 2 {
				t.Fatalf("asked %q, want once on each protocol", q)
			}
			for _, q := range q {
				if !strings.Contains(q, c.want) {
					t.Errorf("question %q does not contain %q", q, c.want)
				}
				for _, bad := range c.notWant {
					if strings.Contains(q, bad) {
						t.Errorf("question %q contains %q", q, bad)
					}
				}
			}
		})
	}
}

// TestConfirmCallTitle: the wording sees the tool's title, from its Title
// or else its annotations', so that it can ask in a person's words.
func TestConfirmCallTitle(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	s := mcp.NewServer(&mcp.Implementation{Name: "titles", Version: "v1"}, nil)
	r := mcpeffect.NewRegistry()
	s.AddReceivingMiddleware(r.Middleware(&mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{
		Message: func(_ context.Context, call *mcpeffect.ConfirmCall) string {
			return fmt.Sprintf("%s: title %q?", call.Tool, call.Title)
		},
	}}))
	for _, tool := range []*mcp.Tool{
		{Name: "both", Title: "Delete task", Annotations: &mcp.ToolAnnotations{Title: "Older title"}},
		{Name: "annotations", Annotations: &mcp.ToolAnnotations{Title: "Delete project"}},
		{Name: "none"},
	} {
		mcpeffect.AddTool(s, r, tool, mcpeffect.Destructive, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	p := &person{answer: "accept"}
	cs := connectAs(t, ctx, s, &mcp.ClientOptions{ElicitationHandler: p.handler}, modernProtocol)
	for _, tool := range []string{"both", "annotations", "none"} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	want := []string{`both: title "Delete task"?`, `annotations: title "Delete project"?`, `none: title ""?`}
	if got := p.questions(); !slices.Equal(got, want) {
		t.Errorf("questions %q, want %q", got, want)
	}
}

// sharedAnswers is an AnswerStore that several servers share, as the
// replicas of one service share a table.
type sharedAnswers struct {
	mu   sync.Mutex
	used map[string]time.Time
	fail bool
}

func (s *sharedAnswers) Use(_ context.Context, nonce []byte, expires time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return false, errors.New("the store is down")
	}
	if _, seen := s.used[string(nonce)]; seen {
		return false, nil
	}
	s.used[string(nonce)] = expires
	return true, nil
}

// TestConfirmSharedAnswers: an answer accepted by one process is refused
// by another that shares its store of used answers, and accepted by one
// that does not (each process then holds its own); a store that fails
// refuses the call.
func TestConfirmSharedAnswers(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	key := []byte(strings.Repeat("k", 32))
	same := func(context.Context, *mcp.CallToolRequest) string { return "user-1" }
	noLoop := &mcp.ClientOptions{
		ElicitationHandler: (&person{answer: "accept"}).handler,
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}
	store := &sharedAnswers{used: map[string]time.Time{}}
	a, ca, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{Key: key, Caller: same, Answers: store})
	b, cb, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{Key: key, Caller: same, Answers: store})
	alone, cAlone, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{Key: key, Caller: same})
	args := taskArgs{ID: "7"}
	first, err := rawCall(t, connectAs(t, ctx, a, noLoop, modernProtocol), "delete_task", args, "", "")
	if err != nil || !first.NeedsInput() {
		t.Fatal(err)
	}
	if _, err := rawCall(t, connectAs(t, ctx, a, noLoop, modernProtocol), "delete_task", args, first.RequestState, "accept"); err != nil || ca.count("delete_task") != 1 {
		t.Fatalf("the first answer: %v", err)
	}
	_, err = rawCall(t, connectAs(t, ctx, b, noLoop, modernProtocol), "delete_task", args, first.RequestState, "accept")
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "invalid" || !strings.Contains(n.Detail, "accepted once already") || cb.count("delete_task") != 0 {
		t.Errorf("replayed to a process sharing the store: %v", err)
	}
	if _, err := rawCall(t, connectAs(t, ctx, alone, noLoop, modernProtocol), "delete_task", args, first.RequestState, "accept"); err != nil || cAlone.count("delete_task") != 1 {
		t.Errorf("replayed to a process with a store of its own: %v (each process holds its own answers)", err)
	}
	store.fail = true
	second, err := rawCall(t, connectAs(t, ctx, a, noLoop, modernProtocol), "delete_task", args, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = rawCall(t, connectAs(t, ctx, a, noLoop, modernProtocol), "delete_task", args, second.RequestState, "accept")
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "invalid" || ca.count("delete_task") != 1 {
		t.Errorf("a store that fails: %v, want the call refused", err)
	}
}
