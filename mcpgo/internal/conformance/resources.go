package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/mcpeffect/mcpeffect/mcpgo"
)

// resource returns the resource of the catalog at uri, as mcp-go declares
// it, and the scope it needs.
func resource(uri string) (mcp.Resource, mcpeffect.Scope) {
	r, ok := catalog.Resources[uri]
	if !ok || r.Template {
		panic("conformance: no resource " + uri + " in the catalog")
	}
	return mcp.NewResource(r.URI, r.Name, mcp.WithResourceDescription(r.Description), mcp.WithMIMEType(r.MIME)), r.Scope
}

// template returns the resource template of the catalog of uri, as
// mcp-go declares it, and the scope it needs.
func template(uri string) (mcp.ResourceTemplate, mcpeffect.Scope) {
	r, ok := catalog.Resources[uri]
	if !ok || !r.Template {
		panic("conformance: no resource template " + uri + " in the catalog")
	}
	return mcp.NewResourceTemplate(r.URI, r.Name, mcp.WithTemplateDescription(r.Description), mcp.WithTemplateMIMEType(r.MIME)), r.Scope
}

// prompt returns the prompt of the catalog named name, as mcp-go declares
// it, and the scope it needs.
func prompt(name string) (mcp.Prompt, mcpeffect.Scope) {
	p, ok := catalog.Prompts[name]
	if !ok {
		panic("conformance: no prompt " + name + " in the catalog")
	}
	opts := []mcp.PromptOption{mcp.WithPromptDescription(p.Description)}
	if p.Title != "" {
		opts = append(opts, mcp.WithPromptTitle(p.Title))
	}
	for _, a := range p.Arguments {
		aopts := []mcp.ArgumentOption{mcp.ArgumentDescription(a.Description)}
		if a.Required {
			aopts = append(aopts, mcp.RequiredArgument())
		}
		opts = append(opts, mcp.WithArgument(a.Name, aopts...))
	}
	return mcp.NewPrompt(p.Name, opts...), p.Scope
}

func text(uri, mime, s string) []mcp.ResourceContents {
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: mime, Text: s}}
}

func (c *conformance) addResources() {
	s, r := c.server, c.reg
	res, need := resource("test://static-text")
	mcpgo.AddResource(s, r, res, need, func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return text(req.Params.URI, "text/plain", "This is the content of the static text resource."), nil
	})
	res, need = resource("test://static-binary")
	mcpgo.AddResource(s, r, res, need, func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.BlobResourceContents{URI: req.Params.URI, MIMEType: "image/png", Blob: pngImage}}, nil
	})
	tmpl, need := template("test://template/{id}/data")
	mcpgo.AddResourceTemplate(s, r, tmpl, need, func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
		b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
		if err != nil {
			return nil, err
		}
		return text(req.Params.URI, "application/json", string(b)), nil
	})
	res, need = resource(catalog.WatchedURI)
	mcpgo.AddResource(s, r, res, need, func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		c.mu.Lock()
		n := c.watched
		c.mu.Unlock()
		return text(req.Params.URI, "text/plain", fmt.Sprintf("Watched resource content, changed %d times", n)), nil
	})
}

// changeWatched changes the watched resource every period, and tells the
// clients, until ctx is done. mcp-go keeps no list of subscribers: every
// client is told.
func (c *conformance) changeWatched(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.mu.Lock()
			c.watched++
			c.mu.Unlock()
			c.server.SendNotificationToAllClients(string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": catalog.WatchedURI})
		}
	}
}

func message(content mcp.Content) mcp.PromptMessage {
	return mcp.NewPromptMessage(mcp.RoleUser, content)
}

func (c *conformance) addPrompts() {
	s, r := c.server, c.reg
	p, need := prompt("test_simple_prompt")
	mcpgo.AddPrompt(s, r, p, need, func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("A simple test prompt", []mcp.PromptMessage{message(mcp.NewTextContent("This is a simple prompt for testing."))}), nil
	})
	p, need = prompt("test_prompt_with_arguments")
	mcpgo.AddPrompt(s, r, p, need, func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := req.Params.Arguments
		return mcp.NewGetPromptResult("A prompt with arguments", []mcp.PromptMessage{
			message(mcp.NewTextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"]))),
		}), nil
	})
	p, need = prompt("test_prompt_with_embedded_resource")
	mcpgo.AddPrompt(s, r, p, need, func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("A prompt with an embedded resource", []mcp.PromptMessage{
			message(mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."})),
			message(mcp.NewTextContent("Please process the embedded resource above.")),
		}), nil
	})
	p, need = prompt("test_prompt_with_image")
	mcpgo.AddPrompt(s, r, p, need, func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("A prompt with an image", []mcp.PromptMessage{
			message(mcp.NewImageContent(pngImage, "image/png")),
			message(mcp.NewTextContent("Please analyze the image above.")),
		}), nil
	})
	// The prompts/get form of a multi-round-trip request (SEP-2322).
	p, need = prompt("test_input_required_result_prompt")
	mcpgo.AddPrompt(s, r, p, need, func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if got := accepted(req.Params.InputResponses, "user_context"); got != nil {
			ctx, _ := got["context"].(string)
			return mcp.NewGetPromptResult("A prompt with context from the person", []mcp.PromptMessage{message(mcp.NewTextContent("Context: " + ctx))}), nil
		}
		f := form("context", "string")
		f.Message = "Please provide context for the prompt"
		return server.NewInputRequestBuilder("").Elicit("user_context", f).PromptResult(), nil
	})
}
