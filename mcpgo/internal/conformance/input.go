package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/mcpeffect/mcpeffect/mcpgo"
)

// The tools of the 2026-07-28 protocol's multi-round-trip requests
// (SEP-2322), on mcp-go's InputRequestBuilder: a tool answers with the
// input it needs, and the client calls again with the answers and the
// requestState the tool gave. For a client of an earlier protocol, mcp-go
// asks with the requests of that protocol and calls the tool again itself.

// errInvalidState refuses a retry whose requestState this server did not
// make for the tool. mcp-go sends a handler's error as an internal error,
// whatever it is: a handler cannot choose the code.
var errInvalidState = errors.New(catalog.InvalidState)

// accepted returns the form the person filled in answer to the input
// request key, if they accepted it.
func accepted(responses mcp.InputResponses, key string) map[string]any {
	res := server.ElicitationResponse(responses, key)
	if res == nil || res.Action != mcp.ElicitationResponseActionAccept {
		return nil
	}
	content, _ := res.Content.(map[string]any)
	if content == nil {
		content = map[string]any{}
	}
	return content
}

// sampled returns the text of the model's answer to the input request key.
func sampled(responses mcp.InputResponses, key string) (string, bool) {
	res := server.SamplingResponse(responses, key)
	if res == nil {
		return "", false
	}
	if t, ok := res.Content.(mcp.TextContent); ok {
		return t.Text, true
	}
	return "(not text)", true
}

func form(field string, typ string) mcp.ElicitationParams {
	return mcp.ElicitationParams{Message: "", RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{field: map[string]any{"type": typ}}, "required": []string{field},
	}}
}

func askName(b *server.InputRequestBuilder, key, message string) *server.InputRequestBuilder {
	p := form("name", "string")
	p.Message = message
	return b.Elicit(key, p)
}

func ask(prompt string, maxTokens int) mcp.CreateMessageParams {
	return mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(prompt)}}, MaxTokens: maxTokens}
}

func (c *conformance) addInputRequiredTools() {
	s, r := c.server, c.reg
	add := func(name string, h server.ToolHandlerFunc) {
		t, e := tool(name)
		mcpgo.AddTool(s, r, t, e, h)
	}
	add("test_input_required_result_elicitation", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if name, _ := accepted(req.Params.InputResponses, "user_name")["name"].(string); name != "" {
			return mcp.NewToolResultText("Hello, " + name + "!"), nil
		}
		return askName(server.NewInputRequestBuilder(""), "user_name", "What is your name?").ToolResult(), nil
	})
	add("test_input_required_result_sampling", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if answer, ok := sampled(req.Params.InputResponses, "capital_question"); ok {
			return mcp.NewToolResultText("Sampling response: " + answer), nil
		}
		return server.NewInputRequestBuilder("").Sample("capital_question", ask("What is the capital of France?", 100)).ToolResult(), nil
	})
	add("test_input_required_result_list_roots", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if res := server.RootsResponse(req.Params.InputResponses, "client_roots"); res != nil {
			var uris []string
			for _, root := range res.Roots {
				uris = append(uris, root.URI)
			}
			return mcp.NewToolResultText(fmt.Sprintf("Client exposed %d root(s): %s", len(res.Roots), strings.Join(uris, ", "))), nil
		}
		return server.NewInputRequestBuilder("").Roots("client_roots").ToolResult(), nil
	})
	const stateTool = "test_input_required_result_request_state"
	add(stateTool, c.confirmWithState(stateTool))
	const tamperTool = "test_input_required_result_tampered_state"
	add(tamperTool, c.confirmWithState(tamperTool))
	const multipleTool = "test_input_required_result_multiple_inputs"
	add(multipleTool, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if st := req.Params.RequestState; st != "" {
			if _, ok := c.states.Verify(multipleTool, st); !ok {
				return nil, errInvalidState
			}
		}
		in := req.Params.InputResponses
		name, _ := accepted(in, "user_name")["name"].(string)
		greeting, greeted := sampled(in, "greeting")
		roots := server.RootsResponse(in, "client_roots")
		if name != "" && greeted && roots != nil {
			return mcp.NewToolResultText(fmt.Sprintf("%s %s, with %d root(s)", greeting, name, len(roots.Roots))), nil
		}
		b := server.NewInputRequestBuilder(c.states.Sign(multipleTool, "all three"))
		return askName(b, "user_name", "What is your name?").Sample("greeting", ask("Generate a greeting", 50)).Roots("client_roots").ToolResult(), nil
	})
	const roundsTool = "test_input_required_result_multi_round"
	add(roundsTool, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState == "" {
			return askName(server.NewInputRequestBuilder(c.states.Sign(roundsTool, "round1")), "step1", "Step 1: What is your name?").ToolResult(), nil
		}
		state, ok := c.states.Verify(roundsTool, req.Params.RequestState)
		if !ok {
			return nil, errInvalidState
		}
		if state == "round1" {
			name, _ := accepted(req.Params.InputResponses, "step1")["name"].(string)
			if name == "" {
				name = "someone"
			}
			p := form("color", "string")
			p.Message = "Step 2: What is your favorite color?"
			return server.NewInputRequestBuilder(c.states.Sign(roundsTool, "round2:"+name)).Elicit("step2", p).ToolResult(), nil
		}
		name, ok := strings.CutPrefix(state, "round2:")
		if !ok {
			return nil, errInvalidState
		}
		color, _ := accepted(req.Params.InputResponses, "step2")["color"].(string)
		if color == "" {
			color = "no colour"
		}
		return mcp.NewToolResultText(fmt.Sprintf("Multi-round complete: %s likes %s", name, color)), nil
	})
	add("test_input_required_result_capabilities", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) > 0 {
			return mcp.NewToolResultText("Capability-aware input requests fulfilled"), nil
		}
		caps := capabilities(ctx)
		b := server.NewInputRequestBuilder("")
		n := 0
		if caps.Elicitation != nil {
			askName(b, "user_name", "What is your name?")
			n++
		}
		if caps.Sampling != nil {
			b.Sample("greeting", ask("Generate a short greeting", 50))
			n++
		}
		if caps.Roots != nil {
			b.Roots("client_roots")
			n++
		}
		if n == 0 {
			return mcp.NewToolResultText("The client declared no capability that could answer a request for input"), nil
		}
		return b.ToolResult(), nil
	})
}

// confirmWithState is the handler of tool, which asks for a confirmation
// with a requestState, and on the retry runs only if the state is its own.
func (c *conformance) confirmWithState(tool string) server.ToolHandlerFunc {
	return func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState != "" {
			if _, ok := c.states.Verify(tool, req.Params.RequestState); !ok {
				return nil, errInvalidState
			}
			if accepted(req.Params.InputResponses, "confirm") != nil {
				return mcp.NewToolResultText("state-ok: requestState received and confirmation accepted"), nil
			}
		}
		p := form("ok", "boolean")
		p.Message = "Please confirm"
		return server.NewInputRequestBuilder(c.states.Sign(tool, "confirm")).Elicit("confirm", p).ToolResult(), nil
	}
}
