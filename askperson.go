package mcpeffect

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that asks its own way: ConfirmOptions AskPerson puts the
// question the server's way (on a page of its own, say), and the wrapper
// of AddTool carries it through whichever protocol the client speaks,
// and builds every refusal.

// A ConfirmReply is what [ConfirmOptions] AskPerson makes of a call that
// needs a person's confirmation: a question to put through the client,
// or the answer that settles the call.
type ConfirmReply struct {
	// Ask, if not nil, is the question to put through the client: a
	// URL-mode elicitation that sends the person to a page of the
	// server's, say, or a form. The wrapper puts it as the client's
	// protocol lets it: before 2026-07-28 with an elicitation request of
	// its own, waiting for the answer; from 2026-07-28 in the call's
	// result, as an input request with State as its request state (and
	// a structured denial whose hint is [URLHint] for a URL-mode
	// elicitation, [ConfirmationHint] for a form), for the client to
	// call again with its answer. Either way, AskPerson is then called
	// again for the call that carries the answer, with State and the
	// client's answer in the [ConfirmCall]. Its message reaches the
	// person as the question of the form does: control and format
	// characters written as escapes.
	Ask *mcp.ElicitParams
	// State names the question Ask, so that AskPerson finds it again
	// when the answer comes; it may not be empty. From 2026-07-28 it
	// goes through the client, which may change it or send it with
	// another call: AskPerson must take a State only as a question it
	// asked about a call of the same [ConfirmCall] Binding.
	State string

	// Answer settles the call, when Ask is nil: "accept" runs it;
	// "unsupported", for a client that cannot be asked, runs it
	// unconfirmed if [ConfirmOptions] RunIfClientCannotAsk is set, and
	// refuses it otherwise; any other ("decline", "cancel", "failed",
	// "invalid") refuses it with a [NotConfirmedError] of this Answer and
	// Detail. A reply with neither Ask nor Answer refuses the call as
	// failed.
	Answer string
	// Detail says, for a refusal, what the person or the client did, in
	// a few words: it reaches the caller in the NotConfirmedError.
	Detail string
}

// maxAskRounds bounds the questions that AskPerson may put through an
// elicitation request of the wrapper's, in one call, before 2026-07-28:
// each waits for the client, and an AskPerson that asks again after every
// answer must not hold the call forever. From 2026-07-28 the client
// makes each round a call of its own.
const maxAskRounds = 3

// askPerson has the options' AskPerson confirm the call req of tool t, of
// effect e by a caller of scope: the counterpart of confirm's form, with
// the same results.
func (c *confirmer) askPerson(ctx context.Context, req *mcp.CallToolRequest, t *mcp.Tool, e Effect, scope Scope) (_ *mcp.CallToolResult, answer string, _ error) {
	call := &ConfirmCall{
		Tool: t.Name, Title: toolTitle(t), Effect: e, Arguments: req.Params.Arguments, Request: req,
		Binding: c.states.binding(ctx, scope, req, t.Name),
	}
	refuse := func(answer, detail string) (*mcp.CallToolResult, string, error) {
		return nil, answer, (&NotConfirmedError{Tool: t.Name, Effect: e, Answer: answer, Detail: detail}).rpcError()
	}
	modern := multiRoundTrip(req.Session)
	if modern && req.Params.RequestState != "" {
		// A call made again with the answer to a question: whatever it
		// carries, AskPerson is to judge it.
		call.State = req.Params.RequestState
		call.Reply, _ = req.Params.InputResponses[confirmInput].(*mcp.ElicitResult)
	}
	for round := 1; ; round++ {
		reply, err := c.opts.AskPerson(ctx, call)
		if err != nil {
			return nil, "failed", err
		}
		if reply.Ask == nil {
			switch reply.Answer {
			case "accept":
				return nil, "accept", nil
			case "unsupported":
				if c.opts.RunIfClientCannotAsk {
					return nil, "unasked", nil
				}
			case "":
				return refuse("failed", "the server neither asked nor answered")
			}
			return refuse(reply.Answer, reply.Detail)
		}
		if reply.State == "" {
			return refuse("failed", "the server asked without a state to find its question by")
		}
		ask := *reply.Ask
		ask.Message = visible(ask.Message)
		if modern {
			hint := ConfirmationHint
			if ask.Mode == "url" {
				hint = URLHint
			}
			return &mcp.CallToolResult{
				Meta:          mcp.Meta{AuthorizationMetaKey: newAuthorizationDenial(RemediationAvailable, RemediationHint{Type: hint})},
				InputRequests: mcp.InputRequestMap{confirmInput: &ask},
				RequestState:  reply.State,
			}, "", nil
		}
		if round > maxAskRounds {
			return refuse("failed", fmt.Sprintf("the server asked %d times in one call", maxAskRounds))
		}
		res, err := req.Session.Elicit(ctx, &ask)
		call.State, call.Reply = reply.State, res
		if err != nil {
			// No answer will come to this call: AskPerson is told, so
			// that it withdraws its question, and the call is refused for
			// what failed.
			call.Reply = nil
			if _, werr := c.opts.AskPerson(ctx, call); werr != nil {
				err = fmt.Errorf("%v; then: %v", err, werr)
			}
			return refuse("failed", err.Error())
		}
	}
}

// CanonicalArguments returns the call's arguments as its Binding reads
// them: one JSON object, its keys sorted and without spaces, a key given
// twice with its last value (as go-sdk decodes it for the handler), and
// {} for none. Arguments that are not one JSON value are returned as they
// are (go-sdk refuses them before the wrappers ask anything).
func (c *ConfirmCall) CanonicalArguments() json.RawMessage {
	return canonicalArgs(c.Arguments)
}
