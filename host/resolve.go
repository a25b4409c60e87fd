package host

import (
	"context"
	"encoding/json"

	"github.com/mcpeffect/mcpeffect/resolution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnableToolResolution lets the Approvers of client c resolve calls
// (see [Policy] ResolveCalls) with the experimental tool-resolution
// extension ([resolution.Extension]): it registers the
// extension's method, tools/resolve, for c to send. The client must also
// declare the extension in its capabilities, which only [mcp.NewClient]
// sets:
//
//	caps := &mcp.ClientCapabilities{}
//	caps.AddExtension(resolution.Extension, nil)
//	client := mcp.NewClient(impl, &mcp.ClientOptions{Capabilities: caps, ToolListChangedHandler: approver.ToolListChanged})
//	host.EnableToolResolution(client)
//	client.AddSendingMiddleware(approver.Middleware())
//
// It returns go-sdk's error if the method cannot be registered.
func EnableToolResolution(c *mcp.Client) error {
	return mcp.AddSendingCustomMethod[*resolution.Params, *resolveResult](c, resolution.Method)
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
func resolveCall(ctx context.Context, session *mcp.ClientSession, tool *mcp.Tool, params *mcp.CallToolParams, static Declared) Declared {
	if !resolution.Marked(tool) || !serverResolves(session) {
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
	res, err := mcp.CallCustomMethod[*resolution.Params, *resolveResult](ctx, session, resolution.Method,
		&resolution.Params{Name: params.Name, Arguments: args})
	if err != nil || res == nil || res.ResultType != "complete" || res.Name != params.Name {
		return static
	}
	resolved, err := ParseDeclared(res.Annotations)
	if err != nil || resolved.ReadOnly == nil || resolved.Destructive == nil || resolved.Idempotent == nil || resolved.OpenWorld == nil {
		return static
	}
	if !resolved.Explicit().Within(static.Explicit()) {
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
	_, ok := res.Capabilities.Extensions[resolution.Extension]
	return ok
}
