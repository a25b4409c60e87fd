package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// Confirmation through the page (serve -confirm url): where the form mode
// (confirm.go) asks through the host, which could answer for the person,
// the URL mode sends the person to Done's own page, with a URL-mode
// elicitation (MCP 2025-11-25). The host only opens the address (or
// shows it); the person signs in to the page if need be, reads the
// question, and confirms or declines there, out of the host's reach. The
// call waits for the answer in the store, where any process serving the
// data may have written it, and runs only on a yes.
//
// The confirmation is bound to the call: its caller's token, its tool,
// its arguments and a deadline, in the store; it is answered once, before
// the deadline, by the person the caller acts for, who must hold a scope
// that permits the call (see [store.Confirmation]), and used once, by
// this call, before the deadline too.

// urlConfirmTTL is how long a call waits for the person's answer.
const urlConfirmTTL = 10 * time.Minute

// maxConfirmWaits is how many calls may wait for a person's answer on
// the page at once in one process, whoever makes them; a tree of tokens
// may have store.MaxOpenConfirmations of them. A waiting call holds its
// request and a goroutine, and no turn of the admission queue.
const maxConfirmWaits = 128

// urlConfirmModes are the values of serve -confirm that confirm through
// the page, with the calls they confirm.
var urlConfirmModes = map[string]func(mcpeffect.Effect) bool{
	"url":        confirmModes["destructive"],
	"url-writes": confirmModes["writes"],
}

// urlConfirm returns receiving middleware that, for each call for which
// confirm is true, asks the person on the page before it runs. It comes
// after [done.identify], which finds the caller.
//
// Nothing of a call is kept before its tool's schema has accepted its
// arguments, as go-sdk checks them before the handler runs: a call the
// schema refuses gets go-sdk's own tool error, and no person is asked.
// What is kept is bounded (see [store.RequestConfirmation]), and so are
// the calls that wait (see [confirmWaits]); a call past a bound is
// refused with a tool error that says to try again, as a write past its
// rate is.
func (d *done) urlConfirm(registry *mcpeffect.Registry, confirm func(mcpeffect.Effect) bool) mcp.Middleware {
	infos := d.toolInfos(registry)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if method != "tools/call" || !ok || p == nil {
				return next(ctx, method, req)
			}
			e, ok := registry.Effect(p.Name)
			if !ok {
				return next(ctx, method, req) // unknown tools are refused below
			}
			if r, ok := registry.Rule(p.Name); ok {
				if e, ok = r.CallEffect(p.Arguments); !ok {
					e = r.Worst()
				}
			}
			if !confirm(e) {
				return next(ctx, method, req)
			}
			refused := func(answer, detail string) error {
				n := &mcpeffect.NotConfirmedError{Tool: p.Name, Effect: e, Answer: answer, Detail: detail}
				code, msg, data := n.JSONRPCError()
				return &jsonrpc.Error{Code: code, Message: msg, Data: data}
			}
			call, ok := req.(*mcp.CallToolRequest)
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if !ok || ss == nil {
				return nil, refused("unsupported", "no session to ask through")
			}
			if d.baseURL == "" {
				return nil, refused("unsupported", "confirmation on the page needs Done served over HTTP (serve -http), where the page is")
			}
			if caps := call.ClientCapabilities(); caps == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil {
				return nil, refused("unsupported", "the client cannot send the person to a page (it declared no URL elicitation); serve with -confirm destructive to ask through the client instead")
			}
			info := infos.tool(p.Name)
			if info == nil {
				// Every tool is added with addTool, which keeps its schema.
				return nil, refused("failed", "Done knows no schema of this tool to check its arguments with")
			}
			accepted, err := acceptedArguments(info, p.Arguments)
			if err != nil {
				return toolErrorResult(err.Error()), nil
			}
			if len(accepted) > store.MaxConfirmationArguments {
				return toolErrorResult(fmt.Sprintf("done: tool %q refused: the arguments of a call confirmed on the page may take at most %d KiB written compactly, "+
					"and these take %d KiB: make the call with less, or ask Done's operator for -confirm destructive, where the host asks the person",
					p.Name, store.MaxConfirmationArguments>>10, (len(accepted)+1023)>>10)), nil
			}
			k := callerToken(ctx)
			binding := callBinding(p.Name, p.Arguments)
			q := confirmQuestion{tool: p.Name, title: info.title, effect: e, arguments: accepted, binding: binding}
			if sessionlessCall(ss) {
				return d.confirmByInput(ctx, next, method, call, k, q, refused)
			}
			leave, busy := d.waits.enter(k)
			if busy != "" {
				return toolErrorResult(fmt.Sprintf("done: tool %q refused: %s", p.Name, busy)), nil
			}
			defer leave()
			c, err := d.requestConfirmation(ctx, k, q)
			if err != nil {
				return d.refusedRequest(ctx, p.Name, err)
			}
			// Unless the call uses the answer, no answer may come: the
			// page must not ask the person about a call that is over.
			used := false
			defer func() {
				if !used {
					if err := d.store.WithdrawConfirmation(context.WithoutCancel(ctx), k.Actor(), c.ID); err != nil {
						d.logger.ErrorContext(ctx, "withdrawing a confirmation", "id", c.ID, "err", err)
					}
				}
			}()
			res, err := ss.Elicit(ctx, d.pageElicitation(c))
			if err != nil {
				return nil, refused("failed", err.Error())
			}
			if res.Action != "accept" {
				// The person would not open the page: the call does not
				// run, whatever is answered there later.
				return nil, refused(res.Action, "the person did not open the confirmation page")
			}
			st, err := d.store.AwaitConfirmation(ctx, c.ID)
			if err != nil {
				return nil, d.check(ctx, err)
			}
			_ = ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: c.ID})
			used = true // useAnswer uses it, or it is over
			if err := d.useAnswer(ctx, k, st, binding, refused); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		}
	}
}

