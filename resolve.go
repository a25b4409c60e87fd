package mcpeffect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolResolutionExtension is the identifier of the MCP extension for tool
// resolution, with which a host asks a server for the annotations of one
// call before it makes it: the effect of that call, where the tool's
// advertised hints are the worst case of its calls. It is an experimental
// draft of the MCP community (modelcontextprotocol/experimental-ext-tool-
// annotations, specification/draft/tool-resolution.mdx), not part of the
// MCP specification, and may change; see [ServeToolResolution].
const ToolResolutionExtension = "io.modelcontextprotocol/tool-resolution"

// ResolveToolMethod is the method of the tool-resolution extension.
const ResolveToolMethod = "tools/resolve"

// ResolveToolParams are the parameters of a tools/resolve request: the
// tool and the complete arguments of the call the host means to make.
type ResolveToolParams struct {
	mcp.ParamsBase
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ResolveToolResult is the result of a tools/resolve request: the four
// hints of the call, each explicit.
type ResolveToolResult struct {
	mcp.ResultBase
	// ResultType is "complete".
	ResultType  string              `json:"resultType"`
	Name        string              `json:"name"`
	Annotations ResolvedAnnotations `json:"annotations"`
}

// ResolvedAnnotations are the hints of one call, as tools/resolve
// returns them: all four, and nothing else.
type ResolvedAnnotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// resolvedOf returns the hints of effect e.
func resolvedOf(e Effect) ResolvedAnnotations {
	a := e.Annotations()
	return ResolvedAnnotations{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
}

// ServeToolResolution serves the experimental tool-resolution extension
// (see [ToolResolutionExtension]) on s for the tools r classifies: a host
// that declares the extension may ask, with tools/resolve, for the hints
// of one call of a tool whose effect depends on its arguments, and gets
// those of the call's own effect. It is opt-in, and experimental as the
// extension is: its draft may change, and this with it.
//
// ServeToolResolution adds the custom method tools/resolve, and receiving
// middleware that advertises the extension (in the capabilities of
// initialize and server/discover) and marks, in tools/list, the tools it
// can resolve, for a client that declares the extension on that request.
// Those are the tools added with [AddToolWithRule] or
// [AddToolHandlerWithRule] whose raw arguments give the effect of a call
// with certainty (see [EffectRule.EffectOf]): the common form, of a
// handler that receives its argument as a plain string, and the general
// form of a low-level handler. A call whose arguments leave the outcome
// uncertain resolves to the worst case, the advertised hints.
//
// Resolution reports hints, not permission: it answers the same whatever
// the caller's scope, runs nothing, and changes nothing. A host must not
// take it as a promise: the call itself is checked again, on its own
// arguments, by [Registry.Middleware].
//
// The errors are the extension's: -32021 ([mcp.CodeMissingRequiredClientCapabilities])
// when the request does not declare the extension (with settings {}),
// -32602 for a tool not marked resolvable or arguments that are missing,
// not an object, or refused by the tool's input schema.
func ServeToolResolution(s *mcp.Server, r *Registry) error {
	if err := mcp.AddReceivingCustomMethod(s, ResolveToolMethod, func(ctx context.Context, ss *mcp.ServerSession, p *ResolveToolParams) (*ResolveToolResult, error) {
		return r.resolveTool(&mcp.ServerRequest[*ResolveToolParams]{Session: ss, Params: p})
	}); err != nil {
		return err
	}
	s.AddReceivingMiddleware(r.toolResolutionMiddleware)
	return nil
}

// declaresToolResolution reports whether caps declare the extension, with
// the empty settings it defines; other settings count as not declared.
func declaresToolResolution(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	v, ok := caps.Extensions[ToolResolutionExtension]
	if !ok {
		return false
	}
	settings, ok := v.(map[string]any)
	return ok && len(settings) == 0
}

// resolvable reports whether tools/resolve can compute the effect of the
// calls of a tool from their raw arguments.
func (e entry) resolvable() bool { return e.rule != nil && e.raw }

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// resolveTool answers a tools/resolve request.
func (r *Registry) resolveTool(req *mcp.ServerRequest[*ResolveToolParams]) (*ResolveToolResult, error) {
	if !declaresToolResolution(req.ClientCapabilities()) {
		var need mcp.ClientCapabilities
		need.AddExtension(ToolResolutionExtension, nil)
		data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &need})
		return nil, &jsonrpc.Error{
			Code:    mcp.CodeMissingRequiredClientCapabilities,
			Message: fmt.Sprintf("%s needs the client capability extensions[%q] = {} on the request", ResolveToolMethod, ToolResolutionExtension),
			Data:    data,
		}
	}
	p := req.Params
	if p == nil || p.Name == "" {
		return nil, invalidParams("%s: no tool name", ResolveToolMethod)
	}
	ent := r.lookup(p.Name)
	if !ent.resolvable() {
		return nil, invalidParams("%s: tool %q is not a tool this server resolves", ResolveToolMethod, p.Name)
	}
	args := bytes.TrimSpace(p.Arguments)
	if len(args) == 0 || args[0] != '{' {
		return nil, invalidParams("%s: tool %q: the arguments must be the complete arguments of the call, a JSON object", ResolveToolMethod, p.Name)
	}
	if err := validateInput(ent.schema, args); err != nil {
		return nil, invalidParams("%s: tool %q: the tool's input schema refuses the arguments: %v", ResolveToolMethod, p.Name, err)
	}
	e, _ := ent.rule.EffectOf(args)
	if !within(e, ent.effect) {
		// EffectOf gives only declared outcomes or the worst case.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: tool %q: no trustworthy hints", ResolveToolMethod, p.Name)}
	}
	return &ResolveToolResult{ResultType: "complete", Name: p.Name, Annotations: resolvedOf(e)}, nil
}

