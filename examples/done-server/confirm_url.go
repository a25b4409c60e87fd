package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/admit"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Confirmation through the page (serve -confirm url): where the form mode
// (confirm.go) asks through the host, which could answer for the person,
// the URL mode sends the person to Done's own page, with a URL-mode
// elicitation. The host only opens the address (or shows it); the person
// signs in to the page if need be, reads the question, and confirms or
// declines there, out of the host's reach. The call waits for the answer
// in the store, where any process serving the data may have written it,
// and runs only on a yes.
//
// mcpeffect asks, through its ConfirmOptions AskPerson (askOnPage): once
// go-sdk has checked the call's arguments against its tool's schema, so
// that nothing of a call the schema refuses is kept, and with the call's
// own effect. It puts Done's question through the client as the
// protocol allows (an elicitation request before 2026-07-28, an input
// request from it), and builds every refusal.
//
// The confirmation is bound to the call: its caller's token, and the
// Binding of the call (its tool, its arguments, its caller) with a
// deadline, in the store; it is answered once, before the deadline, by
// the person the caller acts for, who must hold a scope that permits the
// call (see [store.Confirmation]), and used once, by this call, before
// the deadline too.

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

// askOnPage is the ConfirmOptions AskPerson of serve -confirm url. On the
// call that asks, it keeps the confirmation in the store and sends the
// person to its page; on the call that carries the host's answer (the
// same call before 2026-07-28, the call made again with the request
// state, the confirmation's id, from 2026-07-28), it waits for the
// person's answer on the page, and uses it.
//
// What is kept is bounded (see [store.RequestConfirmation]), and so are
// the calls that wait (see [confirmWaits]); a call past a bound is
// refused with a tool error that says to try again, as a write past its
// rate is.
func (d *done) askOnPage(ctx context.Context, call *mcpeffect.ConfirmCall) (mcpeffect.ConfirmReply, error) {
	if d.baseURL == "" {
		return mcpeffect.ConfirmReply{Answer: "unsupported", Detail: "confirmation on the page needs Done served over HTTP (serve -http), where the page is"}, nil
	}
	if caps := call.Request.ClientCapabilities(); caps == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil {
		return mcpeffect.ConfirmReply{Answer: "unsupported", Detail: "the client cannot send the person to a page (it declared no URL elicitation); serve with -confirm destructive to ask through the client instead"}, nil
	}
	k := callerToken(ctx)
	if call.State == "" {
		c, err := d.requestConfirmation(ctx, k, call)
		if err != nil {
			return mcpeffect.ConfirmReply{}, d.refusedRequest(ctx, call.Tool, err)
		}
		return mcpeffect.ConfirmReply{Ask: d.pageElicitation(c), State: c.ID}, nil
	}
	return d.answerOnPage(ctx, call, k)
}

