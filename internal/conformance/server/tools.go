//lint:file-ignore SA1019 the suite tests logging and sampling, which 2026-07-28 deprecates (SEP-2577) and still has.

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The effects of the tools, each what the tool does to this server's state:
// most only answer, and are reads. The two triggers add a tool or a prompt
// to the server, which every client then lists: additive writes, and
// idempotent, since adding the same one again changes nothing more.
// Sampling asks the client's model, which answers from outside anything the
// server knows: an open world.
const (
	answers  = mcpeffect.Read
	samples  = mcpeffect.Read | mcpeffect.OpenWorld
	addsOnce = mcpeffect.Write | mcpeffect.Idempotent
)

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
	add := func(name, desc string, e mcpeffect.Effect, h mcp.ToolHandlerFor[any, any]) {
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: name, Description: desc}, e, h)
	}

	add("test_simple_text", "Answers with one text.", answers, answer(func() *mcp.CallToolResult {
		return text("This is a simple text response for testing.")
	}))
	add("test_image_content", "Answers with an image.", answers, answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: pngImage, MIMEType: "image/png"}}}
	}))
	add("test_audio_content", "Answers with a sound.", answers, answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: wavSound, MIMEType: "audio/wav"}}}
	}))
	add("test_embedded_resource", "Answers with an embedded resource.", answers, answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{embedded("test://embedded-resource")}}
	}))
	add("test_multiple_content_types", "Answers with a text, an image and an embedded resource.", answers, answer(func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "This is text content"},
			&mcp.ImageContent{Data: pngImage, MIMEType: "image/png"},
			embedded("test://embedded-in-multiple"),
		}}
	}))
	add("test_tool_with_logging", "Logs three messages as it runs.", answers, logThrice)
	add("test_tool_with_progress", "Reports its progress three times.", answers, progressThrice)
	add("test_error_handling", "Always fails, as a tool error.", answers, func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("this tool fails on purpose, to test tool errors")
	})
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "test_sampling", Description: "Asks the client's model to answer a prompt."}, samples, sample)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "test_elicitation", Description: "Asks the person for a username."}, answers, elicitUsername)
	add("test_elicitation_sep1034_defaults", "Asks the person for values that have defaults (SEP-1034).", answers, elicit("Test defaults for primitives", defaultsSchema))
	add("test_elicitation_sep1330_enums", "Asks the person to choose among enums (SEP-1330).", answers, elicit("Test enum schemas", enumsSchema))
	add("test_reconnection", "Closes its SSE stream mid-call; the result comes after the client reconnects (SEP-1699).", answers, reconnect)
	add("test_missing_capability", "Needs the client's sampling capability, and says so when the client has none (SEP-2575).", answers, needSampling)
	add("test_streaming_elicitation", "Answers on its response stream with the result alone (SEP-2575).", answers, answer(func() *mcp.CallToolResult {
		return text("the response stream carried this result and no request")
	}))
	add("test_logging_tool", "Logs one message, which the client gets only if it asked for logs (SEP-2575).", answers, func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "test_logging_tool ran"})
		return text("logged one message, if the client asked for logs"), nil, nil
	})
	add("test_trigger_tool_change", "Adds a tool to the server, so that clients are told the tool list changed.", addsOnce, c.addTransientTool)
	add("test_trigger_prompt_change", "Adds a prompt to the server, so that clients are told the prompt list changed.", addsOnce, c.addTransientPrompt)

	// The schema is the test: the suite checks that every 2020-12 keyword
	// reaches the client as written.
	mcpeffect.AddTool(s, r, &mcp.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Has an input schema that uses JSON Schema 2020-12 (SEP-1613, SEP-2106).",
		InputSchema: json.RawMessage(schema202012),
	}, answers, func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
		b, _ := json.Marshal(in)
		return text("called with " + string(b)), nil, nil
	})
	mcpeffect.AddTool(s, r, &mcp.Tool{
		Name:        "test_x_mcp_header",
		Description: "Has an argument mirrored into the Mcp-Param-Region header (SEP-2243).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"region":{"type":"string","description":"mirrored into Mcp-Param-Region","x-mcp-header":"Region"},` +
			`"level":{"type":"integer","description":"not mirrored"}}}`),
	}, answers, func(_ context.Context, _ *mcp.CallToolRequest, in regionArgs) (*mcp.CallToolResult, any, error) {
		return text("region=" + in.Region), nil, nil
	})

	c.addInputRequiredTools()
}

type regionArgs struct {
	Region string `json:"region,omitempty"`
	Level  int    `json:"level,omitempty"`
}

const schema202012 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`

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

const defaultsSchema = `{"type": "object", "properties": {
	"name": {"type": "string", "description": "User name", "default": "John Doe"},
	"age": {"type": "integer", "description": "User age", "default": 30},
	"score": {"type": "number", "description": "User score", "default": 95.5},
	"status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
	"verified": {"type": "boolean", "description": "Verification status", "default": true}
}}`

const enumsSchema = `{"type": "object", "properties": {
	"untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
	"titledSingle": {"type": "string", "oneOf": [
		{"const": "value1", "title": "First Option"},
		{"const": "value2", "title": "Second Option"},
		{"const": "value3", "title": "Third Option"}]},
	"legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
	"untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
	"titledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
		{"const": "value1", "title": "First Option"},
		{"const": "value2", "title": "Second Option"},
		{"const": "value3", "title": "Third Option"}]}}
}}`

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
	mcpeffect.AddTool(c.server, c.reg, &mcp.Tool{Name: "transient_tool", Description: "Added by test_trigger_tool_change."}, answers,
		answer(func() *mcp.CallToolResult { return text("transient") }))
	return text("added transient_tool; the tool list changed"), nil, nil
}

func (c *conformance) addTransientPrompt(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
	mcpeffect.AddPrompt(c.server, c.reg, &mcp.Prompt{Name: "transient_prompt", Description: "Added by test_trigger_prompt_change."}, mcpeffect.ReadOnly,
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "transient"}}}}, nil
		})
	return text("added transient_prompt; the prompt list changed"), nil, nil
}

// pngImage is a one-pixel red PNG, and wavSound two samples of silence in
// a WAV file: the smallest content of each kind.
var pngImage, wavSound = onePixel(), silence()

func onePixel() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func silence() []byte {
	const rate, samples = 8000, 2
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + 2*samples))
	b.WriteString("WAVEfmt ")
	// PCM, one channel, 16 bits a sample.
	le(uint32(16))
	le(uint16(1))
	le(uint16(1))
	le(uint32(rate))
	le(uint32(2 * rate))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("data")
	le(uint32(2 * samples))
	b.Write(make([]byte, 2*samples))
	return b.Bytes()
}