// toolResolutionMiddleware advertises the extension and marks the tools
// it resolves.
func (r *Registry) toolResolutionMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch res := res.(type) {
		case *mcp.InitializeResult:
			out := *res
			out.Capabilities = withToolResolution(res.Capabilities)
			return &out, nil
		case *mcp.DiscoverResult:
			out := *res
			out.Capabilities = withToolResolution(res.Capabilities)
			return &out, nil
		case *mcp.ListToolsResult:
			list, ok := req.(*mcp.ListToolsRequest)
			if !ok || !declaresToolResolution(list.ClientCapabilities()) {
				return res, nil
			}
			return r.markResolvable(res), nil
		}
		return res, nil
	}
}

// withToolResolution returns a copy of caps that also advertises the
// extension.
func withToolResolution(caps *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	var out mcp.ServerCapabilities
	if caps != nil {
		out = *caps
	}
	out.Extensions = maps.Clone(out.Extensions)
	out.AddExtension(ToolResolutionExtension, nil)
	return &out
}

// markResolvable returns a copy of list in which the tools it can resolve
// carry the extension's marker. The tools are the server's: a tool that
// is marked is copied, with its metadata.
func (r *Registry) markResolvable(list *mcp.ListToolsResult) *mcp.ListToolsResult {
	out := *list
	out.Tools = make([]*mcp.Tool, len(list.Tools))
	for i, t := range list.Tools {
		out.Tools[i] = t
		if t == nil || !r.lookup(t.Name).resolvable() {
			continue
		}
		marked := *t
		marked.Meta = maps.Clone(t.Meta)
		if marked.Meta == nil {
			marked.Meta = mcp.Meta{}
		}
		marked.Meta[ToolResolutionExtension] = map[string]any{"resolvable": true}
		out.Tools[i] = &marked
	}
	return &out
}

// MarkedResolvable reports whether t, a tool as a server listed it, carries
// the marker of the tool-resolution extension, {"resolvable": true}, so
// that a host may ask the server to resolve its calls. A nil t is not.
func MarkedResolvable(t *mcp.Tool) bool {
	if t == nil {
		return false
	}
	m, ok := t.Meta[ToolResolutionExtension].(map[string]any)
	if !ok {
		return false
	}
	v, _ := m["resolvable"].(bool)
	return v
}

// validateInput validates args, a JSON object, against schema, if there
// is one. Unlike go-sdk on tools/call, it applies no defaults: resolution
// takes the arguments as they are.
func validateInput(schema *jsonschema.Resolved, args json.RawMessage) error {
	if schema == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return err
	}
	return schema.Validate(v)
}

// resolvedInputSchema returns the input schema of a tool, for
// tools/resolve to validate arguments as tools/call does: the tool's own
// (schema), or else the one go-sdk infers from the handler's input type
// in. It panics on a schema that cannot be resolved, as go-sdk does.
func resolvedInputSchema(toolName string, schema any, in reflect.Type) *jsonschema.Resolved {
	var s *jsonschema.Schema
	switch v := schema.(type) {
	case nil:
		if in == nil {
			return nil
		}
		if in.Kind() == reflect.Pointer {
			in = in.Elem()
		}
		if in == reflect.TypeFor[any]() {
			return nil
		}
		var err error
		if s, err = jsonschema.ForType(in, &jsonschema.ForOptions{}); err != nil {
			panic(fmt.Sprintf("mcpeffect: tool %q: input schema: %v", toolName, err))
		}
	case *jsonschema.Schema:
		s = v
	default:
		raw, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(raw, &s)
		}
		if err != nil {
			panic(fmt.Sprintf("mcpeffect: tool %q: input schema: %v", toolName, err))
		}
	}
	if s == nil {
		return nil
	}
	resolved, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("mcpeffect: tool %q: input schema: %v", toolName, err))
	}
	return resolved
}
