package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Retries that run once (SEP-3182; see IDEMPOTENCY.md beside the
// README): a write that is not idempotent, called with an idempotency
// key, runs at most once for that key and that token, on every process
// that shares Done's database, and a retry gets the answer of the call
// that ran. mcpeffect decides and keeps; Done gives it its database as
// the store, says who the caller is, and adds what only Done knows:
//
//   - the caller is the token, by its id, on every transport: the same
//     token over stdio and over HTTP, and after a restart, has the same
//     keys; another token, even one of the same person, has others;
//   - an answer that holds a secret (a new token, a calendar feed's
//     address) is not kept, since Done never stores a secret: a retry is
//     told that the call ran and where to find what it made;
//   - a call whose database went away answers that nothing was changed;
//     its key is released, so that a retry with the same key runs it,
//     unless its record says that a write was committed all the same
//     (the commit reached the database, its acknowledgement did not),
//     which is then kept as having run.

// A callNote is what Done's store of keys needs of one tools/call made
// with a key, besides mcpeffect's claim: the token it runs for, its tool
// and key, the claim once made (for the handler's writes to mark it), and
// whether the handler answered that the database was unavailable.
// [done.noteIdempotency] puts it in the context of the call.
type callNote struct {
	token string // the token's id
	tool  string
	key   string

	mu    sync.Mutex
	claim *mcpeffect.IdempotencyClaim
	// transient is set when the handler answered Done's error of a
	// database unavailable for now (see [done.check]).
	transient atomic.Bool
	// waited is set once the record of the call was tried for
	// outageWait in vain: mcpeffect then keeps an error in place of the
	// answer, which is tried once, not waited for again.
	waited atomic.Bool
}

type callNoteKey struct{}

func noteOf(ctx context.Context) *callNote {
	n, _ := ctx.Value(callNoteKey{}).(*callNote)
	return n
}

func (n *callNote) claimed(c mcpeffect.IdempotencyClaim) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.claim = &c
}

func (n *callNote) claimOf() (mcpeffect.IdempotencyClaim, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.claim == nil {
		return mcpeffect.IdempotencyClaim{}, false
	}
	return *n.claim, true
}

// noteIdempotency is receiving middleware, before the registry's, that
// puts a [callNote] in the context of each tools/call that carries an
// idempotency key (where mcpeffect's carriers put it, or a go-sdk client
// sets it: params._meta). The token is the one [noteToken] or the stdio
// connection noted, or, where neither did (a connection made as stdio's
// is, in tests), the live token of the connection's credential; a call
// whose token is not live is refused here as [done.identify] would
// refuse it, before its key is claimed.
func (d *done) noteIdempotency(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
		if method != "tools/call" || !ok || p == nil {
			return next(ctx, method, req)
		}
		v, ok := p.Meta[mcpeffect.IdempotencyKeyMetaKey]
		if !ok {
			return next(ctx, method, req)
		}
		k, ok := ctx.Value(logTokenKey{}).(store.Token)
		if !ok {
			var err error
			if k, err = d.tokenOf(ctx, req); err != nil {
				return nil, err
			}
		}
		// A key that is not a string is mcpeffect's to refuse.
		key, _ := v.(string)
		return next(context.WithValue(ctx, callNoteKey{}, &callNote{token: k.ID, tool: p.Name, key: key}), method, req)
	}
}

// idempotencyCaller is the Caller of Done's IdempotencyOptions: the
// token of the call, by its id, whichever transport it came by. Done's
// unit of authority is the token (its scope, its expiry, its revocation,
// what it mints): two tokens of one person, or a person's and the
// agent's it minted, do not share keys, so that no token reads the kept
// answer of another's call. A call without a note has no caller, and its
// claim is refused.
func idempotencyCaller(ctx context.Context, _ *mcp.CallToolRequest) string {
	if n := noteOf(ctx); n != nil && n.token != "" {
		return "done-token:" + n.token
	}
	return ""
}

// idempotencyOwner is the owner of the records of Done's store of keys:
// the token, whose records are bounded (see [store.IdempotencyLimits]).
func idempotencyOwner(ctx context.Context) string {
	if n := noteOf(ctx); n != nil {
		return n.token
	}
	return ""
}

// idempotentWrites returns ctx, that of a tool's handler, marked so that
// the writes the handler commits mark the record of its call's key (see
// [store.WithIdempotentWrite]), when the call claimed one.
func idempotentWrites(ctx context.Context) context.Context {
	n := noteOf(ctx)
	if n == nil {
		return ctx
	}
	c, ok := n.claimOf()
	if !ok {
		return ctx
	}
	return store.WithIdempotentWrite(ctx, c)
}

// noteTransient notes, for the call of ctx made with a key, that its
// handler answered that the database was unavailable for now.
func noteTransient(ctx context.Context) {
	if n := noteOf(ctx); n != nil {
		n.transient.Store(true)
	}
}

// idempotencyOptions returns the IdempotencyOptions of d's Enforcers:
// its database as the store, its tokens as the callers, mcpeffect's
// retention (a day).
func (d *done) idempotencyOptions() *mcpeffect.IdempotencyOptions {
	return &mcpeffect.IdempotencyOptions{
		Store:  &idempotencyRecords{d: d, st: d.store.IdempotencyStore(idempotencyOwner, nil)},
		Caller: idempotencyCaller,
		OnStoreError: func(ctx context.Context, err error) {
			d.logger.WarnContext(ctx, "the record of a call made with an idempotency key", "err", err)
		},
	}
}

