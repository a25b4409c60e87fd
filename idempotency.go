package mcpeffect

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// IdempotencyOptions make a call that carries an idempotency key
// (SEP-3182, revision de9158dc, 2026-08-17) run at most once: set
// [MiddlewareOptions] Idempotency. Within the retention:
//
//   - the first call with a key runs, and what it answers, result or
//     error, is kept;
//   - a repeat with the same key, the same tool and the same arguments
//     (the same parsed JSON values: key order, spaces, escapes and 1
//     against 1.0 make no difference) gets what the first answered,
//     without running the handler again;
//   - a repeat with another tool or other arguments is refused, with a
//     JSON-RPC error whose data is {"type": "idempotency_key_conflict",
//     "idempotencyKey": ...}, and nothing runs;
//   - a repeat while the first still runs is refused at once, with the
//     type "idempotency_key_in_progress".
//
// Only a call whose effect is a write that is not idempotent is kept:
// [Write] or [Destructive] without [Idempotent] (for a tool whose effect
// depends on its arguments, the effect of this call). The handlers of
// reads and of idempotent writes run again, as their classification says
// changes nothing more; their key is checked and then left alone. A call
// refused before its handler ran (by its scope, by a person who declined,
// by the validation of its arguments), and one that asks the client for
// input first (multi-round-trip requests), keep nothing: the key may be
// sent again. A continuation of such a call, which carries requestState
// or inputResponses, is outside the draft's scope and runs as it would
// without a key; the confirmation it answers is accepted once.
//
// A key is the caller's own: the record of a key is found only by the
// caller that made it (see Caller), so another token cannot read its
// result, nor learn that the key was used. The decision of the call comes
// first, so a caller whose scope no longer allows the call is refused,
// not answered from the record.
//
// The key is read from the call's params.idempotencyKey, where the draft
// puts it, and from its params._meta under [IdempotencyKeyMetaKey], for
// clients that can set only _meta (go-sdk's). go-sdk's server drops a
// member of the params that its types do not have, so the draft's field
// reaches the middleware only through a carrier that moves it into _meta
// before go-sdk decodes the request: wrap the server's transport with
// [Enforcer.IdempotencyTransport] (stdio, in memory), or its Streamable
// HTTP handler with [Enforcer.IdempotencyHandler]. The carrier is also
// what advertises capabilities.tools.idempotency, as the draft asks,
// since a server without one would drop the draft's field: a client can
// rely on the capability.
//
// A store that fails refuses the call rather than run it: a caller that
// sends a key is one for whom running twice is worse than not running.
// The draft cannot promise exactly once across a crash between a write
// and its record (nor can this): a process that dies in the handler
// leaves the key in progress until its retention ends, so a retry is
// refused, never run twice. A handler that panics records an error that
// says so.
type IdempotencyOptions struct {
	// Store keeps the records. If nil, an in-process store with the
	// default bounds ([NewMemoryIdempotencyStore]), which holds for one
	// process: a server of several processes gives them a store they
	// share.
	Store IdempotencyStore

	// Retention is how long a record is kept, from the first call with
	// its key: a repeat after it runs again. Zero means
	// [DefaultIdempotencyRetention]. It is also how long a key stays in
	// progress when the process that ran its call died before recording
	// it.
	Retention time.Duration

	// Caller returns who makes a call, to keep each caller's keys apart:
	// a user id, an account. If nil, the caller is the UserID of the
	// request's token ([auth.TokenInfo]), or, for a token without one, the
	// token itself (a digest of the request's Authorization header),
	// or, without a token, the session (stdio, in memory; over
	// stateless Streamable HTTP, each request is a session of its own),
	// which a reconnection does not keep. Give one when a retry may come on
	// another connection without a token, such as a stdio server that
	// its client restarts, with a store that outlives the process.
	//
	// [auth.TokenInfo]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#TokenInfo
	Caller func(ctx context.Context, req *mcp.CallToolRequest) string

	// MaxBodyBytes bounds the body that [Enforcer.IdempotencyHandler]
	// reads to carry a key: a longer one is answered 413. Zero means
	// [DefaultMaxIdempotencyBodyBytes], go-sdk's own bound.
	MaxBodyBytes int64

	// Now returns the current time, for retention. If nil, [time.Now];
	// tests give a clock of their own.
	Now func() time.Time

	// OnStoreError, if non-nil, is told when the store could not keep
	// what a call that ran answered, nor the error saying so (the key
	// then stays in progress until its retention ends: a repeat is
	// refused, never run), or could not release the key of a call that
	// did not run: for logging. The call's own answer goes to its caller
	// all the same. It must not block.
	OnStoreError func(context.Context, error)
}

