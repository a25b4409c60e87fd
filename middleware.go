package mcpeffect

import (
	"context"
	"maps"

	"github.com/mcpeffect/mcpeffect/internal/testhook"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Middleware returns receiving middleware for an [mcp.Server] that enforces
// r, configured by opts: r.Enforcer(opts).Middleware() (see
// [Registry.Enforcer] and [Enforcer.Middleware]). A server that also
// answers the HTTP step-up challenge makes the [Enforcer] once and takes
// both from it, so that they share one configuration.
//
// Middleware panics if opts.ScopeNames is not valid (see
// [ScopeNames.Validate]), or if opts.Confirm has a Key shorter than 32
// bytes.
func (r *Registry) Middleware(opts *MiddlewareOptions) mcp.Middleware {
	return r.Enforcer(opts).Middleware()
}

// Middleware returns receiving middleware for an [mcp.Server] that
// enforces e's registry: install it with
// [mcp.Server.AddReceivingMiddleware]. It is the authoritative check, and
// the one that cannot be bypassed, since it runs after go-sdk has parsed
// the request, whatever the transport.
//
// Each request that [Enforcer.Decide] decides (tools/call,
// resources/read, resources/subscribe, subscriptions/listen, prompts/get
// and completion/complete) it hands to that one decision before any
// handler runs. A refusal is a JSON-RPC error of code [CodeDenied] whose
// message names the tool (resource, prompt), the scope it needs and the
// scope the caller has (see [MiddlewareOptions] Scope); a tool that the
// registry does not classify is refused for every scope. A request it
// lets through reaches its handler with the decision in its context
// ([DecisionFromContext]), without which a tool, resource or prompt added
// with [AddTool] and the others refuses to run. With HideDenied, it
// filters the lists of tools, resources, resource templates and prompts.
// A tool whose recovery is declared ([Registry.DeclareRecovery]) is
// listed with it in its _meta ([RecoveryMetaKey]), and a listing fails
// with the error of [Registry.CheckRecoveries]. Every other method passes
// through untouched.
//
// For a tool whose effect depends on its arguments (see [EffectRule]), the
// decision is made here when the raw arguments give the call's effect
// with certainty (see [EffectRule.CallEffect]); otherwise a caller whose
// scope allows some of the rule's outcomes is let through to the wrapper
// of [AddTool], which finishes the same decision from the input its
// handler receives.
func (e *Enforcer) Middleware() mcp.Middleware {
	return e.wrap
}

func (e *Enforcer) wrap(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		op, ok := operationOf(req)
		if !ok {
			switch method {
			case methodInitialize, methodDiscover:
				res, err := next(ctx, method, req)
				if err != nil {
					return res, err
				}
				res = advertised(res)
				if e.idem != nil && carriedRequest(req) {
					res = &idempotencyAdvertised{res}
				}
				return res, nil
			case methodListTools, methodListResources, methodListTemplates, methodListPrompts:
				hide := e.opts.HideDenied && !testhook.UnfilteredList(ctx)
				publish := method == methodListTools && e.r.hasRecoveries()
				if hide || publish {
					res, err := next(ctx, method, req)
					if err != nil {
						return res, err
					}
					if publish {
						if res, err = e.r.publishRecoveries(res); err != nil {
							return nil, err
						}
					}
					if hide {
						s, _ := granted(ctx, e.requestCaller(ctx, req))
						res = e.filterList(res, s)
					}
					return res, nil
				}
			}
			return next(ctx, method, req)
		}
		d := e.decide(ctx, op, e.requestCaller(ctx, req), argsWire)
		if d.Denied != nil {
			return nil, e.refused(ctx, d)
		}
		if !d.pending {
			e.report(ctx, d)
		}
		if e.idem != nil {
			if call, ok := req.(*mcp.CallToolRequest); ok {
				if _, keyed := call.Params.Meta[IdempotencyKeyMetaKey]; keyed {
					return e.callOnce(ctx, d, method, call, next)
				}
			}
		}
		return next(&decisionContext{ctx, d}, method, req)
	}
}

