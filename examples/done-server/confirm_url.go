package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
// its arguments and a deadline, in the store; it is answered once, by the
// person the caller acts for (see [store.Confirmation]), and used once,
// by this call.

// urlConfirmTTL is how long a call waits for the person's answer.
const urlConfirmTTL = 10 * time.Minute

// urlConfirmPoll is how often a waiting call reads the store for the
// answer: a person does not notice a quarter of a second, and the read
// is one row by its key.
const urlConfirmPoll = 250 * time.Millisecond

// urlConfirmModes are the values of serve -confirm that confirm through
// the page, with the calls they confirm.
var urlConfirmModes = map[string]func(mcpeffect.Effect) bool{
	"url":        confirmModes["destructive"],
	"url-writes": confirmModes["writes"],
}

// urlConfirm returns receiving middleware that, for each call for which
// confirm is true, asks the person on the page before it runs. It comes
// after [done.identify], which finds the caller.
func (d *done) urlConfirm(registry *mcpeffect.Registry, confirm func(mcpeffect.Effect) bool) mcp.Middleware {
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
			k := callerToken(ctx)
			binding := callBinding(p.Name, p.Arguments)
			if sessionlessCall(ss) {
				return d.confirmByInput(ctx, next, method, call, e, k, binding, refused)
			}
			c, err := d.requestConfirmation(ctx, k, p, e, binding)
			if err != nil {
				return nil, d.check(ctx, err)
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
			c, err = d.awaitAnswer(ctx, c)
			if err != nil {
				return nil, d.check(ctx, err)
			}
			_ = ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: c.ID})
			used = true // useAnswer uses it, or it is over
			if err := d.useAnswer(ctx, k, c, binding, refused); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		}
	}
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

// requestConfirmation records in the store the confirmation of the call
// p, of effect e, by the token k, bound to binding: the question the page
// will put to the person.
func (d *done) requestConfirmation(ctx context.Context, k store.Token, p *mcp.CallToolParamsRaw, e mcpeffect.Effect, binding []byte) (store.Confirmation, error) {
	question := d.question(ctx, &mcpeffect.ConfirmCall{Tool: p.Name, Title: toolTitle(p.Name), Effect: e, Arguments: p.Arguments})
	if question == "" {
		question = fmt.Sprintf("Call %s (%s)?", orName(toolTitle(p.Name), p.Name), e)
	}
	return d.store.RequestConfirmation(ctx, k.Actor(), store.NewConfirmation{
		Tool: p.Name, Binding: binding, Question: question, Arguments: canonical(p.Arguments), TTL: urlConfirmTTL,
	})
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

// useAnswer uses c, answered, for the call of k bound to binding, and
// returns nil if the person confirmed it there, or the error that refuses
// the call.
func (d *done) useAnswer(ctx context.Context, k store.Token, c store.Confirmation, binding []byte, refused func(answer, detail string) error) error {
	if c.Answer == "" {
		if err := d.store.WithdrawConfirmation(context.WithoutCancel(ctx), k.Actor(), c.ID); err != nil {
			d.logger.ErrorContext(ctx, "withdrawing a confirmation", "id", c.ID, "err", err)
		}
		return refused("cancel", "no answer on the page by "+c.ExpiresAt)
	}
	c, err := d.store.UseConfirmation(ctx, k.Actor(), c.ID, binding)
	switch {
	case errors.Is(err, store.ErrConfirmationUsed):
		return refused("invalid", "the answer was used by another call")
	case refusal.CodeOf(err) != 0:
		// Another call's confirmation (other arguments): refused, and
		// left for the call it was made for.
		return refused("invalid", err.Error())
	case err != nil:
		return d.check(ctx, err)
	case c.Answer != store.Accepted:
		return refused("decline", "declined on the page by "+c.AnsweredBy)
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
// the page, as a call with a session does, and runs only on a yes.
//
// The state needs no signature: it names a confirmation that the store
// binds to the caller's token, the tool and the arguments, and that is
// used once. Another caller, or other arguments, with the same state are
// refused; a made-up state names nothing.
func (d *done) confirmByInput(ctx context.Context, next mcp.MethodHandler, method string, call *mcp.CallToolRequest, e mcpeffect.Effect, k store.Token, binding []byte, refused func(answer, detail string) error) (mcp.Result, error) {
	p := call.Params
	if p.RequestState == "" {
		c, err := d.requestConfirmation(ctx, k, p, e, binding)
		if err != nil {
			return nil, d.check(ctx, err)
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{pageInput: d.pageElicitation(c)},
			RequestState:  c.ID,
		}, nil
	}
	c, err := d.store.GetConfirmation(ctx, p.RequestState)
	if store.Transient(err) {
		// The state may be good: the call may be made again with it.
		return nil, d.check(ctx, err)
	}
	if err != nil || c.TokenID != k.ID {
		// Not a confirmation, or another caller's: the state is not
		// this call's, and says nothing of whose it is.
		return nil, refused("invalid", "the request state names no confirmation of this caller")
	}
	answer, ok := p.InputResponses[pageInput].(*mcp.ElicitResult)
	if !ok || answer == nil || answer.Action != "accept" {
		if err := d.store.WithdrawConfirmation(context.WithoutCancel(ctx), k.Actor(), c.ID); err != nil {
			d.logger.ErrorContext(ctx, "withdrawing a confirmation", "id", c.ID, "err", err)
		}
		action := "cancel"
		if ok && answer != nil && answer.Action != "" {
			action = answer.Action
		}
		return nil, refused(action, "the person did not open the confirmation page")
	}
	c, err = d.awaitAnswer(ctx, c)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			return nil, d.check(ctx, err)
		}
		// The client gave up waiting: the page must no longer ask.
		if err := d.store.WithdrawConfirmation(context.WithoutCancel(ctx), k.Actor(), c.ID); err != nil {
			d.logger.ErrorContext(ctx, "withdrawing a confirmation", "id", c.ID, "err", err)
		}
		return nil, err
	}
	if err := d.useAnswer(ctx, k, c, binding, refused); err != nil {
		return nil, err
	}
	return next(ctx, method, call)
}

// awaitAnswer reads c from the store until it is answered, it expires,
// or ctx is done.
func (d *done) awaitAnswer(ctx context.Context, c store.Confirmation) (store.Confirmation, error) {
	tick := time.NewTicker(urlConfirmPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-tick.C:
		}
		got, err := d.store.GetConfirmation(ctx, c.ID)
		if err != nil {
			return c, err
		}
		if got.Answer != "" || got.Expired(d.store.Now()) {
			return got, nil
		}
	}
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

// toolTitles holds the title of each tool that [addTool] added, by name:
// the same for every server of the process.
var toolTitles sync.Map // string -> string

func toolTitle(name string) string {
	t, _ := toolTitles.Load(name)
	s, _ := t.(string)
	return s
}

func orName(title, name string) string {
	if title != "" {
		return title
	}
	return name
}