// DefaultIdempotencyRetention is the retention of [IdempotencyOptions]
// when Retention is zero.
const DefaultIdempotencyRetention = 24 * time.Hour

// DefaultMaxIdempotencyBodyBytes is the bound of
// [Enforcer.IdempotencyHandler] when [IdempotencyOptions] MaxBodyBytes
// is zero: that of go-sdk's Streamable HTTP handler.
const DefaultMaxIdempotencyBodyBytes = mcp.DefaultMaxRequestBodyBytes

// MaxIdempotencyKeyBytes is the longest idempotency key accepted, in
// bytes of UTF-8. The draft sets no bound; a UUID is 36.
const MaxIdempotencyKeyBytes = 255

// IdempotencyKeyMetaKey is the key, in the _meta of the params of a
// tools/call, under which a client that can set only _meta (go-sdk's)
// sends its idempotency key, and under which the carriers
// ([Enforcer.IdempotencyTransport], [Enforcer.IdempotencyHandler]) put
// the draft's params.idempotencyKey, since go-sdk's server drops it.
const IdempotencyKeyMetaKey = "io.github.mcpeffect/idempotency-key"

// idempotencyCarriedMetaKey marks, in the _meta of its params, an
// initialize or server/discover request that a carrier passed on, so
// that the middleware advertises the capability only where the draft's
// field reaches it. A client that sets it itself deceives only itself.
const idempotencyCarriedMetaKey = "io.github.mcpeffect/idempotency-carried"

// CodeIdempotency is the JSON-RPC error code of a call refused for its
// idempotency key: a conflict, a call still in progress, a store that
// failed, and of the stored outcome of a call whose result could not be
// kept or whose handler panicked. The data is an [IdempotencyError]. The
// draft defines no code, and asks for the type in the data, which
// [AsIdempotencyError] reads back; it is in the range JSON-RPC leaves to
// servers, beside [CodeDenied]. A key that is not valid is refused with
// -32602, invalid params.
const CodeIdempotency = -32053

// The types of an [IdempotencyError] that are this package's, beside the
// draft's [IdempotencyKeyConflict] and [IdempotencyKeyInProgress]: a
// client must tell them apart by type, and ignore one it does not know.
const (
	// IdempotencyKeyInvalid: the key is not a string of 1 to
	// MaxIdempotencyKeyBytes bytes, or was sent twice, differently.
	IdempotencyKeyInvalid = "io.github.mcpeffect/idempotency_key_invalid"
	// IdempotencyUnavailable: the store failed, or is full; the call did
	// not run.
	IdempotencyUnavailable = "io.github.mcpeffect/idempotency_unavailable"
	// IdempotencyResultNotKept: the call ran, and what it answered could
	// not be kept; it is not run again for this key.
	IdempotencyResultNotKept = "io.github.mcpeffect/idempotency_result_not_kept"
	// IdempotencyHandlerPanicked: the call's handler panicked; it may
	// have had part of its effect, and is not run again for this key.
	IdempotencyHandlerPanicked = "io.github.mcpeffect/idempotency_handler_panicked"
)