// operationOf returns the operation that req is, for the requests that
// [Enforcer.Decide] decides: one line each. Any other request, or one
// without its params, goes on untouched (go-sdk refuses what it cannot
// serve).
func operationOf(req mcp.Request) (Operation, bool) {
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if r.Params != nil {
			return Operation{Method: methodCallTool, Name: r.Params.Name, Arguments: r.Params.Arguments}, true
		}
	case *mcp.ReadResourceRequest:
		if r.Params != nil {
			return Operation{Method: methodReadResource, URI: r.Params.URI}, true
		}
	case *mcp.GetPromptRequest:
		if r.Params != nil {
			return Operation{Method: methodGetPrompt, Name: r.Params.Name}, true
		}
	case *mcp.SubscribeRequest:
		if r.Params != nil {
			return Operation{Method: methodSubscribe, URI: r.Params.URI}, true
		}
	case *mcp.SubscriptionsListenRequest:
		if r.Params != nil && r.Params.Notifications != nil {
			return Operation{Method: methodListen, URIs: r.Params.Notifications.ResourceSubscriptions}, true
		}
	case *mcp.CompleteRequest:
		if r.Params != nil && r.Params.Ref != nil {
			return completion(r.Params.Ref.Type, r.Params.Ref.Name, r.Params.Ref.URI)
		}
	}
	return Operation{}, false
}

// completion returns the operation of a completion/complete of the
// reference of type refType: of the prompt name, or of the resource
// template (or resource) uri. A reference of another type goes on, for
// the SDK to refuse.
func completion(refType, name, uri string) (Operation, bool) {
	switch refType {
	case completeRefPrompt:
		return Operation{Method: methodComplete, Name: name}, true
	case completeRefResource:
		return Operation{Method: methodComplete, URI: uri}, true
	}
	return Operation{}, false
}

// filterList returns a copy of res, a listing, holding only what scope s
// may call, read or get ([Enforcer.Listed]), marked cacheable privately.
// The items themselves are shared, not copied: they belong to the server
// and no one changes them.
func (e *Enforcer) filterList(res mcp.Result, s Scope) mcp.Result {
	switch list := res.(type) {
	case *mcp.ListToolsResult:
		out := *list
		out.Tools = allowedOnly(list.Tools, func(t *mcp.Tool) bool { return e.listed(Operation{Method: "tools/call", Name: t.Name}, s) })
		out.CacheScope = "private"
		return &out
	case *mcp.ListResourcesResult:
		out := *list
		out.Resources = allowedOnly(list.Resources, func(r *mcp.Resource) bool { return e.listed(Operation{Method: "resources/read", URI: r.URI}, s) })
		out.CacheScope = "private"
		return &out
	case *mcp.ListResourceTemplatesResult:
		out := *list
		out.ResourceTemplates = allowedOnly(list.ResourceTemplates, func(t *mcp.ResourceTemplate) bool {
			return e.listed(Operation{Method: "resources/read", URI: t.URITemplate, Template: true}, s)
		})
		out.CacheScope = "private"
		return &out
	case *mcp.ListPromptsResult:
		out := *list
		out.Prompts = allowedOnly(list.Prompts, func(p *mcp.Prompt) bool { return e.listed(Operation{Method: "prompts/get", Name: p.Name}, s) })
		out.CacheScope = "private"
		return &out
	}
	return res
}

// allowedOnly returns a new slice of the items of a listing that are not
// nil and that allowed keeps, in their order. The items are shared, not
// copied: they belong to the server and no one changes them.
func allowedOnly[T any](items []*T, allowed func(*T) bool) []*T {
	out := make([]*T, 0, len(items))
	for _, it := range items {
		if it != nil && allowed(it) {
			out = append(out, it)
		}
	}
	return out
}

// advertised returns res, the result of initialize or server/discover,
// with the capabilities that the middleware adds: the extension of
// SEP-2643, whose envelope every refusal carries. The result is the
// server's: it is copied, not changed.
func advertised(res mcp.Result) mcp.Result {
	add := func(caps *mcp.ServerCapabilities) *mcp.ServerCapabilities {
		var out mcp.ServerCapabilities
		if caps != nil {
			out = *caps
		}
		out.Extensions = maps.Clone(out.Extensions)
		out.AddExtension(AuthorizationDenialsExtension, nil)
		return &out
	}
	switch r := res.(type) {
	case *mcp.InitializeResult:
		out := *r
		out.Capabilities = add(r.Capabilities)
		return &out
	case *mcp.DiscoverResult:
		out := *r
		out.Capabilities = add(r.Capabilities)
		return &out
	}
	return res
}
