//lint:file-ignore SA1019 the suite tests logging and sampling, which 2026-07-28 deprecates (SEP-2577) and still has.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tool returns the tool of the catalog named name, as go-sdk declares it,
// and its effect.
func tool(name string) (*mcp.Tool, mcpeffect.Effect) {
	t, ok := catalog.Tools[name]
	if !ok {
		panic("conformance: no tool " + name + " in the catalog")
	}
	return &mcp.Tool{Name: t.Name, Description: t.Description}, t.Effect
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// answer is a tool handler that returns result, whatever it is called with.
func answer(result func() *mcp.CallToolResult) mcp.ToolHandlerFor[any, any] {
	return func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
		return result(), nil, nil
	}
}

func (c *conformance) addTools() {
	s, r := c.server, c.reg
	add := func(name string, h mcp.ToolHandlerFor[any, any]) {
		t, e := tool(name)
		mcpeffect.AddTool(s, r, t, e, h)
	}

	add("test_simple_text", answer(func() *mcp.CallToolResult {
		return text("This is a simple text response for testing.")
	}))
	add("test_image_content", answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: catalog.PNG, MIMEType: "image/png"}}}
	}))
	add("test_audio_content", answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: catalog.WAV, MIMEType: "audio/wav"}}}
	}))
	add("test_embedded_resource", answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{embedded("test://embedded-resource")}}
	}))
	add("test_multiple_content_types", answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "This is text content"},
			&mcp.ImageContent{Data: catalog.PNG, MIMEType: "image/png"},
			embedded("test://embedded-in-multiple"),
		}}
	}))
	add("test_tool_with_logging", logThrice)
	add("test_tool_with_progress", progressThrice)
	add("test_error_handling", func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("this tool fails on purpose, to test tool errors")
	})
	t, e := tool("test_sampling")
	mcpeffect.AddTool(s, r, t, e, sample)
	t, e = tool("test_elicitation")
	mcpeffect.AddTool(s, r, t, e, elicitUsername)
	add("test_elicitation_sep1034_defaults", elicit("Test defaults for primitives", catalog.DefaultsSchema))
	add("test_elicitation_sep1330_enums", elicit("Test enum schemas", catalog.EnumsSchema))
	add("test_reconnection", reconnect)
	add("test_missing_capability", needSampling)
	add("test_streaming_elicitation", answer(func() *mcp.CallToolResult {
		return text("the response stream carried this result and no request")
	}))
	add("test_logging_tool", func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "test_logging_tool ran"})
		return text("logged one message, if the client asked for logs"), nil, nil
	})
	add("test_trigger_tool_change", c.addTransientTool)
	add("test_trigger_prompt_change", c.addTransientPrompt)

	// The schema is the test: the suite checks that every 2020-12 keyword
	// reaches the client as written.
	t, e = tool("json_schema_2020_12_tool")
	t.InputSchema = json.RawMessage(catalog.Schema202012)
	mcpeffect.AddTool(s, r, t, e, func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
		b, _ := json.Marshal(in)
		return text("called with " + string(b)), nil, nil
	})
	t, e = tool("test_x_mcp_header")
	t.InputSchema = json.RawMessage(catalog.RegionSchema)
	mcpeffect.AddTool(s, r, t, e, func(_ context.Context, _ *mcp.CallToolRequest, in regionArgs) (*mcp.CallToolResult, any, error) {
		return text("region=" + in.Region), nil, nil
	})

	c.addInputRequiredTools()
}

type regionArgs struct {
	Region string `json:"region,omitempty"`
	Level  int    `json:"level,omitempty"`
}

func embedded(uri string) *mcp.EmbeddedResource {
	return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "This is an embedded resource"}}
}

func logThrice(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			// Apart, so that a client sees them arrive one by one.
			time.Sleep(20 * time.Millisecond)
		}
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: msg})
	}
	return text("Tool with logging executed successfully"), nil, nil
}

func progressThrice(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	token := req.Params.GetProgressToken()
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		if token != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100, Message: fmt.Sprintf("%.0f of 100", p)})
		}
	}
	return text(fmt.Sprint(token)), nil, nil
}

type promptArgs struct {
	Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
}

func sample(ctx context.Context, req *mcp.CallToolRequest, in promptArgs) (*mcp.CallToolResult, any, error) {
	res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
		MaxTokens: 100,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("sampling failed: %w", err)
	}
	answer := "(not text)"
	if t, ok := res.Content.(*mcp.TextContent); ok {
		answer = t.Text
	}
	return text("LLM response: " + answer), nil, nil
}

type messageArgs struct {
	Message string `json:"message" jsonschema:"the message to show the person"`
}

func elicitUsername(ctx context.Context, req *mcp.CallToolRequest, in messageArgs) (*mcp.CallToolResult, any, error) {
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
		Message: in.Message,
		RequestedSchema: &jsonschema.Schema{
			Type:       "object",
			Properties: map[string]*jsonschema.Schema{"username": {Type: "string", Description: "Your preferred username"}},
			Required:   []string{"username"},
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("elicitation failed: %w", err)
	}
	return text(fmt.Sprintf("Elicitation result: action=%s, content=%v", res.Action, res.Content)), nil, nil
}

// elicit is a tool handler that asks the person to fill in the form of
// schema, given as JSON, and says what came back.
func elicit(message, schema string) mcp.ToolHandlerFor[any, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: message, RequestedSchema: json.RawMessage(schema)})
		if err != nil {
			return nil, nil, fmt.Errorf("elicitation failed: %w", err)
		}
		return text(fmt.Sprintf("Elicitation result: action=%s, content=%v", res.Action, res.Content)), nil, nil
	}
}

func reconnect(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	if req.Extra != nil && req.Extra.CloseSSEStream != nil {
		req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
	}
	// The result is sent once the client is back, on the stream it opens.
	select {
	case <-time.After(100 * time.Millisecond):
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	return text("Reconnection test completed successfully: the client came back after the stream closed."), nil, nil
}

func needSampling(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
	if caps := req.ClientCapabilities(); caps != nil && caps.Sampling != nil {
		return text("the client can sample; the tool ran"), nil, nil
	}
	data, err := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}})
	if err != nil {
		return nil, nil, err
	}
	return nil, nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "this tool needs the client's sampling capability", Data: data}
}

// addTransientTool adds a tool through mcpeffect, classified as any other:
// a tool added with go-sdk alone would be refused to every caller.
func (c *conformance) addTransientTool(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
	t := catalog.TransientTool
	mcpeffect.AddTool(c.server, c.reg, &mcp.Tool{Name: t.Name, Description: t.Description}, t.Effect,
		answer(func() *mcp.CallToolResult { return text("transient") }))
	return text("added transient_tool; the tool list changed"), nil, nil
}

func (c *conformance) addTransientPrompt(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
	p := catalog.TransientPrompt
	mcpeffect.AddPrompt(c.server, c.reg, &mcp.Prompt{Name: p.Name, Description: p.Description}, p.Scope,
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "transient"}}}}, nil
		})
	return text("added transient_prompt; the prompt list changed"), nil, nil
}