// An IdempotencyError describes a call refused for its idempotency key,
// or the stored outcome of one that ran and whose answer is not kept. It
// is the data of the JSON-RPC error the caller receives (code
// [CodeIdempotency], or -32602 for a key that is not valid), which
// [AsIdempotencyError] reads back on any client, and its JSON is what the
// draft asks for: {"type": ..., "idempotencyKey": ...}, with a detail.
type IdempotencyError struct {
	// Type is [IdempotencyKeyConflict], [IdempotencyKeyInProgress], or one
	// of this package's (see [IdempotencyKeyInvalid]).
	Type string `json:"type"`
	// IdempotencyKey is the key, as sent (cut short past
	// MaxIdempotencyKeyBytes).
	IdempotencyKey string `json:"idempotencyKey"`
	// Detail says more, for people.
	Detail string `json:"detail,omitempty"`
}

func (e *IdempotencyError) Error() string {
	key := fmt.Sprintf("%q", clip(e.IdempotencyKey, 64))
	var msg string
	switch e.Type {
	case IdempotencyKeyConflict:
		msg = "idempotency key " + key + " was first sent with another tool or other arguments: nothing ran; a new call needs a new key"
	case IdempotencyKeyInProgress:
		msg = "the call that first carried idempotency key " + key + " is still running: nothing ran again; try again shortly"
	case IdempotencyKeyInvalid:
		msg = "the idempotency key " + key + " is not valid"
	case IdempotencyUnavailable:
		msg = "the call with idempotency key " + key + " was not run: its key could not be recorded, so a retry could have run it twice"
	case IdempotencyResultNotKept:
		msg = "the call with idempotency key " + key + " ran, but what it answered could not be kept: it is not run again for this key"
	case IdempotencyHandlerPanicked:
		msg = "the call with idempotency key " + key + " panicked in its handler, which may have done part of its work: it is not run again for this key"
	default:
		msg = "idempotency key " + key + ": " + e.Type
	}
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return "mcpeffect: " + msg
}

// JSONRPCError returns the JSON-RPC error that refuses a call with e:
// code [CodeIdempotency] (or -32602 for a key that is not valid), e's
// message, and e as data.
func (e *IdempotencyError) JSONRPCError() (code int64, message string, data json.RawMessage) {
	w := e.rpcError()
	return w.Code, w.Message, w.Data
}

func (e *IdempotencyError) rpcError() *jsonrpc.Error {
	data, err := json.Marshal(e)
	if err != nil {
		// Strings only.
		panic(err)
	}
	code := int64(CodeIdempotency)
	if e.Type == IdempotencyKeyInvalid {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: e.Error(), Data: data}
}

// AsIdempotencyError returns the [IdempotencyError] that err carries: a
// JSON-RPC error as a client receives it, of any code, whose data has the
// type of one ([IdempotencyKeyConflict], [IdempotencyKeyInProgress], or
// one of this package's) and an idempotencyKey, from any server that
// follows the draft; or an *IdempotencyError itself.
func AsIdempotencyError(err error) (*IdempotencyError, bool) {
	var ie *IdempotencyError
	if errors.As(err, &ie) {
		return ie, true
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) || len(je.Data) == 0 {
		return nil, false
	}
	var data struct {
		Type   string  `json:"type"`
		Key    *string `json:"idempotencyKey"`
		Detail string  `json:"detail"`
	}
	if json.Unmarshal(je.Data, &data) != nil || data.Key == nil {
		return nil, false
	}
	switch data.Type {
	case IdempotencyKeyConflict, IdempotencyKeyInProgress, IdempotencyKeyInvalid, IdempotencyUnavailable,
		IdempotencyResultNotKept, IdempotencyHandlerPanicked:
		return &IdempotencyError{Type: data.Type, IdempotencyKey: *data.Key, Detail: data.Detail}, true
	}
	return nil, false
}

// checkIdempotencyKey returns the error that refuses key, or nil.
func checkIdempotencyKey(key string) *IdempotencyError {
	var detail string
	switch {
	case key == "":
		detail = "it is empty"
	case len(key) > MaxIdempotencyKeyBytes:
		detail = fmt.Sprintf("it is %d bytes long; at most %d are accepted", len(key), MaxIdempotencyKeyBytes)
	case !utf8.ValidString(key):
		detail = "it is not valid UTF-8"
	default:
		return nil
	}
	return &IdempotencyError{Type: IdempotencyKeyInvalid, IdempotencyKey: clip(key, MaxIdempotencyKeyBytes), Detail: detail}
}

