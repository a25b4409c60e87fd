package mcpgo

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
)

// confirm asks a person, through the client's form elicitation, to
// confirm req, a call that the enforcer's decision d said needs it. It
// returns nil when the handler may run: on the person's explicit accept,
// or, for a client that cannot ask, when the options let such calls run
// unconfirmed. Otherwise it returns the error of a
// [mcpeffect.NotConfirmedError].
//
// It asks within the call, as mcp-go's RequestElicitation does: a client
// of protocol 2026-07-28, where a server may no longer send requests of
// its own, gets the call refused ("failed"), since mcp-go gives this
// adapter no way to ask it within the call's own round trips.
func (a *adapter) confirm(ctx context.Context, req mcp.CallToolRequest, d mcpeffect.Decision) error {
	name := req.Params.Name
	refuse := func(answer, detail string) error {
		return notConfirmed(ctx, &mcpeffect.NotConfirmedError{Tool: name, Effect: d.Effect, Answer: answer, Detail: detail})
	}
	s := server.ServerFromContext(ctx)
	if s == nil || !formElicitation(ctx) {
		if a.enf.RunsUnconfirmed() {
			return nil
		}
		return refuse("unsupported", "")
	}
	call := &mcpeffect.ConfirmCall{Tool: name, Effect: d.Effect, Arguments: argumentsJSON(req)}
	if t := s.GetTool(name); t != nil {
		call.Title = t.Tool.Title
		if call.Title == "" {
			call.Title = t.Tool.Annotations.Title
		}
	}
	res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{
		Params: mcp.ElicitationParams{
			Mode:    "form",
			Message: a.enf.ConfirmQuestion(ctx, call),
			// A form with no fields: the person only accepts, declines
			// or cancels. The TypeScript SDK refuses a form schema
			// without its properties object.
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		},
	})
	switch {
	case err != nil:
		return refuse("failed", err.Error())
	case res == nil:
		return refuse("failed", "no answer")
	case res.Action == mcp.ElicitationResponseActionAccept:
		return nil
	}
	return refuse(string(res.Action), "")
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
