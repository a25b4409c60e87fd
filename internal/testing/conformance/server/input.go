//lint:file-ignore SA1019 the suite tests sampling and roots in band, which 2026-07-28 deprecates (SEP-2577) and still has.

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools of the 2026-07-28 protocol's multi-round-trip requests
// (SEP-2322): instead of sending a request to the client while a call runs,
// a tool answers with the input it needs, and the client calls again with
// the answers and the requestState the tool gave.

func invalidState() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: catalog.InvalidState}
}

// accepted returns the form the person filled in answer to the input
// request key, if they accepted it.
func accepted(responses mcp.InputResponseMap, key string) map[string]any {
	if res, ok := responses[key].(*mcp.ElicitResult); ok && res != nil && res.Action == "accept" {
		return res.Content
	}
	return nil
}

// sampled returns the text of the model's answer to the input request key.
func sampled(responses mcp.InputResponseMap, key string) (string, bool) {
	res, ok := responses[key].(*mcp.CreateMessageWithToolsResult)
	if !ok || res == nil {
		return "", false
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text, true
		}
	}
	return "(not text)", true
}

func form(field string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{field: {Type: "string"}}, Required: []string{field}}
}

func askName() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: form("name")}
}

func askConfirm() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: &jsonschema.Schema{
		Type: "object", Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}, Required: []string{"ok"},
	}}
}

func ask(prompt string, maxTokens int64) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}}, MaxTokens: maxTokens}
}

func (c *conformance) addInputRequiredTools() {
	s, r := c.server, c.reg
	add := func(name string, h mcp.ToolHandlerFor[any, any]) {
		t, e := tool(name)
		mcpeffect.AddTool(s, r, t, e, h)
	}
	add("test_input_required_result_elicitation", func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		if name, _ := accepted(req.Params.InputResponses, "user_name")["name"].(string); name != "" {
			return text("Hello, " + name + "!"), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"user_name": askName()}}, nil, nil
	})
	add("test_input_required_result_sampling", func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		if answer, ok := sampled(req.Params.InputResponses, "capital_question"); ok {
			return text("Sampling response: " + answer), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"capital_question": ask("What is the capital of France?", 100)}}, nil, nil
	})
	add("test_input_required_result_list_roots", func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		if res, ok := req.Params.InputResponses["client_roots"].(*mcp.ListRootsResult); ok && res != nil {
			var uris []string
			for _, root := range res.Roots {
				uris = append(uris, root.URI)
			}
			return text(fmt.Sprintf("Client exposed %d root(s): %s", len(res.Roots), strings.Join(uris, ", "))), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}}, nil, nil
	})
	const stateTool = "test_input_required_result_request_state"
	add(stateTool, c.confirmWithState(stateTool))
	const tamperTool = "test_input_required_result_tampered_state"
	add(tamperTool, c.confirmWithState(tamperTool))
	const multipleTool = "test_input_required_result_multiple_inputs"
	add(multipleTool, func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		if st := req.Params.RequestState; st != "" {
			if _, ok := c.states.Verify(multipleTool, st); !ok {
				return nil, nil, invalidState()
			}
		}
		in := req.Params.InputResponses
		name, _ := accepted(in, "user_name")["name"].(string)
		greeting, greeted := sampled(in, "greeting")
		roots, rooted := in["client_roots"].(*mcp.ListRootsResult)
		if name != "" && greeted && rooted && roots != nil {
			return text(fmt.Sprintf("%s %s, with %d root(s)", greeting, name, len(roots.Roots))), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			"user_name":    askName(),
			"greeting":     ask("Generate a greeting", 50),
			"client_roots": &mcp.ListRootsParams{},
		}, RequestState: c.states.Sign(multipleTool, "all three")}, nil, nil
	})
	const roundsTool = "test_input_required_result_multi_round"
	add(roundsTool, func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		if req.Params.RequestState == "" {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"step1": &mcp.ElicitParams{Message: "Step 1: What is your name?", RequestedSchema: form("name")}},
				RequestState:  c.states.Sign(roundsTool, "round1"),
			}, nil, nil
		}
		state, ok := c.states.Verify(roundsTool, req.Params.RequestState)
		if !ok {
			return nil, nil, invalidState()
		}
		if state == "round1" {
			name, _ := accepted(req.Params.InputResponses, "step1")["name"].(string)
			if name == "" {
				name = "someone"
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"step2": &mcp.ElicitParams{Message: "Step 2: What is your favorite color?", RequestedSchema: form("color")}},
				RequestState:  c.states.Sign(roundsTool, "round2:"+name),
			}, nil, nil
		}
		name, ok := strings.CutPrefix(state, "round2:")
		if !ok {
			return nil, nil, invalidState()
		}
		color, _ := accepted(req.Params.InputResponses, "step2")["color"].(string)
		if color == "" {
			color = "no colour"
		}
		return text(fmt.Sprintf("Multi-round complete: %s likes %s", name, color)), nil, nil
	})
	add("test_input_required_result_capabilities", func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		if len(req.Params.InputResponses) > 0 {
			return text("Capability-aware input requests fulfilled"), nil, nil
		}
		caps := req.ClientCapabilities()
		asks := mcp.InputRequestMap{}
		if caps != nil && caps.Elicitation != nil {
			asks["user_name"] = askName()
		}
		if caps != nil && caps.Sampling != nil {
			asks["greeting"] = ask("Generate a short greeting", 50)
		}
		if caps != nil && (caps.RootsV2 != nil || caps.Roots.ListChanged) {
			asks["client_roots"] = &mcp.ListRootsParams{}
		}
		if len(asks) == 0 {
			return text("The client declared no capability that could answer a request for input"), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: asks}, nil, nil
	})
}

// confirmWithState is the handler of tool, which asks for a confirmation
// with a requestState, and on the retry runs only if the state is its own.
func (c *conformance) confirmWithState(tool string) mcp.ToolHandlerFor[any, any] {
	return func(_ context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		if req.Params.RequestState != "" {
			if _, ok := c.states.Verify(tool, req.Params.RequestState); !ok {
				return nil, nil, invalidState()
			}
			if accepted(req.Params.InputResponses, "confirm") != nil {
				return text("state-ok: requestState received and confirmation accepted"), nil, nil
			}
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"confirm": askConfirm()},
			RequestState:  c.states.Sign(tool, "confirm"),
		}, nil, nil
	}
}