// IdempotencyKeyFromMeta returns the idempotency key of a call whose
// params' _meta is meta, as a carrier leaves it or a client sets it
// (under [IdempotencyKeyMetaKey]), and whether there is one. A key that
// is not valid (not a string, empty, longer than MaxIdempotencyKeyBytes,
// or sent twice with different values, as a carrier marks it) is an
// *[IdempotencyError] of type [IdempotencyKeyInvalid], to refuse the call
// with. An adapter for another SDK calls it before
// [Enforcer.BeginIdempotent].
func IdempotencyKeyFromMeta(meta map[string]any) (key string, ok bool, err error) {
	v, present := meta[IdempotencyKeyMetaKey]
	if !present {
		return "", false, nil
	}
	switch v := v.(type) {
	case string:
		if ie := checkIdempotencyKey(v); ie != nil {
			return "", false, ie
		}
		return v, true, nil
	case map[string]any:
		if why, ok := v[invalidKeyMember].(string); ok {
			return "", false, &IdempotencyError{Type: IdempotencyKeyInvalid, Detail: why}
		}
	}
	return "", false, &IdempotencyError{Type: IdempotencyKeyInvalid, Detail: fmt.Sprintf("it is a JSON %s, not a string", jsonKind(v))}
}

// invalidKeyMember is the member of the object that a carrier puts under
// IdempotencyKeyMetaKey in place of a key it cannot pass on, saying why.
const invalidKeyMember = "invalid"

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// runsOnce reports whether a call of effect e is kept under its key: a
// write that is not idempotent.
func runsOnce(e Effect) bool { return e&Write != 0 && e&idempotentBit == 0 }

// A CallOutcome is what a call under an idempotency key answered, as an
// [IdempotentCall] keeps it and [Enforcer.BeginIdempotent] gives it back:
// the result of the tools/call, in MCP's JSON, or the JSON-RPC error that
// answered it.
type CallOutcome struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
}

// idempotency is the state of an Enforcer with IdempotencyOptions.
type idempotency struct {
	store     IdempotencyStore
	retention time.Duration
	now       func() time.Time
	caller    func(context.Context, *mcp.CallToolRequest) string
	maxBody   int64

	// sessions gives each session without a token an identity of its
	// own, random, forgotten with the session: a session's address
	// could be another's once it is collected.
	sessions sync.Map // weak.Pointer[mcp.ServerSession] to string
}

func newIdempotency(o *IdempotencyOptions) *idempotency {
	i := &idempotency{store: o.Store, retention: o.Retention, now: o.Now, caller: o.Caller, maxBody: o.MaxBodyBytes}
	if i.store == nil {
		i.store = NewMemoryIdempotencyStore(0, 0)
	}
	if i.retention <= 0 {
		i.retention = DefaultIdempotencyRetention
	}
	if i.now == nil {
		i.now = time.Now
	}
	if i.maxBody <= 0 {
		i.maxBody = DefaultMaxIdempotencyBodyBytes
	}
	return i
}

// callerOf returns who makes req, for the record of its key.
func (i *idempotency) callerOf(ctx context.Context, req *mcp.CallToolRequest) string {
	if i.caller != nil {
		// The defaults are not used: no other string can be confused
		// with the function's.
		return i.caller(ctx, req)
	}
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		return TokenIdempotencyCaller(req.Extra.TokenInfo, req.Extra.Header.Get("Authorization"))
	}
	if ss := req.Session; ss != nil {
		return "session:" + i.sessionIdentity(ss)
	}
	return "session:none"
}

