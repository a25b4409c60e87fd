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
				n := mcpeffect.NotConfirmedError{Tool: p.Name, Effect: e, Answer: answer, Detail: detail}
				data, _ := json.Marshal(n)
				return &jsonrpc.Error{Code: mcpeffect.CodeNotConfirmed, Message: n.Error(), Data: data}
			}
			ss, ok := req.GetSession().(*mcp.ServerSession)
			if !ok || ss == nil {
				return nil, refused("unsupported", "no session to ask through")
			}
			if d.baseURL == "" {
				return nil, refused("unsupported", "confirmation on the page needs Done served over HTTP (serve -http), where the page is")
			}
			ip := ss.InitializeParams()
			if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.Capabilities.Elicitation.URL == nil {
				return nil, refused("unsupported", "the client cannot send the person to a page (it declared no URL elicitation); serve with -confirm destructive to ask through the client instead")
			}
			k := callerToken(ctx)
			question := d.question(ctx, &mcpeffect.ConfirmCall{Tool: p.Name, Title: toolTitle(p.Name), Effect: e, Arguments: p.Arguments})
			if question == "" {
				question = fmt.Sprintf("Call %s (%s)?", orName(toolTitle(p.Name), p.Name), e)
			}
			binding := callBinding(p.Name, p.Arguments)
			c, err := d.store.RequestConfirmation(ctx, k.Actor(), store.NewConfirmation{
				Tool: p.Name, Binding: binding, Question: question, Arguments: canonical(p.Arguments), TTL: urlConfirmTTL,
			})
			if err != nil {
				return nil, err
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
			res, err := ss.Elicit(ctx, &mcp.ElicitParams{
				Mode:          "url",
				Message:       "Done asks you to confirm a call on its page, where only you can answer: " + web.Visible(question),
				URL:           d.baseURL + web.ConfirmPath + c.ID,
				ElicitationID: c.ID,
			})
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
				return nil, err
			}
			_ = ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: c.ID})
			if c.Answer == "" {
				return nil, refused("cancel", "no answer on the page by "+c.ExpiresAt)
			}
			c, err = d.store.UseConfirmation(ctx, k.Actor(), c.ID, binding)
			used = err == nil || errors.Is(err, store.ErrConfirmationUsed)
			switch {
			case errors.Is(err, store.ErrConfirmationUsed):
				return nil, refused("invalid", "the answer was used by another call")
			case err != nil:
				return nil, err
			case c.Answer != store.Accepted:
				return nil, refused("decline", "declined on the page by "+c.AnsweredBy)
			}
			return next(ctx, method, req)
		}
	}
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