// toolErrorResult is a tool call's result that reports msg as its error: how
// go-sdk answers arguments the schema refuses, and Done a call past one
// of its bounds.
func toolErrorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// acceptedArguments returns the arguments args of a call of the tool
// info as its schema accepts them, in compact JSON, keys in order, with
// the schema's defaults applied: what go-sdk does with them before the
// tool's handler runs, and the same error, word for word, when the
// schema refuses them.
func acceptedArguments(info *toolInfo, args json.RawMessage) ([]byte, error) {
	resolved, err := info.inputSchema()
	if err != nil {
		return nil, fmt.Errorf("done: the input schema of the tool: %w", err)
	}
	// As go-sdk reads them: one object, decoded with segmentio's decoder,
	// whose keys match exactly.
	v := map[string]any{}
	if len(args) > 0 {
		dec := segjson.NewDecoder(bytes.NewReader(args))
		dec.DontMatchCaseInsensitiveStructFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
		}
	}
	var value any = v
	if err := resolved.ApplyDefaults(&value); err != nil {
		return nil, fmt.Errorf("validating \"arguments\": applying schema defaults:\n%w", err)
	}
	if err := resolved.Validate(&value); err != nil {
		return nil, fmt.Errorf("validating \"arguments\": %w", err)
	}
	return json.Marshal(value)
}

// A confirmQuestion is what a confirmation asks about: a call of tool
// (titled title) of effect e, with the arguments its schema accepted, and
// its binding (see [callBinding]).
type confirmQuestion struct {
	tool, title string
	effect      mcpeffect.Effect
	arguments   []byte
	binding     []byte
}

// refusedRequest answers a call whose confirmation the store would not
// keep: a refusal (a bound reached, arguments it would not keep) as a
// tool error that says why, anything else as [done.check] does.
func (d *done) refusedRequest(ctx context.Context, tool string, err error) (mcp.Result, error) {
	if refusal.CodeOf(err) != 0 {
		return toolErrorResult(fmt.Sprintf("done: tool %q refused: %v", tool, err)), nil
	}
	return nil, d.check(ctx, err)
}

// confirmWaits bounds the calls that wait for a person's answer on the
// page: perTree at once for the tokens that descend from one token of
// the command line (as the write rate is, so that minting tokens does
// not multiply it), and inAll at once in the process. It is safe for
// concurrent use.
type confirmWaits struct {
	perTree, inAll int

	mu    sync.Mutex
	trees map[string]int
	all   int
}

