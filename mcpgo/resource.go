package mcpgo

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
)

// AddResource declares in r that reading res needs scope need, and adds
// it to s with [server.MCPServer.AddResource]. The handler runs only
// when the middleware of [ServerOptions], which decides every
// resources/read, let the read through; on a server without it, every
// read is refused, as [AddTool] says.
//
// A resource added with mcp-go alone needs read-only (see
// [mcpeffect.Registry.ResourceScope]), so that the zero Scope reads
// nothing; declare through AddResource what needs more.
//
// It panics on a nil handler, if need is not ReadOnly, NonDestructive or
// Full, or if the URI is already declared with another scope.
func AddResource(s *server.MCPServer, r *mcpeffect.Registry, res mcp.Resource, need mcpeffect.Scope, h server.ResourceHandlerFunc) {
	if h == nil {
		panic("mcpgo: AddResource: nil handler")
	}
	if err := r.DeclareResource(res.URI, need); err != nil {
		panic(err)
	}
	s.AddResource(res, enforcedRead(h))
}

// AddResourceTemplate is [AddResource] for a resource template: reading a
// URI that it matches needs scope need. mcp-go tries the templates that
// match a URI in no fixed order, and the scope is that of
// [mcpeffect.Registry.ResourceScope], which tries them by their text:
// declare templates whose URIs do not overlap, or overlap with the same
// scope. It panics where AddResource does, on a template without its
// URITemplate, and on one that is not valid.
func AddResourceTemplate(s *server.MCPServer, r *mcpeffect.Registry, t mcp.ResourceTemplate, need mcpeffect.Scope, h server.ResourceTemplateHandlerFunc) {
	if h == nil {
		panic("mcpgo: AddResourceTemplate: nil handler")
	}
	if t.URITemplate == nil || t.URITemplate.Template == nil {
		panic(fmt.Sprintf("mcpgo: AddResourceTemplate: template %q has no URI template", t.Name))
	}
	if err := r.DeclareResourceTemplate(t.URITemplate.Raw(), need); err != nil {
		panic(err)
	}
	s.AddResourceTemplate(t, server.ResourceTemplateHandlerFunc(enforcedRead(server.ResourceHandlerFunc(h))))
}

// enforcedRead returns h, a resource's handler, such that it runs only
// when the middleware of ServerOptions let the read through.
func enforcedRead(h server.ResourceHandlerFunc) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		if uri := req.Params.URI; !admitted(ctx, methodReadResource, uri) {
			return nil, notEnforced(ctx, fmt.Sprintf("resource %q", uri), "read")
		}
		return h(ctx, req)
	}
}

// AddPrompt declares in r that getting p needs scope need, and adds it to
// s with [server.MCPServer.AddPrompt], as [AddResource] does for a
// resource. A prompt added with mcp-go alone needs read-only. It panics
// on a nil handler, if need is not ReadOnly, NonDestructive or Full, or
// if the prompt is already declared with another scope.
func AddPrompt(s *server.MCPServer, r *mcpeffect.Registry, p mcp.Prompt, need mcpeffect.Scope, h server.PromptHandlerFunc) {
	if h == nil {
		panic("mcpgo: AddPrompt: nil handler")
	}
	if err := r.DeclarePrompt(p.Name, need); err != nil {
		panic(err)
	}
	name := p.Name
	s.AddPrompt(p, func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if !admitted(ctx, methodGetPrompt, name) {
			return nil, notEnforced(ctx, fmt.Sprintf("prompt %q", name), "given")
		}
		return h(ctx, req)
	})
}