// TokenIdempotencyCaller returns the caller of a call that carries the
// bearer token ti, with the Authorization header authorization, as
// [IdempotencyOptions] identifies it when Caller is nil: the token's
// UserID, or, for a token without one, the token itself (a digest of the
// header), or, without either, its scope strings. An adapter for another
// SDK gives it to [Enforcer.BeginIdempotent], so that the same caller has
// the same keys through either SDK.
func TokenIdempotencyCaller(ti *auth.TokenInfo, authorization string) string {
	switch {
	case ti != nil && ti.UserID != "":
		return "user:" + ti.UserID
	case authorization != "":
		sum := sha256.Sum256([]byte(authorization))
		return "bearer:" + hex.EncodeToString(sum[:])
	case ti != nil:
		// A token known only by its scopes: the best there is.
		scopes := slices.Clone(ti.Scopes)
		slices.Sort(scopes)
		return "scopes:" + strings.Join(scopes, " ")
	}
	return ""
}

// sessionIdentity returns the identity of ss, random and its own.
func (i *idempotency) sessionIdentity(ss *mcp.ServerSession) string {
	wp := weak.Make(ss)
	if id, ok := i.sessions.Load(wp); ok {
		return id.(string)
	}
	id, loaded := i.sessions.LoadOrStore(wp, randomHex(16))
	if !loaded {
		runtime.AddCleanup(ss, func(wp weak.Pointer[mcp.ServerSession]) { i.sessions.Delete(wp) }, wp)
	}
	return id.(string)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := io.ReadFull(rand.Reader, b); err != nil {
		panic(fmt.Sprintf("mcpeffect: reading random bytes: %v", err))
	}
	return hex.EncodeToString(b)
}

