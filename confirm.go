package mcpeffect

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConfirmOptions make [Registry.Middleware] insist that a person confirm
// some calls before they run, whatever the host does with the hints: set
// [MiddlewareOptions] Confirm. Hosts differ: some ask before any write,
// some ignore destructiveHint, some ask about nothing once a person has
// said "always allow". With Confirm, the server itself asks the person,
// through MCP elicitation, and runs the handler only on an explicit
// accept.
//
// What it adds is a person in the loop, not an authorization boundary.
// The question goes through the client, and the server cannot tell a
// person's accept from one the client made up: a client that relays
// answers honestly makes it work, a dishonest one defeats it. What a
// caller may do at all is the scope's to decide, which this package
// enforces whatever the client says.
//
// It applies to the tools added with [AddTool], [AddToolHandler],
// [AddToolWithRule] and [AddToolHandlerWithRule], whose wrappers ask.
//
// On the protocol versions before 2026-07-28, the wrapper sends the
// client an elicitation request (a form with no fields: the message and
// accept, decline or cancel) and waits for the answer. From 2026-07-28,
// where a server may not send requests of its own, it answers the call
// with an input request instead (multi-round-trip requests), and the
// client calls again with the person's answer and the request state the
// server gave; the state is signed and binds the answer to this tool,
// these arguments, this caller and a short expiry, and each is accepted
// once, so that an answer cannot be forged nor replayed for another
// call. A server that runs in several processes must give them the same
// Key. Over stateless Streamable HTTP, a client of a protocol before
// 2026-07-28 cannot be asked at all (the server cannot send it a
// request): it counts as a client that cannot ask.
type ConfirmOptions struct {
	// For reports whether a call to tool, of effect e (for a tool whose
	// effect depends on its arguments, the effect of this call), needs a
	// person's confirmation. If nil, destructive calls do.
	For func(tool string, e Effect) bool

	// Message returns the question put to the person, such as
	// "Delete task 'ship v2' and its 3 steps?". If nil, or if it returns
	// "", the question names the tool, says what its effect does and
	// shows the arguments. Whoever words it, the question reaches the
	// person with its control and format characters written as escapes
	// (U+202E, which shows the text after it reversed, as \u202e; tab
	// and newline are kept): text that came from a call's arguments or
	// from the data cannot disguise what the person is asked.
	Message func(ctx context.Context, call *ConfirmCall) string

	// ProceedWithoutElicitation runs the calls that need confirmation
	// unconfirmed when the client cannot ask a person (it declared no
	// form elicitation). Left false, the default, such calls are
	// refused.
	ProceedWithoutElicitation bool

	// Key signs the request states of the 2026-07-28 protocol. If empty,
	// the middleware makes a random one, so that a state is good only in
	// the process that made it. It must be at least 32 bytes, and secret.
	Key []byte

	// Expiry is how long an answer may take, from the question to the
	// call that carries it, on the 2026-07-28 protocol. Zero means 10
	// minutes. A call with an expired answer is asked again.
	Expiry time.Duration

	// Caller returns who makes a call, for the binding of an answer to
	// its caller: a user id, a token's id. If nil, the caller is the
	// token's UserID and scope strings ([auth.TokenInfo]), or, without a
	// token, the session (stdio, in memory). Give one when tokens of
	// different people may carry the same UserID and scopes.
	//
	// [auth.TokenInfo]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#TokenInfo
	Caller func(ctx context.Context, req *mcp.CallToolRequest) string
}

// A ConfirmCall is a call that needs a person's confirmation, as
// [ConfirmOptions] Message sees it.
type ConfirmCall struct {
	Tool string
	// Title is the tool's title for people, such as "Delete task": its
	// Title, or else its annotations' Title; "" if it has neither.
	Title string
	// Effect is the effect of this call.
	Effect Effect
	// Arguments are the call's arguments as the client sent them.
	Arguments json.RawMessage
	// Request is the request, for its session and extra information.
	Request *mcp.CallToolRequest
}

// CodeNotConfirmed is the JSON-RPC error code of a call that needed a
// person's confirmation and did not get it. The error's data is a
// [NotConfirmedError] in JSON.
const CodeNotConfirmed = -32051

