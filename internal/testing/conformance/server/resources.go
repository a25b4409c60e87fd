package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resource returns the resource (or template) of the catalog at uri, as
// go-sdk declares it, and the scope it needs.
func resource(uri string) (*mcp.Resource, *mcp.ResourceTemplate, mcpeffect.Scope) {
	r, ok := catalog.Resources[uri]
	if !ok {
		panic("conformance: no resource " + uri + " in the catalog")
	}
	if r.Template {
		return nil, &mcp.ResourceTemplate{Name: r.Name, Description: r.Description, MIMEType: r.MIME, URITemplate: r.URI}, r.Scope
	}
	return &mcp.Resource{Name: r.Name, Description: r.Description, MIMEType: r.MIME, URI: r.URI}, nil, r.Scope
}

// prompt returns the prompt of the catalog named name, as go-sdk declares
// it, and the scope it needs.
func prompt(name string) (*mcp.Prompt, mcpeffect.Scope) {
	p, ok := catalog.Prompts[name]
	if !ok {
		panic("conformance: no prompt " + name + " in the catalog")
	}
	mp := &mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		mp.Arguments = append(mp.Arguments, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return mp, p.Scope
}

func contents(uri, mime, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}
}

func (c *conformance) addResources() {
	s, r := c.server, c.reg
	res, _, need := resource("test://static-text")
	mcpeffect.AddResource(s, r, res, need,
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return contents(req.Params.URI, "text/plain", "This is the content of the static text resource."), nil
		})
	res, _, need = resource("test://static-binary")
	mcpeffect.AddResource(s, r, res, need,
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: catalog.PNG}}}, nil
		})
	_, tmpl, need := resource("test://template/{id}/data")
	mcpeffect.AddResourceTemplate(s, r, tmpl, need,
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return contents(req.Params.URI, "application/json", string(b)), nil
		})
	res, _, need = resource(catalog.WatchedURI)
	mcpeffect.AddResource(s, r, res, need,
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			c.mu.Lock()
			n := c.watched
			c.mu.Unlock()
			return contents(req.Params.URI, "text/plain", fmt.Sprintf("Watched resource content, changed %d times", n)), nil
		})
}

// changeWatched changes the watched resource every period, and tells its
// subscribers, until ctx is done.
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
			c.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: catalog.WatchedURI})
		}
	}
}

func message(content mcp.Content) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: content}
}

func (c *conformance) addPrompts() {
	s, r := c.server, c.reg
	p, need := prompt("test_simple_prompt")
	mcpeffect.AddPrompt(s, r, p, need,
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A simple test prompt", Messages: []*mcp.PromptMessage{message(&mcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	p, need = prompt("test_prompt_with_arguments")
	mcpeffect.AddPrompt(s, r, p, need, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := req.Params.Arguments
		return &mcp.GetPromptResult{Description: "A prompt with arguments", Messages: []*mcp.PromptMessage{
			message(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}),
		}}, nil
	})
	p, need = prompt("test_prompt_with_embedded_resource")
	mcpeffect.AddPrompt(s, r, p, need, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Description: "A prompt with an embedded resource", Messages: []*mcp.PromptMessage{
			message(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
			message(&mcp.TextContent{Text: "Please process the embedded resource above."}),
		}}, nil
	})
	p, need = prompt("test_prompt_with_image")
	mcpeffect.AddPrompt(s, r, p, need,
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A prompt with an image", Messages: []*mcp.PromptMessage{
				message(&mcp.ImageContent{Data: catalog.PNG, MIMEType: "image/png"}),
				message(&mcp.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
	// The prompts/get form of a multi-round-trip request (SEP-2322).
	p, need = prompt("test_input_required_result_prompt")
	mcpeffect.AddPrompt(s, r, p, need,
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if got := accepted(req.Params.InputResponses, "user_context"); got != nil {
				ctx, _ := got["context"].(string)
				return &mcp.GetPromptResult{Description: "A prompt with context from the person", Messages: []*mcp.PromptMessage{message(&mcp.TextContent{Text: "Context: " + ctx})}}, nil
			}
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{
				"user_context": &mcp.ElicitParams{Message: "Please provide context for the prompt", RequestedSchema: &jsonschema.Schema{
					Type: "object", Properties: map[string]*jsonschema.Schema{"context": {Type: "string"}}, Required: []string{"context"},
				}},
			}}, nil
		})
}
