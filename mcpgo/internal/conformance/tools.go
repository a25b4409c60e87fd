//lint:file-ignore SA1019 the suite tests sampling, which 2026-07-28 deprecates (SEP-2577) and still has.

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/mcpeffect/mcpeffect/mcpgo"
)

// tool returns the tool of the catalog named name, as mcp-go declares it
// (mcp.NewTool, whose worst-case hints mcpgo.AddTool replaces with the
// effect's), and its effect.
func tool(name string, opts ...mcp.ToolOption) (mcp.Tool, mcpeffect.Effect) {
	t, ok := catalog.Tools[name]
	if !ok {
		panic("conformance: no tool " + name + " in the catalog")
	}
	return mcp.NewTool(t.Name, append([]mcp.ToolOption{mcp.WithDescription(t.Description)}, opts...)...), t.Effect
}

// rawTool is tool for a tool whose input schema is the test, sent as
// written.
func rawTool(name, schema string) (mcp.Tool, mcpeffect.Effect) {
	t, ok := catalog.Tools[name]
	if !ok {
		panic("conformance: no tool " + name + " in the catalog")
	}
	return mcp.NewToolWithRawSchema(t.Name, t.Description, json.RawMessage(schema)), t.Effect
}

// answer is a tool handler that returns result, whatever it is called with.
func answer(result func() *mcp.CallToolResult) server.ToolHandlerFunc {
	return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(), nil
	}
}

var pngImage, wavSound = base64.StdEncoding.EncodeToString(catalog.PNG), base64.StdEncoding.EncodeToString(catalog.WAV)

func embedded(uri string) mcp.EmbeddedResource {
	return mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: "This is an embedded resource"})
}

func (c *conformance) addTools() {
	s, r := c.server, c.reg
	add := func(name string, h server.ToolHandlerFunc, opts ...mcp.ToolOption) {
		t, e := tool(name, opts...)
		mcpgo.AddTool(s, r, t, e, h)
	}

	add("test_simple_text", answer(func() *mcp.CallToolResult {
		return mcp.NewToolResultText("This is a simple text response for testing.")
	}))
	add("test_image_content", answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(pngImage, "image/png")}}
	}))
	add("test_audio_content", answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(wavSound, "audio/wav")}}
	}))
	add("test_embedded_resource", answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{embedded("test://embedded-resource")}}
	}))
	add("test_multiple_content_types", answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent("This is text content"),
			mcp.NewImageContent(pngImage, "image/png"),
			embedded("test://embedded-in-multiple"),
		}}
	}))
	add("test_tool_with_logging", c.logThrice)
	add("test_tool_with_progress", c.progressThrice)
	add("test_error_handling", answer(func() *mcp.CallToolResult {
		return mcp.NewToolResultError("this tool fails on purpose, to test tool errors")
	}))
	add("test_sampling", c.sample, mcp.WithString("prompt", mcp.Required(), mcp.Description("the prompt to send to the client's model")))
	add("test_elicitation", c.elicitUsername, mcp.WithString("message", mcp.Required(), mcp.Description("the message to show the person")))
	add("test_elicitation_sep1034_defaults", c.elicit("Test defaults for primitives", catalog.DefaultsSchema))
	add("test_elicitation_sep1330_enums", c.elicit("Test enum schemas", catalog.EnumsSchema))
	add("test_reconnection", reconnect)
	add("test_missing_capability", needSampling)
	add("test_streaming_elicitation", answer(func() *mcp.CallToolResult {
		return mcp.NewToolResultText("the response stream carried this result and no request")
	}))
	add("test_logging_tool", func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// mcp-go sends it only to a client that asked for logs.
		c.server.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, "conformance", "test_logging_tool ran"))
		return mcp.NewToolResultText("logged one message, if the client asked for logs"), nil
	})
	add("test_trigger_tool_change", c.addTransientTool)
	add("test_trigger_prompt_change", c.addTransientPrompt)

	// The schema is the test: the suite checks that every 2020-12 keyword
	// reaches the client as written.
	t, e := rawTool("json_schema_2020_12_tool", catalog.Schema202012)
	mcpgo.AddTool(s, r, t, e, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, _ := json.Marshal(req.GetArguments())
		return mcp.NewToolResultText("called with " + string(b)), nil
	})
	t, e = rawTool("test_x_mcp_header", catalog.RegionSchema)
	mcpgo.AddTool(s, r, t, e, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("region=" + req.GetString("region", "")), nil
	})
}

