package mcpeffect

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

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
// It applies to the tools added with [AddTool] and [AddToolHandler],
// whose wrappers ask.
//
// On the protocol versions before 2026-07-28, the wrapper sends the
// client an elicitation request (a form with no fields: the message and
// accept, decline or cancel) and waits for the answer. From 2026-07-28,
// where a server may not send requests of its own, it answers the call
// with an input request instead (multi-round-trip requests), and the
// client calls again with the person's answer and the request state the
// server gave; the state is signed and binds the answer to this tool,
// these arguments, this caller and a short expiry, and each is accepted
// once (by the store of Answers: by default, once per process), so that
// an answer cannot be forged nor replayed for another call. A server
// that runs in several processes must give them the same Key, and a
// store of used answers that they share. Over stateless Streamable HTTP, a client of a protocol before
// 2026-07-28 cannot be asked at all (the server cannot send it a
// request): it counts as a client that cannot ask.
//
// A server that asks its own way, on a page of its own where the client
// cannot answer for the person, gives AskPerson: the wrappers then put
// its question through the client on either protocol, and refuse the
// calls it does not let run, as they do for the form.
type ConfirmOptions struct {
	// Ask reports whether a call to tool, of effect e (for a tool whose
	// effect depends on its arguments, the effect of this call), needs a
	// person's confirmation. If nil, destructive calls do.
	Ask func(tool string, e Effect) bool

	// Message returns the question put to the person, such as
	// "Delete task 'ship v2' and its 3 steps?". If nil, or if it returns
	// "", the question names the tool, says what its effect does and
	// shows the arguments. Whoever words it, the question reaches the
	// person with its control and format characters written as escapes
	// (U+202E, which shows the text after it reversed, as \u202e; tab
	// and newline are kept): text that came from a call's arguments or
	// from the data cannot disguise what the person is asked.
	Message func(ctx context.Context, call *ConfirmCall) string

	// RunIfClientCannotAsk runs the calls that need confirmation
	// unconfirmed when the client cannot ask a person (it declared no
	// form elicitation). Left false, the default, such calls are
	// refused.
	RunIfClientCannotAsk bool

	// Key signs the request states of the 2026-07-28 protocol. If empty,
	// the middleware makes a random one, so that a state is good only in
	// the process that made it. It must be at least 32 bytes, and secret.
	Key []byte

	// Expiry is how long an answer may take, from the question to the
	// call that carries it, on the 2026-07-28 protocol. Zero means 10
	// minutes. A call with an expired answer is asked again.
	Expiry time.Duration

	// Answers records the answers accepted, so that each is accepted
	// once. If nil, an in-process store does, which holds for one
	// process: see [AnswerStore].
	Answers AnswerStore

	// Now returns the current time, for the expiry of answers. If nil,
	// [time.Now]; tests give a clock of their own.
	Now func() time.Time

	// Caller returns who makes a call, for the binding of an answer to
	// its caller: a user id, a token's id. If nil, the caller is the
	// token's UserID and scope strings ([auth.TokenInfo]), or, without a
	// token, the session (stdio, in memory). Give one when tokens of
	// different people may carry the same UserID and scopes.
	//
	// [auth.TokenInfo]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#TokenInfo
	Caller func(ctx context.Context, req *mcp.CallToolRequest) string

	// AskPerson, if non-nil, asks the person in the server's own way, in
	// place of the form with no fields that the wrappers send otherwise:
	// on a page of the server's own, through a URL-mode elicitation,
	// where the client cannot answer for the person, say. The wrapper of
	// the call's tool calls it once go-sdk has checked the arguments
	// against the tool's schema, with the call (its effect, its title,
	// its arguments, and its Binding, for the server to bind what it
	// keeps to this call of this caller); AskPerson returns a question
	// to put through the client, or the answer that settles the call
	// (see [ConfirmReply]). The wrapper puts the question as the
	// client's protocol allows, then calls AskPerson again with the
	// client's answer; it runs the handler on an "accept" alone, and
	// refuses the call otherwise with a [NotConfirmedError]. An error
	// AskPerson returns is the call's, as its handler's would be (a
	// fault, a bound of the server's reached). Before 2026-07-28, when
	// the elicitation request fails, AskPerson is called again with a
	// nil Reply, so that it withdraws its question, and the call is
	// refused as failed, whatever it answers.
	//
	// With AskPerson, Message, Key, Expiry and Answers are not used:
	// the server words its question, and keeps its questions and the
	// answers itself, as it chooses. It must take an answer only for the
	// call it asked about (the same Binding), and each answer once.
	AskPerson func(ctx context.Context, call *ConfirmCall) (ConfirmReply, error)
}

