package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The scopes of resources and prompts are the server's access policy, not an
// effect: reading changes nothing, but some data is for some callers only.
// Most of this server's are read-only; the binary resource needs the full
// scope, the template's resources and the prompt with an embedded resource
// the non-destructive one, so that the suite's own calls prove both levels
// of refusal, as the tools' effects do.
const (
	binaryScope   = mcpeffect.Full
	templateScope = mcpeffect.NonDestructive
	embedScope    = mcpeffect.NonDestructive
)

const watchedURI = "test://watched-resource"

func contents(uri, mime, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}
}

func (c *conformance) addResources() {
	s, r := c.server, c.reg
	mcpeffect.AddResource(s, r, &mcp.Resource{Name: "static-text", Description: "A text that never changes.", MIMEType: "text/plain", URI: "test://static-text"}, mcpeffect.ReadOnly,
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return contents(req.Params.URI, "text/plain", "This is the content of the static text resource."), nil
		})
	mcpeffect.AddResource(s, r, &mcp.Resource{Name: "static-binary", Description: "An image, for the full scope only.", MIMEType: "image/png", URI: "test://static-binary"}, binaryScope,
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: pngImage}}}, nil
		})
	mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{Name: "template", Description: "The data of one id, for writers.", MIMEType: "application/json", URITemplate: "test://template/{id}/data"}, templateScope,
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return contents(req.Params.URI, "application/json", string(b)), nil
		})
	mcpeffect.AddResource(s, r, &mcp.Resource{Name: "watched-resource", Description: "A text that changes every few seconds; subscribe to hear of it.", MIMEType: "text/plain", URI: watchedURI}, mcpeffect.ReadOnly,
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
			c.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: watchedURI})
		}
	}
}

func message(content mcp.Content) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: content}
}

func (c *conformance) addPrompts() {
	s, r := c.server, c.reg
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A prompt without arguments."}, mcpeffect.ReadOnly,
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A simple test prompt", Messages: []*mcp.PromptMessage{message(&mcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{
		Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with two required arguments.",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, mcpeffect.ReadOnly, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := req.Params.Arguments
		return &mcp.GetPromptResult{Description: "A prompt with arguments", Messages: []*mcp.PromptMessage{
			message(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}),
		}}, nil
	})
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{
		Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that embeds a resource, for writers.",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
	}, embedScope, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Description: "A prompt with an embedded resource", Messages: []*mcp.PromptMessage{
			message(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
			message(&mcp.TextContent{Text: "Please process the embedded resource above."}),
		}}, nil
	})
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt with an image."}, mcpeffect.ReadOnly,
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A prompt with an image", Messages: []*mcp.PromptMessage{
				message(&mcp.ImageContent{Data: pngImage, MIMEType: "image/png"}),
				message(&mcp.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
	// The prompts/get form of a multi-round-trip request (SEP-2322).
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "test_input_required_result_prompt", Description: "Asks the person for context, in band, before it answers."}, mcpeffect.ReadOnly,
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