func (c *conformance) logThrice(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			// Apart, so that a client sees them arrive one by one.
			time.Sleep(20 * time.Millisecond)
		}
		c.server.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, "conformance", msg))
	}
	return mcp.NewToolResultText("Tool with logging executed successfully"), nil
}

func (c *conformance) progressThrice(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		if token != nil {
			c.server.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
				"progressToken": token, "progress": p, "total": 100, "message": fmt.Sprintf("%.0f of 100", p),
			})
		}
	}
	return mcp.NewToolResultText(fmt.Sprint(token)), nil
}

func (c *conformance) sample(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := c.server.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
		MaxTokens: 100,
	}})
	if err != nil {
		return mcp.NewToolResultError("sampling failed: " + err.Error()), nil
	}
	answer := "(not text)"
	if t, ok := res.Content.(mcp.TextContent); ok {
		answer = t.Text
	}
	return mcp.NewToolResultText("LLM response: " + answer), nil
}

func (c *conformance) elicitUsername(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return c.ask(ctx, req.GetString("message", ""), map[string]any{
		"type":       "object",
		"properties": map[string]any{"username": map[string]any{"type": "string", "description": "Your preferred username"}},
		"required":   []string{"username"},
	})
}

// elicit is a tool handler that asks the person to fill in the form of
// schema, given as JSON, and says what came back.
func (c *conformance) elicit(message, schema string) server.ToolHandlerFunc {
	return func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return c.ask(ctx, message, json.RawMessage(schema))
	}
}

func (c *conformance) ask(ctx context.Context, message string, schema any) (*mcp.CallToolResult, error) {
	res, err := c.server.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{Message: message, RequestedSchema: schema}})
	if err != nil {
		return mcp.NewToolResultError("elicitation failed: " + err.Error()), nil
	}
	return mcp.NewToolResultText(fmt.Sprintf("Elicitation result: action=%s, content=%v", res.Action, res.Content)), nil
}

// reconnect would close its SSE stream mid-call (SEP-1699), for the client
// to come back for the result; mcp-go gives a handler no way to close the
// stream, so it only answers late.
func reconnect(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	select {
	case <-time.After(100 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return mcp.NewToolResultText("Reconnection test completed: the result came on the stream, which mcp-go cannot close mid-call."), nil
}

func needSampling(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if capabilities(ctx).Sampling != nil {
		return mcp.NewToolResultText("the client can sample; the tool ran"), nil
	}
	return nil, mcp.MissingRequiredClientCapabilityError{Capability: "sampling"}
}

// addTransientTool adds a tool through mcpgo, classified as any other: a
// tool added with mcp-go alone would be refused to every caller.
func (c *conformance) addTransientTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	t := catalog.TransientTool
	mcpgo.AddTool(c.server, c.reg, mcp.NewTool(t.Name, mcp.WithDescription(t.Description)), t.Effect,
		answer(func() *mcp.CallToolResult { return mcp.NewToolResultText("transient") }))
	return mcp.NewToolResultText("added transient_tool; the tool list changed"), nil
}

func (c *conformance) addTransientPrompt(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p := catalog.TransientPrompt
	mcpgo.AddPrompt(c.server, c.reg, mcp.NewPrompt(p.Name, mcp.WithPromptDescription(p.Description)), p.Scope,
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("transient"))}), nil
		})
	return mcp.NewToolResultText("added transient_prompt; the prompt list changed"), nil
}