// A NotConfirmedError describes a call that [ConfirmOptions] made ask a
// person, and that did not run: the person declined or cancelled, the
// client could not ask, or the answer was not good for this call. It is
// the data of the JSON-RPC error the caller receives, which
// [AsNotConfirmedError] reads back.
type NotConfirmedError struct {
	Tool string `json:"tool"`
	// Effect is the effect of the call.
	Effect Effect `json:"effect"`
	// Answer is what came of the question: "decline" or "cancel" as the
	// person answered, another action a client sent, "unsupported" when
	// the client cannot ask a person, "failed" when asking failed
	// (Detail says why), "invalid" when the answer the client sent is not
	// one this server asked for this call (forged, replayed, for other
	// arguments or another caller).
	Answer string `json:"answer"`
	Detail string `json:"detail,omitempty"`
}

// Error says which tool did not run, and why, in plain words.
func (n *NotConfirmedError) Error() string {
	msg := fmt.Sprintf("mcpeffect: tool %q was not run: ", n.Tool)
	switch n.Answer {
	case "decline":
		return msg + "the person declined it when asked to confirm"
	case "cancel":
		return msg + "the person dismissed the confirmation without accepting"
	case "unsupported":
		return msg + "it needs a person's confirmation, and the client cannot ask one (it supports no form elicitation)"
	case "failed":
		return msg + "asking the person to confirm failed: " + n.Detail
	case "invalid":
		return msg + "the confirmation sent with the call is not one this server asked for this call: " + n.Detail
	}
	return msg + fmt.Sprintf("the answer to the confirmation was %q, not accept", n.Answer)
}

// AsNotConfirmedError reports whether err, as returned by a client's
// CallTool, is a call refused for want of a person's confirmation, and if
// so returns its [NotConfirmedError].
func AsNotConfirmedError(err error) (*NotConfirmedError, bool) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeNotConfirmed || len(je.Data) == 0 {
		return nil, false
	}
	var n NotConfirmedError
	if json.Unmarshal(je.Data, &n) != nil || n.Tool == "" {
		return nil, false
	}
	return &n, true
}

// JSONRPCError returns the JSON-RPC error of a call that did not run for
// want of confirmation: code [CodeNotConfirmed], the message of
// [NotConfirmedError.Error], and n in JSON as its data, which
// [AsNotConfirmedError] reads back.
func (n *NotConfirmedError) JSONRPCError() (code int64, message string, data json.RawMessage) {
	e := n.rpcError()
	return e.Code, e.Message, e.Data
}

func (n *NotConfirmedError) rpcError() *jsonrpc.Error {
	data, err := json.Marshal(n)
	if err != nil {
		// Only an invalid effect fails to marshal; send it without.
		n.Effect = 0
		data, _ = json.Marshal(n)
	}
	return &jsonrpc.Error{Code: CodeNotConfirmed, Message: n.Error(), Data: data}
}

// confirmInput is the id of the input request that asks for confirmation.
const confirmInput = "mcpeffect/confirm"

// A confirmer asks for the confirmations of one middleware.
type confirmer struct {
	opts ConfirmOptions
	key  []byte

	mu        sync.Mutex
	used      map[[nonceSize]byte]int64 // nonces of answers accepted, to their expiry
	lastPrune time.Time
}

func newConfirmer(o *ConfirmOptions) *confirmer {
	c := &confirmer{opts: *o, used: map[[nonceSize]byte]int64{}}
	switch {
	case len(o.Key) == 0:
		c.key = make([]byte, 32)
		if _, err := io.ReadFull(rand.Reader, c.key); err != nil {
			panic(fmt.Sprintf("mcpeffect: making a key for confirmations: %v", err))
		}
	case len(o.Key) < 32:
		panic(fmt.Sprintf("mcpeffect: ConfirmOptions.Key has %d bytes; at least 32 are needed", len(o.Key)))
	default:
		c.key = slices.Clone(o.Key)
	}
	if c.opts.Expiry <= 0 {
		c.opts.Expiry = 10 * time.Minute
	}
	if c.opts.For == nil {
		c.opts.For = func(_ string, e Effect) bool { return e&Destructive == Destructive }
	}
	return c
}