// secretAnswers are the writes that are not idempotent whose answer holds
// a secret, which Done never stores, and what a retry of one is told
// instead of it. TestSecretAnswersNotKept holds the list to the tools'
// output schemas.
var secretAnswers = map[string]string{
	"create_token": "its answer held the new token's secret, which Done never stores: the token was minted " +
		"(list_tokens shows it; revoke_token ends it); a call with a new key mints another",
	"create_calendar_link": "its answer held the feed's secret address, which Done never stores: the link was made " +
		"(list_calendar_links shows it; revoke_calendar_link ends it); a call with a new key makes another",
}

// idempotencyRecords is Done's [mcpeffect.IdempotencyStore]: the
// database's ([store.IdempotencyStore]), with what Done knows of a call
// (see the top of this file), and its errors told as Done tells them: an
// outage says to try again, any other fault says nothing of itself to
// the caller and goes to the log.
type idempotencyRecords struct {
	d  *done
	st *store.IdempotencyStore
}

// Claim implements [mcpeffect.IdempotencyStore].
func (r *idempotencyRecords) Claim(ctx context.Context, c mcpeffect.IdempotencyClaim) (mcpeffect.IdempotencyRecord, bool, error) {
	rec, ok, err := r.st.Claim(ctx, c)
	if err != nil {
		return rec, false, r.fail(ctx, "claiming an idempotency key", err)
	}
	if n := noteOf(ctx); ok && n != nil {
		n.claimed(c)
	}
	return rec, ok, nil
}

// Complete implements [mcpeffect.IdempotencyStore].
func (r *idempotencyRecords) Complete(ctx context.Context, c mcpeffect.IdempotencyClaim, outcome []byte) error {
	n := noteOf(ctx)
	switch {
	case n != nil && n.transient.Load():
		released, err := retryOutage(ctx, n, func() (bool, error) { return r.st.ReleaseUnwritten(ctx, c) })
		if err != nil {
			return r.fail(ctx, "releasing an idempotency key", err)
		}
		if released {
			// Nothing was written, as the answer says: a retry runs.
			return nil
		}
		outcome = notKept(n.key, "its write reached the database, whose acknowledgement was lost when it went away: "+
			"the call ran, whatever its answer said, and is not run again for this key")
	case n != nil && secretAnswers[n.tool] != "" && answered(outcome):
		outcome = notKept(n.key, secretAnswers[n.tool])
	}
	_, err := retryOutage(ctx, n, func() (struct{}, error) { return struct{}{}, r.st.Complete(ctx, c, outcome) })
	return r.fail(ctx, "keeping the answer of a call made with an idempotency key", err)
}

// Release implements [mcpeffect.IdempotencyStore].
func (r *idempotencyRecords) Release(ctx context.Context, c mcpeffect.IdempotencyClaim) error {
	_, err := retryOutage(ctx, noteOf(ctx), func() (struct{}, error) { return struct{}{}, r.st.Release(ctx, c) })
	return r.fail(ctx, "releasing an idempotency key", err)
}

// fail returns err, an error of the store, as mcpeffect passes it on to
// the caller (in the detail of its error): the store's own refusals and
// the interface's errors as they are; an outage as Done says it
// elsewhere, with the details in the log; anything else as an internal
// error, whose details are in the log only.
func (r *idempotencyRecords) fail(ctx context.Context, what string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mcpeffect.ErrIdempotencyStoreFull), errors.Is(err, mcpeffect.ErrIdempotencyClaimLost), refusal.CodeOf(err) != 0:
		return err
	case store.Transient(err):
		r.d.logger.WarnContext(ctx, what, "err", err)
		return errors.New("the database of Done is unavailable for now (down, restarting or busy): nothing was run; try again in a few seconds")
	}
	r.d.logger.ErrorContext(ctx, what, "err", err)
	return errors.New("internal error; the server log has the details")
}

// outageWait is how long the record of a call that ran is tried again
// while the database is unavailable: its answer, or the release of its
// key, is what lets a retry be answered or run, where giving up leaves
// the key in progress for the whole retention.
const outageWait = 6 * time.Second

// retryOutage runs fn until it returns no error or one that is not an
// outage ([store.Transient]), for outageWait at most, once for the call
// of n: a call whose record was waited for in vain answers without
// waiting again.
func retryOutage[T any](ctx context.Context, n *callNote, fn func() (T, error)) (T, error) {
	deadline := time.Now().Add(outageWait)
	wait := 100 * time.Millisecond
	for {
		v, err := fn()
		if err == nil || !store.Transient(err) {
			return v, err
		}
		if n != nil && n.waited.Load() || time.Now().Add(wait).After(deadline) {
			if n != nil {
				n.waited.Store(true)
			}
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// answered reports whether outcome, as mcpeffect keeps it, is a result
// that is not a tool's error: one that may hold what the tool made.
func answered(outcome []byte) bool {
	var o struct {
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	return json.Unmarshal(outcome, &o) == nil && o.Result != nil && !o.Result.IsError
}

// notKept returns the outcome kept in place of a call's answer: the
// error of a call that ran and whose answer is not kept, with detail.
func notKept(key, detail string) []byte {
	code, message, data := (&mcpeffect.IdempotencyError{Type: mcpeffect.IdempotencyResultNotKept, IdempotencyKey: key, Detail: detail}).JSONRPCError()
	raw, err := json.Marshal(mcpeffect.CallOutcome{Error: &jsonrpc.Error{Code: code, Message: message, Data: data}})
	if err != nil {
		// Strings and a number.
		panic(fmt.Sprintf("done: encoding an outcome: %v", err))
	}
	return raw
}