// answerOnPage waits for the person's answer on the page to the
// confirmation call.State, for call, made by k, and uses it.
func (d *done) answerOnPage(ctx context.Context, call *mcpeffect.ConfirmCall, k store.Token) (mcpeffect.ConfirmReply, error) {
	st, err := d.store.GetConfirmationState(ctx, call.State)
	if store.Transient(err) {
		// The state may be good: the call may be made again with it.
		return mcpeffect.ConfirmReply{}, d.check(ctx, err)
	}
	if err != nil || st.TokenID != k.ID {
		// Not a confirmation, or another caller's: the state is not
		// this call's, and says nothing of whose it is.
		return mcpeffect.ConfirmReply{Answer: "invalid", Detail: "the request state names no confirmation of this caller"}, nil
	}
	// From 2026-07-28 the call made again carries the state, and may be
	// made again with it; before, this call is the only one that can use
	// the answer, and unless it does, no answer may come: the page must
	// not ask the person about a call that is over.
	again := call.Request.Params.RequestState != ""
	used := false
	id := st.ID
	withdraw := func() {
		if err := d.store.WithdrawConfirmation(context.WithoutCancel(ctx), k.Actor(), id); err != nil {
			d.logger.ErrorContext(ctx, "withdrawing a confirmation", "id", id, "err", err)
		}
	}
	if !again {
		defer func() {
			if !used {
				withdraw()
			}
		}()
	}
	if call.Reply == nil || call.Reply.Action != "accept" {
		// The person would not open the page: the call does not run,
		// whatever is answered there later.
		if again {
			withdraw()
		}
		action := "cancel"
		if call.Reply != nil {
			action = cmp.Or(call.Reply.Action, action)
		}
		return mcpeffect.ConfirmReply{Answer: action, Detail: "the person did not open the confirmation page"}, nil
	}
	leave, busy := d.waits.enter(k)
	if busy != "" {
		return mcpeffect.ConfirmReply{}, fmt.Errorf("done: tool %q refused: %s", call.Tool, busy)
	}
	defer leave()
	// The call waits minutes, maybe, for a person: not on a turn of the
	// admission queue, which other calls need meanwhile.
	if aerr := admit.Aside(ctx, func() { st, err = d.store.AwaitConfirmation(ctx, id) }); err == nil {
		err = aerr
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			// The client gave up waiting: the page must no longer ask.
			if again {
				withdraw()
			}
			return mcpeffect.ConfirmReply{}, err
		}
		return mcpeffect.ConfirmReply{}, d.check(ctx, err)
	}
	if !again {
		_ = call.Request.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id})
	}
	used = true // useAnswer uses it, or it is over
	return d.useAnswer(ctx, k, st, call.Binding[:])
}

// refusedRequest is the error of a call whose confirmation the store
// would not keep: a refusal (a bound reached, arguments it would not
// keep) says why, anything else is as [done.check] makes it.
func (d *done) refusedRequest(ctx context.Context, tool string, err error) error {
	if refusal.CodeOf(err) != 0 {
		return fmt.Errorf("done: tool %q refused: %w", tool, err)
	}
	return d.check(ctx, err)
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

// requestConfirmation records in the store the confirmation of call by
// the token k, with the question the page will put to the person, and
// the call's arguments as its Binding reads them, which the page shows.
func (d *done) requestConfirmation(ctx context.Context, k store.Token, call *mcpeffect.ConfirmCall) (store.Confirmation, error) {
	args := call.CanonicalArguments()
	if len(args) > store.MaxConfirmationArguments {
		return store.Confirmation{}, refusal.New(refusal.Invalid, "the arguments of a call confirmed on the page may take at most %d KiB written compactly, "+
			"and these take %d KiB: make the call with less, or ask Done's operator for -confirm destructive, where the host asks the person",
			store.MaxConfirmationArguments>>10, (len(args)+1023)>>10)
	}
	question := d.question(ctx, &mcpeffect.ConfirmCall{Tool: call.Tool, Title: call.Title, Effect: call.Effect, Arguments: args})
	if question == "" {
		question = fmt.Sprintf("Call %s (%s)?", cmp.Or(call.Title, call.Tool), call.Effect)
	}
	return d.store.RequestConfirmation(ctx, k.Actor(), store.NewConfirmation{
		Tool: call.Tool, Effect: call.Effect, Binding: call.Binding[:], Question: shorten(question, store.MaxQuestion),
		Arguments: args, TTL: urlConfirmTTL,
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
// bound to binding: the person's yes there before its deadline accepts
// the call; anything else refuses it, and says why.
func (d *done) useAnswer(ctx context.Context, k store.Token, st store.ConfirmationState, binding []byte) (mcpeffect.ConfirmReply, error) {
	refused := func(answer, detail string) (mcpeffect.ConfirmReply, error) {
		return mcpeffect.ConfirmReply{Answer: answer, Detail: detail}, nil
	}
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
		return mcpeffect.ConfirmReply{}, d.check(ctx, err)
	case st.Answer != store.Accepted:
		return refused("decline", "declined on the page by "+st.AnsweredBy)
	}
	return mcpeffect.ConfirmReply{Answer: "accept"}, nil
}
