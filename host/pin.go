package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpeffect/mcpeffect/manifest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PinnedTo returns sending middleware that holds the tools of a's server
// to m, a manifest of them whose signature the host has verified
// ([manifest.Verify]), written by `mcpeffect manifest`: a tools/call of a
// tool that m does not list, that the server does not list, or whose
// definition as the server lists it (its description, schemas, hints and
// outcomes: see [manifest.Definition]) no longer has the content hash m
// holds, is not sent, and CallTool returns a [*NotSentError] that names
// the parts that changed. Other calls go on to the next handler, such as
// a's own [Approver.Middleware], which decides them by its policy.
//
// Install it before a's Middleware, so that a changed tool is refused
// before anyone is asked about it:
//
//	client.AddSendingMiddleware(approver.PinnedTo(m), approver.Middleware())
//
// It looks tools up as a does, and so sees the server's tools anew after
// notifications/tools/list_changed when [Approver.ToolListChanged] is the
// client's handler of them. m must not be changed after the call.
func (a *Approver) PinnedTo(m *manifest.Manifest) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			if err := a.matchManifest(ctx, req, m); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		}
	}
}

// matchManifest returns the error that refuses the call req, or nil if
// the tool it calls is listed as m holds it.
func (a *Approver) matchManifest(ctx context.Context, req mcp.Request, m *manifest.Manifest) error {
	session, _ := req.GetSession().(*mcp.ClientSession)
	params, _ := req.GetParams().(*mcp.CallToolParams)
	if session == nil || params == nil {
		return errors.New("mcpeffect: Approver: a tools/call without a client session or its params is not sent")
	}
	deny := func(reason string) error {
		return &NotSentError{Tool: params.Name, Action: Deny, Reason: reason}
	}
	pinned := m.Tool(params.Name)
	if pinned == nil {
		return deny("the manifest the host is pinned to does not list it")
	}
	if pinned.ContentHash == "" {
		return deny("the manifest the host is pinned to holds no content hash for it (a manifest of a registry, not of a server)")
	}
	tool, err := a.lookup(ctx, session, params.Name)
	if err != nil {
		return fmt.Errorf("mcpeffect: call to tool %q not sent: cannot look up its definition: %w", params.Name, err)
	}
	if tool == nil {
		return deny("the server does not list it")
	}
	def, err := manifest.DefinitionOf(tool)
	if err != nil {
		return deny(fmt.Sprintf("its definition cannot be hashed: %v", err))
	}
	if def.Hash() == pinned.ContentHash {
		return nil
	}
	parts := pinned.Digests.Changed(def.Digests())
	if pinned.Digests == nil || len(parts) == 0 {
		parts = []string{"definition"}
	}
	return deny("its " + strings.Join(parts, ", ") + " changed since the manifest the host is pinned to was signed")
}