// confirmInput is the id of the input request that asks for confirmation.
const confirmInput = "mcpeffect/confirm"

// A confirmer asks for the confirmations of one middleware.
type confirmer struct {
	opts   ConfirmOptions
	states requestStates
}

func newConfirmer(o *ConfirmOptions) *confirmer {
	c := &confirmer{opts: *o}
	st := requestStates{now: o.Now, used: o.Answers, caller: o.Caller}
	if st.now == nil {
		st.now = time.Now
	}
	switch {
	case len(o.Key) == 0:
		st.key = make([]byte, 32)
		if _, err := io.ReadFull(rand.Reader, st.key); err != nil {
			panic(fmt.Sprintf("mcpeffect: making a key for confirmations: %v", err))
		}
	case len(o.Key) < 32:
		panic(fmt.Sprintf("mcpeffect: ConfirmOptions.Key has %d bytes; at least 32 are needed", len(o.Key)))
	default:
		st.key = slices.Clone(o.Key)
	}
	if c.opts.Expiry <= 0 {
		c.opts.Expiry = 10 * time.Minute
	}
	st.expiry = c.opts.Expiry
	if st.used == nil {
		st.used = newMemoryAnswers(st.now, st.expiry)
	}
	c.states = st
	if c.opts.Ask == nil {
		c.opts.Ask = func(_ string, e Effect) bool { return e&Destructive == Destructive }
	}
	return c
}

// confirm has a person confirm the call req of tool t, of effect e by a
// caller of scope, which the options ask for. It returns nil,
// nil when the handler may run; otherwise a result that asks the client
// for the person's answer, or the error that refuses the call. answer is
// what came of the question (see Decision.Answer), or "" while it is
// asked.
func (c *confirmer) confirm(ctx context.Context, req *mcp.CallToolRequest, t *mcp.Tool, e Effect, scope Scope) (_ *mcp.CallToolResult, answer string, _ error) {
	if c.opts.AskPerson != nil {
		return c.askPerson(ctx, req, t, e, scope)
	}
	tool := t.Name
	refuse := func(answer, detail string) (*mcp.CallToolResult, string, error) {
		return nil, answer, (&NotConfirmedError{Tool: tool, Effect: e, Answer: answer, Detail: detail}).rpcError()
	}
	if !formElicitation(req.ClientCapabilities()) {
		if c.opts.RunIfClientCannotAsk {
			return nil, "unasked", nil
		}
		return refuse("unsupported", "")
	}
	if !multiRoundTrip(req.Session) {
		res, err := req.Session.Elicit(ctx, question(ctx, c.opts.Message, req, t, e))
		switch {
		case err != nil:
			return refuse("failed", err.Error())
		case res.Action == "accept":
			return nil, "accept", nil
		}
		return refuse(res.Action, "")
	}

	// The 2026-07-28 protocol: the answer comes with a call of its own.
	// Whatever the client puts in inputResponses counts only with a
	// request state this server signed for this very call.
	binding := c.states.binding(ctx, scope, req, tool)
	if req.Params.RequestState == "" {
		return c.ask(ctx, req, t, e, binding)
	}
	switch err := c.states.verify(ctx, req.Params.RequestState, binding); {
	case errors.Is(err, errExpired):
		return c.ask(ctx, req, t, e, binding)
	case err != nil:
		return refuse("invalid", err.Error())
	}
	reply, ok := req.Params.InputResponses[confirmInput].(*mcp.ElicitResult)
	switch {
	case !ok || reply == nil:
		return refuse("invalid", "it carries no answer to the question")
	case reply.Action == "accept":
		return nil, "accept", nil
	}
	return refuse(reply.Action, "")
}

// ask returns the result that asks the client for the person's answer,
// with a new request state.
func (c *confirmer) ask(ctx context.Context, req *mcp.CallToolRequest, t *mcp.Tool, e Effect, binding [sha256.Size]byte) (*mcp.CallToolResult, string, error) {
	state, err := c.states.mint(binding)
	if err != nil {
		return nil, "failed", (&NotConfirmedError{Tool: t.Name, Effect: e, Answer: "failed", Detail: err.Error()}).rpcError()
	}
	return &mcp.CallToolResult{
		Meta:          mcp.Meta{AuthorizationMetaKey: newAuthorizationDenial(RemediationAvailable, RemediationHint{Type: ConfirmationHint})},
		InputRequests: mcp.InputRequestMap{confirmInput: question(ctx, c.opts.Message, req, t, e)},
		RequestState:  state,
	}, "", nil
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