func newConfirmWaits(perTree, inAll int) *confirmWaits {
	return &confirmWaits{perTree: perTree, inAll: inAll, trees: map[string]int{}}
}

// enter counts one more call of k waiting, and returns what ends its
// wait; or, past a bound, a refusal that says which and to try again.
func (w *confirmWaits) enter(k store.Token) (leave func(), refused string) {
	tree := cmp.Or(k.Root, k.ID)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.trees[tree] >= w.perTree:
		return nil, fmt.Sprintf("%d calls of this token, with those minted from the same command-line token, wait for a person's answer on the page already, "+
			"the most Done lets wait at once: try again once the person has answered one, or it has expired (each waits at most %v)", w.trees[tree], urlConfirmTTL)
	case w.all >= w.inAll:
		return nil, fmt.Sprintf("%d calls wait for a person's answer on the page of this server already, the most it lets wait at once: try again in a few seconds", w.all)
	}
	w.trees[tree]++
	w.all++
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.trees[tree]--; w.trees[tree] == 0 {
			delete(w.trees, tree)
		}
		w.all--
	}, ""
}

// sessionlessCall reports whether the client of ss speaks the 2026-07-28
// protocol, where a server sends no request of its own: it asks through
// input requests instead, as go-sdk decides it.
func sessionlessCall(ss *mcp.ServerSession) bool {
	v := firstSessionlessProtocol // go-sdk's, without initialize parameters
	if p := ss.InitializeParams(); p != nil {
		v = p.ProtocolVersion
	}
	return v >= firstSessionlessProtocol
}

// requestConfirmation records in the store the confirmation of q by the
// token k: the question the page will put to the person.
func (d *done) requestConfirmation(ctx context.Context, k store.Token, q confirmQuestion) (store.Confirmation, error) {
	question := d.question(ctx, &mcpeffect.ConfirmCall{Tool: q.tool, Title: q.title, Effect: q.effect, Arguments: q.arguments})
	if question == "" {
		question = fmt.Sprintf("Call %s (%s)?", orName(q.title, q.tool), q.effect)
	}
	return d.store.RequestConfirmation(ctx, k.Actor(), store.NewConfirmation{
		Tool: q.tool, Effect: q.effect, Binding: q.binding, Question: shorten(question, store.MaxQuestion),
		Arguments: q.arguments, TTL: urlConfirmTTL,
	})
}

// shorten returns s cut to at most max characters, the last of them an
// ellipsis, if it is longer: a question quotes names, whose escapes can
// make it long; the page shows the arguments whole below it.
func shorten(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// pageElicitation is the URL-mode elicitation that sends the person to
// the page of confirmation c.
func (d *done) pageElicitation(c store.Confirmation) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode:          "url",
		Message:       "Done asks you to confirm a call on its page, where only you can answer: " + web.Visible(c.Question),
		URL:           d.baseURL + web.ConfirmPath + c.ID,
		ElicitationID: c.ID,
	}
}

// useAnswer uses the answer of the confirmation st, for the call of k
// bound to binding, and returns nil if the person confirmed it there
// before its deadline, or the error that refuses the call.
func (d *done) useAnswer(ctx context.Context, k store.Token, st store.ConfirmationState, binding []byte, refused func(answer, detail string) error) error {
	if st.Answer == "" {
		if err := d.store.WithdrawConfirmation(context.WithoutCancel(ctx), k.Actor(), st.ID); err != nil {
			d.logger.ErrorContext(ctx, "withdrawing a confirmation", "id", st.ID, "err", err)
		}
		if st.UsedAt != "" {
			return refused("cancel", "the confirmation was withdrawn, unanswered")
		}
		return refused("cancel", "no answer on the page by "+st.ExpiresAt)
	}
	st, err := d.store.UseConfirmation(ctx, k.Actor(), st.ID, binding)
	switch {
	case errors.Is(err, store.ErrConfirmationUsed):
		return refused("invalid", "the answer was used by another call")
	case errors.Is(err, store.ErrConfirmationExpired):
		// Answered in time, or not: past its deadline an answer is good
		// for nothing, on either protocol.
		return refused("cancel", err.Error()+": make the call again to ask the person again")
	case refusal.CodeOf(err) != 0:
		// Another call's confirmation (other arguments): refused, and
		// left for the call it was made for.
		return refused("invalid", err.Error())
	case err != nil:
		return d.check(ctx, err)
	case st.Answer != store.Accepted:
		return refused("decline", "declined on the page by "+st.AnsweredBy)
	}
	return nil
}

