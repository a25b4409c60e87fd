package mcpgo

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
)

// confirmInput is the id of the input request that asks for
// confirmation.
const confirmInput = "mcpeffect/confirm"

// confirm has a person confirm req, a call that the enforcer's decision
// d said needs it, through the client's form elicitation. It returns nil,
// nil when the handler may run: on the person's explicit accept, or, for
// a client that cannot ask, when the options let such calls run
// unconfirmed. Otherwise it returns the result that asks the client for
// the person's answer, or the error of a [mcpeffect.NotConfirmedError].
//
// It asks as the protocol of 2026-07-28 has a server ask, within the
// call (a multi round-trip request): the result asks, and the call comes
// again with the answer. For a client of an earlier protocol, mcp-go asks
// with the elicitation request of that protocol and calls again itself,
// with the answer the client sent.
func (a *adapter) confirm(ctx context.Context, req mcp.CallToolRequest, d mcpeffect.Decision) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	refuse := func(answer, detail string) error {
		a.enf.Answered(ctx, d, answer)
		return notConfirmed(ctx, &mcpeffect.NotConfirmedError{Tool: name, Effect: d.Effect, Answer: answer, Detail: detail})
	}
	if _, answered := req.Params.InputResponses[confirmInput]; answered {
		res := server.ElicitationResponse(req.Params.InputResponses, confirmInput)
		switch {
		case res == nil:
			return nil, refuse("invalid", "the answer is not that of an elicitation")
		case res.Action == mcp.ElicitationResponseActionAccept:
			a.enf.Answered(ctx, d, "accept")
			return nil, nil
		}
		return nil, refuse(string(res.Action), "")
	}
	if !formElicitation(ctx) {
		if a.runUnasked {
			a.enf.Answered(ctx, d, "unasked")
			return nil, nil
		}
		return nil, refuse("unsupported", "")
	}
	call := &mcpeffect.ConfirmCall{Tool: name, Effect: d.Effect, Arguments: argumentsJSON(req)}
	if s := server.ServerFromContext(ctx); s != nil {
		if t := s.GetTool(name); t != nil {
			call.Title = t.Tool.Title
			if call.Title == "" {
				call.Title = t.Tool.Annotations.Title
			}
		}
	}
	return server.NewInputRequestBuilder("").Elicit(confirmInput, mcp.ElicitationParams{
		Mode:    "form",
		Message: a.enf.ConfirmQuestion(ctx, call),
		// A form with no fields: the person only accepts, declines or
		// cancels. The TypeScript SDK refuses a form schema without its
		// properties object.
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}).ToolResult(), nil
}

// formElicitation reports whether the client of the session on ctx
// declared that it can ask a person with a form. An empty elicitation
// capability is the form, as the specification reads it for clients that
// predate the URL mode.
func formElicitation(ctx context.Context) bool {
	session, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok {
		return false
	}
	e := session.GetClientCapabilities().Elicitation
	return e != nil && (e.Form != nil || e.URL == nil)
}
