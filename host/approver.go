package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A ConfirmFunc asks a person whether a tool call may be sent, and
// returns their answer. An error means that no answer could be had; the
// call is not sent, and the caller of CallTool gets the error.
type ConfirmFunc func(context.Context, *Confirmation) (bool, error)

// A Confirmation is what a host shows a person it asks about a tool call.
// Its fields must not be changed.
type Confirmation struct {
	// Session is the session the call would be sent on.
	Session *mcp.ClientSession
	// Params is the call: the tool's name and its arguments.
	Params *mcp.CallToolParams
	// Tool is the tool as the server listed it, or nil if the server does
	// not list it.
	Tool *mcp.Tool
	// Effect is what the hints that the policy decided from amount to, a
	// hint left out counting as its worst case. They are the tool's hints
	// as the server listed them, which for a tool whose effect depends on
	// its arguments are the worst case of its calls; with the policy's
	// ResolveCalls, they are the hints the server resolved for this call,
	// the effect of these arguments, whenever the resolution could be
	// used (see [Policy] ResolveCalls), and the tool's otherwise. A tool
	// the server does not list has the worst case of all.
	Effect mcpeffect.Effect
	// Reason says in a few words why the policy asks, such as "it is
	// destructive".
	Reason string
	// Changed names the parts of the tool's definition that changed since
	// a call to it was last approved ("description", "annotations"...),
	// or is nil.
	Changed []string
}

// An Approver applies a [Policy] to the tool calls of a go-sdk client,
// before they are sent: install [Approver.Middleware] with
// [mcp.Client.AddSendingMiddleware]. A call the policy allows is sent; one
// it denies is not, and CallTool returns a [*NotSentError]; for one it asks
// about, the Approver asks a person through its [ConfirmFunc], and sends
// the call only if they say yes.
//
// The Approver decides from the tool's annotations as the server listed
// them. It remembers the tools it sees listed, and when a call names one
// it has not seen, it lists the server's tools itself, following
// pagination. A tool the server does not list has no hints: the worst
// case. When the server's tools change, the Approver must forget them, or
// it would decide from hints the server no longer declares: make
// [Approver.ToolListChanged] the client's ToolListChangedHandler (or call
// it from the one the client has), which also has go-sdk ask the server
// for those notifications:
//
//	approver := host.NewApprover(policy, confirm)
//	client := mcp.NewClient(impl, &mcp.ClientOptions{ToolListChangedHandler: approver.ToolListChanged})
//	client.AddSendingMiddleware(approver.Middleware())
//
// The Approver pins the definition of each tool whose call it approves:
// its title, description, input schema and annotations (see [Pins]). When
// a server changes a tool it approved, within a session (after
// notifications/tools/list_changed, or a new listing) or between sessions
// (with pins saved and read back), it asks again, even where the policy
// allows the call. With the policy's AskAfterOpenWorld, it also remembers
// the sessions that have taken in the output of an open-world tool, and
// asks before their writes and open-world calls.
//
// A Policy is made for one server, which it trusts or not: give each
// server its own client and Approver. An Approver remembers the tools of
// the last session it saw a call on, and forgets them when a call comes
// on another session. It is safe for concurrent use.
type Approver struct {
	policy  Policy
	confirm ConfirmFunc
	pins    *Pins  // of the tools approved: see memory.go
	taint   taints // of the sessions that took in open-world output

	mu       sync.Mutex
	session  *mcp.ClientSession   // the session tools were listed on
	tools    map[string]*mcp.Tool // tools seen listed on session
	complete bool                 // tools holds every tool the server lists
	// generation counts the times tools were forgotten, so that a listing
	// begun before is not taken for the current one.
	generation uint64
}

// NewApprover returns an Approver that applies policy p to tool calls,
// asking confirm where p asks. A nil confirm declines every call p asks
// about. p.Tools is copied: changing it later changes nothing.
func NewApprover(p Policy, confirm ConfirmFunc) *Approver {
	p.Tools = maps.Clone(p.Tools)
	return &Approver{policy: p, confirm: confirm, pins: new(Pins)}
}

// ToolListChanged makes a forget the tools it has seen listed, so that
// the next call lists them again. Its signature is that of
// [mcp.ClientOptions] ToolListChangedHandler.
func (a *Approver) ToolListChanged(_ context.Context, req *mcp.ToolListChangedRequest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if req == nil || req.Session == nil || req.Session == a.session {
		a.forgetLocked(a.session)
	}
}

// forgetLocked forgets the tools seen, and makes s the current session.
func (a *Approver) forgetLocked(s *mcp.ClientSession) {
	a.session = s
	a.tools = nil
	a.complete = false
	a.generation++
}