// confirm has a person confirm the call req of tool, of effect e, which
// the options ask for. It returns nil, nil when the handler may run;
// otherwise a result that asks the client for the person's answer, or the
// error that refuses the call.
func (c *confirmer) confirm(ctx context.Context, info *callInfo, req *mcp.CallToolRequest, t *mcp.Tool, e Effect) (*mcp.CallToolResult, error) {
	tool := t.Name
	refuse := func(answer, detail string) error {
		return (&NotConfirmedError{Tool: tool, Effect: e, Answer: answer, Detail: detail}).rpcError()
	}
	if !formElicitation(req.ClientCapabilities()) {
		if c.opts.ProceedWithoutElicitation {
			return nil, nil
		}
		return nil, refuse("unsupported", "")
	}
	if !multiRoundTrip(req.Session) {
		res, err := req.Session.Elicit(ctx, c.question(ctx, req, t, e))
		switch {
		case err != nil:
			return nil, refuse("failed", err.Error())
		case res.Action == "accept":
			return nil, nil
		}
		return nil, refuse(res.Action, "")
	}

	// The 2026-07-28 protocol: the answer comes with a call of its own.
	// Whatever the client puts in inputResponses counts only with a
	// request state this server signed for this very call.
	binding := c.binding(ctx, info, req, tool)
	if req.Params.RequestState == "" {
		return c.ask(ctx, req, t, e, binding)
	}
	switch err := c.verify(req.Params.RequestState, binding); {
	case errors.Is(err, errExpired):
		return c.ask(ctx, req, t, e, binding)
	case err != nil:
		return nil, refuse("invalid", err.Error())
	}
	answer, ok := req.Params.InputResponses[confirmInput].(*mcp.ElicitResult)
	switch {
	case !ok || answer == nil:
		return nil, refuse("invalid", "it carries no answer to the question")
	case answer.Action == "accept":
		return nil, nil
	}
	return nil, refuse(answer.Action, "")
}

// ask returns the result that asks the client for the person's answer,
// with a new request state.
func (c *confirmer) ask(ctx context.Context, req *mcp.CallToolRequest, t *mcp.Tool, e Effect, binding [sha256.Size]byte) (*mcp.CallToolResult, error) {
	state, err := c.mint(binding)
	if err != nil {
		return nil, (&NotConfirmedError{Tool: t.Name, Effect: e, Answer: "failed", Detail: err.Error()}).rpcError()
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{confirmInput: c.question(ctx, req, t, e)},
		RequestState:  state,
	}, nil
}

// question returns the elicitation that asks the person.
func (c *confirmer) question(ctx context.Context, req *mcp.CallToolRequest, t *mcp.Tool, e Effect) *mcp.ElicitParams {
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	msg := c.message(ctx, &ConfirmCall{Tool: t.Name, Title: title, Effect: e, Arguments: req.Params.Arguments, Request: req})
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: msg,
		// A form with no fields: the person only accepts, declines or
		// cancels. The properties object must be there, empty: the
		// TypeScript SDK refuses a form schema without one.
		RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
	}
}

// message words the question about call, with what a person would not
// see for what it is written as escapes.
func (c *confirmer) message(ctx context.Context, call *ConfirmCall) string {
	var msg string
	if c.opts.Message != nil {
		msg = c.opts.Message(ctx, call)
	}
	if msg == "" {
		msg = defaultQuestion(call.Tool, call.Effect, call.Arguments)
	}
	return visible(msg)
}

// defaultQuestion words the question about a call to tool of effect e
// with args.
func defaultQuestion(tool string, e Effect, args json.RawMessage) string {
	var does string
	switch {
	case e&destructiveBit != 0:
		does = "It changes or deletes what exists"
	case e&Write != 0:
		does = "It adds data"
	default:
		does = "It reads data"
	}
	if e&OpenWorld != 0 {
		does += ", outside this server"
	}
	shown := "none"
	if a := bytes.TrimSpace(args); len(a) > 0 && !bytes.Equal(a, []byte("{}")) && !bytes.Equal(a, []byte("null")) {
		shown = clip(string(a), 500)
	}
	return fmt.Sprintf("Allow the tool %q to run? %s. Arguments: %s", tool, does, shown)
}

