package host

import (
	"context"
	"encoding/json"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnableToolResolution lets the Approvers of client c resolve calls
// (see [Policy] ResolveCalls) with the experimental tool-resolution
// extension ([mcpeffect.ToolResolutionExtension]): it registers the
// extension's method, tools/resolve, for c to send. The client must also
// declare the extension in its capabilities, which only [mcp.NewClient]
// sets:
//
//	caps := &mcp.ClientCapabilities{}
//	caps.AddExtension(mcpeffect.ToolResolutionExtension, nil)
//	client := mcp.NewClient(impl, &mcp.ClientOptions{Capabilities: caps, ToolListChangedHandler: approver.ToolListChanged})
//	host.EnableToolResolution(client)
//	client.AddSendingMiddleware(approver.Middleware())
//
// It returns go-sdk's error if the method cannot be registered.
func EnableToolResolution(c *mcp.Client) error {
	return mcp.AddSendingCustomMethod[*mcpeffect.ResolveToolParams, *resolveResult](c, mcpeffect.ResolveToolMethod)
}

// resolveResult is a tools/resolve result as a server sent it, its
// annotations raw, so that a hint it left out shows.
type resolveResult struct {
	mcp.ResultBase
	ResultType  string          `json:"resultType"`
	Name        string          `json:"name"`
	Annotations json.RawMessage `json:"annotations"`
}

// resolveCall returns the hints of the call params of tool, which the
// server listed with hints static, as the server resolves them; or static
// when it cannot: the tool is not marked resolvable, the server does not
// advertise the extension, the request fails, or the answer is not one
// the extension allows (a hint missing, another tool, hints that break
// the conservative bound of the static ones).
func resolveCall(ctx context.Context, session *mcp.ClientSession, tool *mcp.Tool, params *mcp.CallToolParams, static Hints) Hints {
	if !mcpeffect.MarkedResolvable(tool) || !serverResolves(session) {
		return static
	}
	args := json.RawMessage("{}")
	if params.Arguments != nil {
		raw, err := json.Marshal(params.Arguments)
		if err != nil || len(raw) == 0 || raw[0] != '{' {
			return static
		}
		args = raw
	}
	res, err := mcp.CallCustomMethod[*mcpeffect.ResolveToolParams, *resolveResult](ctx, session, mcpeffect.ResolveToolMethod,
		&mcpeffect.ResolveToolParams{Name: params.Name, Arguments: args})
	if err != nil || res == nil || res.ResultType != "complete" || res.Name != params.Name {
		return static
	}
	resolved, err := ParseHints(res.Annotations)
	if err != nil || resolved.ReadOnly == nil || resolved.Destructive == nil || resolved.Idempotent == nil || resolved.OpenWorld == nil {
		return static
	}
	if !withinBound(resolved, static.Assumed()) {
		return static
	}
	return resolved
}

// serverResolves reports whether the server of session advertises the
// tool-resolution extension.
func serverResolves(session *mcp.ClientSession) bool {
	res := session.InitializeResult()
	if res == nil || res.Capabilities == nil {
		return false
	}
	_, ok := res.Capabilities.Extensions[mcpeffect.ToolResolutionExtension]
	return ok
}

// withinBound reports whether the resolved hints r of a call respect the
// conservative bound of the tool's static hints s (all explicit), as the
// extension defines it: a resolution may be more careful than the static
// hints, never less.
func withinBound(r, s Hints) bool {
	switch {
	case *s.ReadOnly && !*r.ReadOnly:
		return false
	case !*s.Destructive && !*s.ReadOnly && *r.Destructive:
		return false
	case *s.Idempotent && !*r.ReadOnly && !*r.Idempotent:
		return false
	case !*s.OpenWorld && *r.OpenWorld:
		return false
	}
	return true
}