// pageInput is the id of the input request that sends the person to the
// page, on the 2026-07-28 protocol.
const pageInput = "done_confirm_page"

// confirmByInput confirms a call on the 2026-07-28 protocol, where Done
// cannot send the client a request: the call is answered with an input
// request, a URL-mode elicitation to the page, and a request state, the
// confirmation's id; the client sends the person there and calls again
// with the state and its answer (that the person went). That call, which
// any replica of the store may serve, waits for the person's answer on
// the page, as a call with a session does, and runs only on a yes given
// before the confirmation's deadline.
//
// The state needs no signature: it names a confirmation that the store
// binds to the caller's token, the tool and the arguments, and that is
// used once, before its deadline. Another caller, or other arguments,
// with the same state are refused; a made-up state names nothing.
func (d *done) confirmByInput(ctx context.Context, next mcp.MethodHandler, method string, call *mcp.CallToolRequest, k store.Token, q confirmQuestion, refused func(answer, detail string) error) (mcp.Result, error) {
	p := call.Params
	if p.RequestState == "" {
		c, err := d.requestConfirmation(ctx, k, q)
		if err != nil {
			return d.refusedRequest(ctx, p.Name, err)
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{pageInput: d.pageElicitation(c)},
			RequestState:  c.ID,
		}, nil
	}
	st, err := d.store.GetConfirmationState(ctx, p.RequestState)
	if store.Transient(err) {
		// The state may be good: the call may be made again with it.
		return nil, d.check(ctx, err)
	}
	if err != nil || st.TokenID != k.ID {
		// Not a confirmation, or another caller's: the state is not
		// this call's, and says nothing of whose it is.
		return nil, refused("invalid", "the request state names no confirmation of this caller")
	}
	answer, ok := p.InputResponses[pageInput].(*mcp.ElicitResult)
	if !ok || answer == nil || answer.Action != "accept" {
		if err := d.store.WithdrawConfirmation(context.WithoutCancel(ctx), k.Actor(), st.ID); err != nil {
			d.logger.ErrorContext(ctx, "withdrawing a confirmation", "id", st.ID, "err", err)
		}
		action := "cancel"
		if ok && answer != nil && answer.Action != "" {
			action = answer.Action
		}
		return nil, refused(action, "the person did not open the confirmation page")
	}
	leave, busy := d.waits.enter(k)
	if busy != "" {
		return toolErrorResult(fmt.Sprintf("done: tool %q refused: %s", p.Name, busy)), nil
	}
	defer leave()
	st, err = d.store.AwaitConfirmation(ctx, st.ID)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			return nil, d.check(ctx, err)
		}
		// The client gave up waiting: the page must no longer ask.
		if err := d.store.WithdrawConfirmation(context.WithoutCancel(ctx), k.Actor(), st.ID); err != nil {
			d.logger.ErrorContext(ctx, "withdrawing a confirmation", "id", st.ID, "err", err)
		}
		return nil, err
	}
	if err := d.useAnswer(ctx, k, st, q.binding, refused); err != nil {
		return nil, err
	}
	return next(ctx, method, call)
}

// callBinding returns the digest of what an answer on the page is bound
// to, besides the caller, which the store holds: the tool and its
// arguments in canonical form.
func callBinding(tool string, args json.RawMessage) []byte {
	h := sha256.New()
	h.Write([]byte("done confirm url v1\x00"))
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canonical(args))
	return h.Sum(nil)
}

// canonical returns args with keys sorted and spaces gone, so that the
// same arguments bind the same however they are written; what is not
// one JSON value is kept as it is.
func canonical(args json.RawMessage) []byte {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return trimmed
	}
	out, err := json.Marshal(v)
	if err != nil {
		return trimmed
	}
	return out
}

func orName(title, name string) string {
	if title != "" {
		return title
	}
	return name
}