// visible returns s with each rune that a person would not see for what
// it is written as a Go escape: controls (but tab and newline), format
// characters such as U+202E and U+200B, invalid UTF-8, and what Unicode
// leaves unassigned.
func visible(s string) string {
	clean := true
	for _, r := range s {
		if !shows(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case shows(r):
			b.WriteRune(r)
		case r == utf8.RuneError:
			// The rune of a byte that is not UTF-8 (or U+FFFD itself).
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
			} else {
				b.WriteString(`\ufffd`)
			}
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// shows reports whether r shows as itself: a letter, mark, number,
// punctuation, symbol or space separator (unicode.IsGraphic), a tab or
// a newline.
func shows(r rune) bool {
	return r == '\n' || r == '\t' || (r != utf8.RuneError && unicode.IsGraphic(r))
}

// formElicitation reports whether a client with capabilities caps can
// answer a form elicitation.
func formElicitation(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	// Neither mode declared is form, as go-sdk reads it.
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// multiRoundTrip reports whether the session's client speaks the
// 2026-07-28 protocol, where the server asks through input requests:
// exactly as go-sdk decides it, so that a result with input requests is
// sent as one.
func multiRoundTrip(ss *mcp.ServerSession) bool {
	v := "2026-07-28" // go-sdk's default, without initialize parameters
	if ss != nil {
		if p := ss.InitializeParams(); p != nil {
			v = p.ProtocolVersion
		}
	}
	return v >= "2026-07-28"
}

// The request state is base64url of: a version byte, the expiry in Unix
// milliseconds, a random nonce, the binding of the call, and the HMAC-SHA256
// of all that under the confirmer's key.
const (
	stateVersion = 1
	nonceSize    = 16
	statePayload = 1 + 8 + nonceSize + sha256.Size
	stateSize    = statePayload + sha256.Size
)

var errExpired = errors.New("the answer came after it expired")

// binding returns the digest of what an answer is bound to: the tool, the
// arguments (canonical: keys sorted, spaces gone), the caller and its
// scope.
func (c *confirmer) binding(ctx context.Context, info *callInfo, req *mcp.CallToolRequest, tool string) [sha256.Size]byte {
	var caller string
	switch {
	case c.opts.Caller != nil:
		caller = "caller:" + c.opts.Caller(ctx, req)
	case req.Extra != nil && req.Extra.TokenInfo != nil:
		ti := req.Extra.TokenInfo
		scopes := slices.Clone(ti.Scopes)
		slices.Sort(scopes)
		caller = "token:" + ti.UserID + "\x00" + strings.Join(scopes, " ")
	default:
		caller = fmt.Sprintf("session:%p", req.Session)
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte("mcpeffect confirm v1"), []byte(tool), canonicalArgs(req.Params.Arguments), []byte(caller), {byte(info.scope)}} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// canonicalArgs returns args in a canonical form, so that the same
// arguments sent again with keys in another order or other spacing bind
// the same. Where a key is given twice, the last counts, as go-sdk
// decodes. Arguments that are not JSON are taken as they are.
func canonicalArgs(args json.RawMessage) []byte {
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

// mint returns a new request state for binding.
func (c *confirmer) mint(binding [sha256.Size]byte) (string, error) {
	var b [stateSize]byte
	b[0] = stateVersion
	binary.BigEndian.PutUint64(b[1:9], uint64(time.Now().Add(c.opts.Expiry).UnixMilli()))
	if _, err := io.ReadFull(rand.Reader, b[9:9+nonceSize]); err != nil {
		return "", err
	}
	copy(b[9+nonceSize:statePayload], binding[:])
	mac := hmac.New(sha256.New, c.key)
	mac.Write(b[:statePayload])
	mac.Sum(b[:statePayload])
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// verify returns nil if state is one that c minted for binding, not
// expired and never accepted before, and marks it accepted.
func (c *confirmer) verify(state string, binding [sha256.Size]byte) error {
	b, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(b) != stateSize || b[0] != stateVersion {
		return errors.New("its request state is not one this server makes")
	}
	mac := hmac.New(sha256.New, c.key)
	mac.Write(b[:statePayload])
	if !hmac.Equal(mac.Sum(nil), b[statePayload:]) {
		return errors.New("its request state is not signed by this server")
	}
	if !hmac.Equal(b[9+nonceSize:statePayload], binding[:]) {
		return errors.New("it answers a question about another call (another tool, other arguments or another caller)")
	}
	expiry := int64(binary.BigEndian.Uint64(b[1:9]))
	now := time.Now()
	if now.UnixMilli() > expiry {
		return errExpired
	}
	var nonce [nonceSize]byte
	copy(nonce[:], b[9:9+nonceSize])
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, seen := c.used[nonce]; seen {
		return errors.New("it was accepted once already")
	}
	// Forget the answers whose states have expired, since those are
	// refused anyway: the set holds no more than the answers of one
	// expiry.
	if now.Sub(c.lastPrune) > c.opts.Expiry/4 {
		for n, exp := range c.used {
			if now.UnixMilli() > exp {
				delete(c.used, n)
			}
		}
		c.lastPrune = now
	}
	c.used[nonce] = expiry
	return nil
}
