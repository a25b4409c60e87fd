// Package telemetry makes the decisions of mcpeffect observable with
// OpenTelemetry: each operation an MCP server receives gets a span and a
// duration, as the OpenTelemetry semantic conventions for MCP name them,
// and on the span what mcpeffect decided of it (allow, deny, confirm,
// and the person's answer), with the effect and the caller's scope; the
// decisions are counted by tool and outcome.
//
// It is a module of its own, so that mcpeffect does not depend on
// OpenTelemetry. Three things connect it, all from one [Telemetry]:
//
//   - the span of each operation, opened before mcpeffect decides: on
//     go-sdk, the receiving middleware of [Telemetry.Middleware],
//     installed before mcpeffect's; on mcp-go, the options of package
//     mcpgotel;
//   - [Telemetry.OnDecision], set as the OnDecision of
//     [mcpeffect.MiddlewareOptions], which puts each decision on the
//     span in its context and counts it;
//   - the providers of [Options], or OpenTelemetry's global ones.
//
// On go-sdk:
//
//	t, err := telemetry.New(&telemetry.Options{TracerProvider: tp, MeterProvider: mp})
//	...
//	s.AddReceivingMiddleware(t.Middleware(), r.Middleware(&mcpeffect.MiddlewareOptions{OnDecision: t.OnDecision}))
//
// What it records:
//
//   - a span of kind server per request or notification, named
//     "{mcp.method.name} {target}" where the target is a tool or a prompt
//     that the server knows, else "{mcp.method.name}", with
//     mcp.method.name, gen_ai.tool.name, gen_ai.operation.name
//     (execute_tool), gen_ai.prompt.name, mcp.resource.uri,
//     mcp.session.id, mcp.protocol.version, jsonrpc.request.id (mcp-go
//     only), network.transport (HTTP) and, for an error, error.type (the
//     JSON-RPC code, or tool_error) and rpc.response.status_code, with
//     the status Error and the error's message; and mcpeffect.decision,
//     mcpeffect.scope, mcpeffect.effect, mcpeffect.scope.required and
//     mcpeffect.confirm.answer, with an event mcpeffect.decision at each
//     decision of a call that needs confirmation;
//   - the histogram mcp.server.operation.duration, in seconds, with the
//     conventions' buckets, by mcp.method.name, gen_ai.tool.name,
//     gen_ai.prompt.name, gen_ai.operation.name, error.type,
//     rpc.response.status_code, mcp.protocol.version and
//     network.transport;
//   - the counters mcpeffect.decisions (by mcp.method.name,
//     gen_ai.tool.name, mcpeffect.decision, mcpeffect.scope) and
//     mcpeffect.confirmations (the same, by mcpeffect.confirm.answer).
//
// A name that the server does not know (a tool the registry does not
// classify, a prompt that was not served) stays on its span's attributes
// only: in the span's name and on the metrics it would let any caller
// add a series per name it makes up.
//
// An adapter for another SDK opens and ends the operations itself, with
// [Telemetry.Start] and [Operation.End], as the go-sdk middleware and
// package mcpgotel do.
package telemetry