// keyDigest returns the key of the record of caller's key.
func keyDigest(caller, key string) [sha256.Size]byte {
	h := sha256.New()
	for _, part := range []string{"mcpeffect idempotency key v1", caller, key} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// An IdempotentCall is a call that [Enforcer.BeginIdempotent] claimed
// the key of: run its handler, then tell it what the call answered with
// Finish, or, if the handler did not run after all, Abandon it. It is
// for one call, on one goroutine.
type IdempotentCall struct {
	i     *idempotency
	key   string
	claim IdempotencyClaim
	ended bool
}

// BeginIdempotent begins the call that d allowed, whose arguments are
// d.Operation.Arguments (as sent: they are compared as parsed JSON
// values), under key, sent by caller (who makes the call: the same
// string for the same caller, and another for another; see
// [IdempotencyOptions] Caller). It is the idempotency of the go-sdk
// middleware, for an adapter of another SDK, which reads the key with
// [IdempotencyKeyFromMeta] and leaves out continuations (calls that carry
// requestState or inputResponses). It returns one of:
//
//   - a nil call, outcome and error: run the handler as without a key
//     (no Idempotency in the options, a call refused, or one whose effect
//     is not a write that is not idempotent, whose key is left alone);
//   - a call: run the handler, then Finish the call with what it
//     answered, or Abandon it if the handler did not run;
//   - an outcome: answer it, the kept answer of the call that first
//     carried the key, and do not run the handler;
//   - an error, an *[IdempotencyError]: refuse the call with it
//     (its JSONRPCError), and do not run the handler.
func (e *Enforcer) BeginIdempotent(ctx context.Context, d Decision, key, caller string) (*IdempotentCall, *CallOutcome, error) {
	if e.idem == nil || d.Denied != nil || d.Operation.Method != methodCallTool {
		return nil, nil, nil
	}
	if ie := checkIdempotencyKey(key); ie != nil {
		return nil, nil, ie
	}
	if !runsOnce(d.Effect) {
		return nil, nil, nil
	}
	call, outcome, ie := e.idem.begin(ctx, d.Operation.Name, d.Operation.Arguments, key, caller)
	if ie != nil {
		return nil, nil, ie
	}
	return call, outcome, nil
}

// begin claims key, of caller, for a call of tool with args.
func (i *idempotency) begin(ctx context.Context, tool string, args json.RawMessage, key, caller string) (*IdempotentCall, *CallOutcome, *IdempotencyError) {
	fp, err := fingerprint(tool, args)
	if err != nil {
		return nil, nil, &IdempotencyError{Type: IdempotencyKeyInvalid, IdempotencyKey: key, Detail: "the arguments are not JSON: " + err.Error()}
	}
	now := i.now()
	c := IdempotencyClaim{Key: keyDigest(caller, key), Fingerprint: fp, Now: now, Expires: now.Add(i.retention)}
	if _, err := io.ReadFull(rand.Reader, c.Token[:]); err != nil {
		return nil, nil, &IdempotencyError{Type: IdempotencyUnavailable, IdempotencyKey: key, Detail: err.Error()}
	}
	rec, claimed, err := i.store.Claim(context.WithoutCancel(ctx), c)
	switch {
	case err != nil:
		return nil, nil, &IdempotencyError{Type: IdempotencyUnavailable, IdempotencyKey: key, Detail: err.Error()}
	case claimed:
		return &IdempotentCall{i: i, key: key, claim: c}, nil, nil
	case rec.Fingerprint != fp:
		return nil, nil, &IdempotencyError{Type: IdempotencyKeyConflict, IdempotencyKey: key}
	case !rec.Done:
		return nil, nil, &IdempotencyError{Type: IdempotencyKeyInProgress, IdempotencyKey: key}
	}
	var o CallOutcome
	if err := json.Unmarshal(rec.Outcome, &o); err != nil || (o.Result == nil) == (o.Error == nil) {
		return nil, nil, &IdempotencyError{Type: IdempotencyUnavailable, IdempotencyKey: key, Detail: "the store holds an answer that cannot be read"}
	}
	return nil, &o, nil
}

// Finish keeps o, what the call answered, for the repeats of its key.
// Where the store cannot keep it (too large, say), it keeps an error of
// type [IdempotencyResultNotKept] instead, so that a repeat is still not
// run; where it cannot keep even that, the key stays in progress until
// its retention ends, and Finish returns the error. It uses ctx without
// its cancellation: a call cancelled by its client has still run. Only
// the first Finish or Abandon of a call counts.
func (c *IdempotentCall) Finish(ctx context.Context, o CallOutcome) error {
	if c == nil || c.ended {
		return nil
	}
	c.ended = true
	ctx = context.WithoutCancel(ctx)
	raw, err := json.Marshal(o)
	if err == nil {
		if err = c.i.store.Complete(ctx, c.claim, raw); err == nil {
			return nil
		}
	}
	return c.keep(ctx, IdempotencyResultNotKept, err.Error())
}

// keep keeps, in place of the call's answer, the error of type typ. The
// key and the detail are cut short, so that it fits in what a store
// reserves at the claim (see MemoryIdempotencyStore) whatever they hold.
func (c *IdempotentCall) keep(ctx context.Context, typ, detail string) error {
	raw, err := json.Marshal(CallOutcome{Error: (&IdempotencyError{Type: typ, IdempotencyKey: clip(c.key, 64), Detail: clip(detail, 120)}).rpcError()})
	if err != nil {
		return err
	}
	if err := c.i.store.Complete(ctx, c.claim, raw); err != nil {
		return fmt.Errorf("mcpeffect: the outcome of the call under idempotency key %q could not be kept, and the key stays in progress until its retention ends: %w", clip(c.key, 64), err)
	}
	return nil
}

// Abandon releases the call's key: its handler did not run, so the key
// may be sent again.
func (c *IdempotentCall) Abandon(ctx context.Context) error {
	if c == nil || c.ended {
		return nil
	}
	c.ended = true
	return c.i.store.Release(context.WithoutCancel(ctx), c.claim)
}

// Panicked keeps, as the call's answer, an error of type
// [IdempotencyHandlerPanicked]: its handler panicked, and may have done
// part of its work, so a repeat is not run. Call it from a deferred
// function that sees the handler panic.
func (c *IdempotentCall) Panicked(ctx context.Context) error {
	if c == nil || c.ended {
		return nil
	}
	c.ended = true
	return c.keep(context.WithoutCancel(ctx), IdempotencyHandlerPanicked, "")
}