// Middleware returns the sending middleware that applies a's policy to
// each tools/call, and remembers the tools of each tools/list. Every other
// method passes through untouched.
func (a *Approver) Middleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				session, _ := req.GetSession().(*mcp.ClientSession)
				gen := a.begin(session)
				res, err := next(ctx, method, req)
				if list, ok := res.(*mcp.ListToolsResult); ok && err == nil {
					a.remember(session, gen, list.Tools, false)
				}
				return res, err
			case "tools/call":
				call, err := a.approve(ctx, req)
				if err != nil {
					return nil, err
				}
				res, err := next(ctx, method, req)
				a.sent(call.session, call.name, call.effect)
				return res, err
			}
			return next(ctx, method, req)
		}
	}
}

// A call is a tools/call that an Approver let through.
type call struct {
	session *mcp.ClientSession
	name    string
	effect  mcpeffect.Effect // what the hints decided from amount to: see Confirmation.Effect
}

// approve returns the call req if it may be sent, asking where the
// policy, or what the Approver remembers, says so; and otherwise the
// error CallTool returns.
func (a *Approver) approve(ctx context.Context, req mcp.Request) (*call, error) {
	session, _ := req.GetSession().(*mcp.ClientSession)
	params, _ := req.GetParams().(*mcp.CallToolParams)
	if session == nil || params == nil {
		// go-sdk's own clients always send both: refuse what cannot be
		// looked up rather than let it through.
		return nil, errors.New("mcpeffect: Approver: a tools/call without a client session or its params is not sent")
	}
	tool, err := a.lookup(ctx, session, params.Name)
	if err != nil {
		return nil, fmt.Errorf("mcpeffect: call to tool %q not sent: cannot look up its annotations: %w", params.Name, err)
	}
	var hints Declared
	if tool != nil {
		hints = DeclaredOf(tool.Annotations)
		if a.policy.ResolveCalls {
			hints = resolveCall(ctx, session, tool, params, hints)
		}
	}
	c := &call{session: session, name: params.Name, effect: hints.Effect()}
	d, reason := a.policy.actionFor(params.Name, hints)
	d, reason, changed := a.recall(session, params.Name, tool, hints, d, reason)
	switch d {
	case Allow:
		a.approved(params.Name, tool)
		return c, nil
	case Ask:
		if a.confirm == nil {
			return nil, &NotSentError{Tool: params.Name, Action: Ask, Reason: reason}
		}
		ok, err := a.confirm(ctx, &Confirmation{
			Session: session,
			Params:  params,
			Tool:    tool,
			Effect:  c.effect,
			Reason:  reason,
			Changed: changed,
		})
		if err != nil {
			return nil, fmt.Errorf("mcpeffect: call to tool %q not sent: asking for confirmation: %w", params.Name, err)
		}
		if !ok {
			return nil, &NotSentError{Tool: params.Name, Action: Ask, Asked: true, Reason: reason}
		}
		a.approved(params.Name, tool)
		return c, nil
	}
	return nil, &NotSentError{Tool: params.Name, Action: Deny, Reason: reason}
}

// lookup returns the tool called name as the server lists it on session,
// or nil if the server does not list it.
func (a *Approver) lookup(ctx context.Context, session *mcp.ClientSession, name string) (*mcp.Tool, error) {
	a.mu.Lock()
	if a.session != session {
		a.forgetLocked(session)
	}
	tool, complete, gen := a.tools[name], a.complete, a.generation
	a.mu.Unlock()
	if tool != nil || complete {
		return tool, nil
	}

	// Each page goes through Middleware as well, which remembers it;
	// but go-sdk may answer from its own cache, without sending.
	var tools []*mcp.Tool
	seen := make(map[string]bool)
	for cursor := ""; ; {
		res, err := session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("listing tools: the server returned cursor %q twice", res.NextCursor)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	a.remember(session, gen, tools, true)
	for _, t := range tools {
		if t != nil && t.Name == name {
			tool = t
		}
	}
	return tool, nil
}

// begin returns the generation of the tools of session, for a listing
// about to start.
func (a *Approver) begin(session *mcp.ClientSession) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.session != session {
		a.forgetLocked(session)
	}
	return a.generation
}

// remember adds tools, listed on session by a listing begun at generation
// gen, to the tools seen, unless they were forgotten since. complete says
// that tools are all the server lists.
func (a *Approver) remember(session *mcp.ClientSession, gen uint64, tools []*mcp.Tool, complete bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.session != session || a.generation != gen {
		return
	}
	if a.tools == nil {
		a.tools = make(map[string]*mcp.Tool, len(tools))
	}
	for _, t := range tools {
		if t != nil {
			a.tools[t.Name] = t
		}
	}
	a.complete = a.complete || complete
}
