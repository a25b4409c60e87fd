// Package resolution serves and names the experimental MCP extension for
// tool resolution, with which a host asks a server for the hints of one
// call before it makes it: the effect of that call, where the tool's
// advertised hints are the worst case of its calls (see
// [mcpeffect.EffectRule]). It is an experimental draft of the MCP
// community (modelcontextprotocol/experimental-ext-tool-annotations,
// specification/draft/tool-resolution.mdx), not part of the MCP
// specification, and may change, and this package with it.
//
// A server serves it with [Serve]; a host asks through package
// [github.com/mcpeffect/mcpeffect/host] (EnableToolResolution).
package resolution

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the identifier of the extension, in the capabilities of
// clients and servers and as the key of the marker of a resolvable tool.
const Extension = "io.modelcontextprotocol/tool-resolution"

// Method is the method of the extension.
const Method = "tools/resolve"

// Params are the parameters of a tools/resolve request: the tool and the
// complete arguments of the call the host means to make.
type Params struct {
	mcp.ParamsBase
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Result is the result of a tools/resolve request: the four hints of the
// call, each explicit.
type Result struct {
	mcp.ResultBase
	// ResultType is "complete".
	ResultType  string          `json:"resultType"`
	Name        string          `json:"name"`
	Annotations mcpeffect.Hints `json:"annotations"`
}

// Serve serves the extension on s for the tools r classifies: a host
// that declares the extension may ask, with tools/resolve, for the hints
// of one call of a tool whose effect depends on its arguments, and gets
// those of the call's own effect. It is opt-in.
//
// Serve adds the custom method tools/resolve, and receiving middleware
// that advertises the extension (in the capabilities of initialize and
// server/discover) and marks, in tools/list, the tools it can resolve,
// for a client that declares the extension on that request. Those are
// the tools added with a rule (see [mcpeffect.AddTool]) whose
// raw arguments give the effect of a call with certainty (see
// [mcpeffect.EffectRule.CallEffect]): the common form, of a handler that
// receives its argument as a plain string, and the general form of a
// low-level handler. A call whose arguments leave the outcome uncertain
// resolves to the worst case, the advertised hints.
//
// Resolution reports hints, not permission: it answers the same whatever
// the caller's scope, runs nothing, and changes nothing. A host must not
// take it as a promise: the call itself is checked again, on its own
// arguments, by the middleware.
//
// The errors are the extension's: -32021 ([mcp.CodeMissingRequiredClientCapabilities])
// when the request does not declare the extension (with settings {}),
// -32602 for a tool not marked resolvable or arguments that are missing,
// not an object, or refused by the tool's input schema.
func Serve(s *mcp.Server, r *mcpeffect.Registry) error {
	if err := mcp.AddReceivingCustomMethod(s, Method, func(ctx context.Context, ss *mcp.ServerSession, p *Params) (*Result, error) {
		return resolve(r, &mcp.ServerRequest[*Params]{Session: ss, Params: p})
	}); err != nil {
		return err
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler { return middleware(r, next) })
	return nil
}

// declares reports whether caps declare the extension, with the empty
// settings it defines; other settings count as not declared.
func declares(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	v, ok := caps.Extensions[Extension]
	if !ok {
		return false
	}
	settings, ok := v.(map[string]any)
	return ok && len(settings) == 0
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// resolve answers a tools/resolve request.
func resolve(r *mcpeffect.Registry, req *mcp.ServerRequest[*Params]) (*Result, error) {
	if !declares(req.ClientCapabilities()) {
		var need mcp.ClientCapabilities
		need.AddExtension(Extension, nil)
		data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &need})
		return nil, &jsonrpc.Error{
			Code:    mcp.CodeMissingRequiredClientCapabilities,
			Message: fmt.Sprintf("%s needs the client capability extensions[%q] = {} on the request", Method, Extension),
			Data:    data,
		}
	}
	p := req.Params
	if p == nil || p.Name == "" {
		return nil, invalidParams("%s: no tool name", Method)
	}
	if !r.Resolvable(p.Name) {
		return nil, invalidParams("%s: tool %q is not a tool this server resolves", Method, p.Name)
	}
	args := bytes.TrimSpace(p.Arguments)
	if len(args) == 0 || args[0] != '{' {
		return nil, invalidParams("%s: tool %q: the arguments must be the complete arguments of the call, a JSON object", Method, p.Name)
	}
	e, err := r.ResolveCall(p.Name, args)
	if err != nil {
		return nil, invalidParams("%s: tool %q: the tool's input schema refuses the arguments: %v", Method, p.Name, err)
	}
	worst, _ := r.Effect(p.Name)
	hints := e.Hints()
	if !e.Valid() || !hints.Within(worst.Hints()) {
		// CallEffect gives only declared outcomes or the worst case.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: tool %q: no trustworthy hints", Method, p.Name)}
	}
	return &Result{ResultType: "complete", Name: p.Name, Annotations: hints}, nil
}

// middleware advertises the extension and marks the tools it resolves.
func middleware(r *mcpeffect.Registry, next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch res := res.(type) {
		case *mcp.InitializeResult:
			out := *res
			out.Capabilities = advertised(res.Capabilities)
			return &out, nil
		case *mcp.DiscoverResult:
			out := *res
			out.Capabilities = advertised(res.Capabilities)
			return &out, nil
		case *mcp.ListToolsResult:
			list, ok := req.(*mcp.ListToolsRequest)
			if !ok || !declares(list.ClientCapabilities()) {
				return res, nil
			}
			return marked(r, res), nil
		}
		return res, nil
	}
}

// advertised returns a copy of caps that also advertises the extension.
func advertised(caps *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	var out mcp.ServerCapabilities
	if caps != nil {
		out = *caps
	}
	out.Extensions = maps.Clone(out.Extensions)
	out.AddExtension(Extension, nil)
	return &out
}

// marked returns a copy of list in which the tools it can resolve carry
// the extension's marker. The tools are the server's: a tool that is
// marked is copied, with its metadata.
func marked(r *mcpeffect.Registry, list *mcp.ListToolsResult) *mcp.ListToolsResult {
	out := *list
	out.Tools = make([]*mcp.Tool, len(list.Tools))
	for i, t := range list.Tools {
		out.Tools[i] = t
		if t == nil || !r.Resolvable(t.Name) {
			continue
		}
		m := *t
		m.Meta = maps.Clone(t.Meta)
		if m.Meta == nil {
			m.Meta = mcp.Meta{}
		}
		m.Meta[Extension] = map[string]any{"resolvable": true}
		out.Tools[i] = &m
	}
	return &out
}

// Marked reports whether t, a tool as a server listed it, carries the
// marker of the extension, {"resolvable": true}, so that a host may ask
// the server to resolve its calls. A nil t is not.
func Marked(t *mcp.Tool) bool {
	if t == nil {
		return false
	}
	m, ok := t.Meta[Extension].(map[string]any)
	if !ok {
		return false
	}
	v, _ := m["resolvable"].(bool)
	return v
}
