// Package mcpgo brings mcpeffect to MCP servers built on
// github.com/mark3labs/mcp-go: one effect per tool, from which both the
// tool's advertised annotations and the check of every call are derived,
// by the same decision as the go-sdk integration
// ([mcpeffect.Enforcer.Decide]).
//
// Build the server with [ServerOptions], add its tools with [AddTool]
// (given an effect, or a rule for a tool whose effect depends on its
// arguments), and serve it with [ServeStdio] or [Listen] over stdio, or behind
// [Handler] over Streamable HTTP:
//
//	r := mcpeffect.NewRegistry()
//	s := server.NewMCPServer("tasks", "v1", mcpgo.ServerOptions(r, nil)...)
//	mcpgo.AddTool(s, r, mcp.NewTool("delete_task"), mcpeffect.Destructive|mcpeffect.Idempotent, deleteTask)
//	mcpgo.ServeStdio(mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), s)
//
// The caller's scope is that of its connection over stdio
// ([mcpeffect.WithConnectionScope] on the context given to Listen), and
// that of its bearer token over HTTP (the [auth.TokenInfo] of go-sdk's
// [auth.RequireBearerToken], in front of mcp-go's Streamable HTTP server),
// capped by a connection scope if an [server.HTTPContextFunc] sets one.
// The zero Scope calls and reads nothing. A refusal is mcpeffect's
// [mcpeffect.DeniedError], with its code [mcpeffect.CodeDenied], message
// and data, which [mcpeffect.AsDeniedError] reads back on any client.
//
// # What the adapter cannot promise that the go-sdk integration does
//
// mcp-go gives a handler's error to the client as an internal error,
// without data. [Listen], [ServeStdio] and [Handler] send a refusal with
// its code and data instead; a server served by mcp-go's own ServeStdio
// or Streamable HTTP server alone still refuses, before the handler and
// with the same message, but as an internal error without data. A
// response that mcp-go replays from an event store is replayed as it
// stored it.
//
// mcp-go answers a call of a tool it does not have, or of a resource or
// prompt it does not have, with its own "not found" before any check, so
// the zero Scope learns which names exist; the go-sdk integration
// refuses those too.
//
// A tool added with mcp-go's AddTaskTool runs without the tool handler
// middleware: its calls are decided by a hook of ServerOptions before
// the task is created, and, on a server without ServerOptions, not at
// all. mcp-go sends a hook's refusal as an invalid request, which over
// HTTP to a client of protocol 2026-07-28 comes with the status 400,
// and Handler gives it the code and data of the refusal but leaves the
// status. The hooks are mcp-go's one [server.Hooks] value: a
// [server.WithHooks] after ServerOptions replaces them, and the server
// then refuses every call, saying so.
//
// Confirmation ([Options] Confirm) is asked within the call, as a multi
// round-trip request of protocol 2026-07-28, which mcp-go turns into an
// elicitation request for clients of earlier protocols. The answer of a
// client of protocol 2026-07-28 comes with the call it answers, and the
// adapter does not sign the question's state as the go-sdk integration
// does: such a client can send an accept with a call that was never
// asked, as any client can answer an elicitation without asking anyone.
// A task-augmented call that needs confirmation is refused, since its
// task runs after the call is answered. mcpeffect's tool resolution
// extension (tools/resolve) is not served.
//
// With HideDenied, a list is the caller's own: the go-sdk integration
// marks it private to caches, and mcp-go's hooks cannot, so do not give
// such a server public cache hints ([server.WithCacheHints]).
//
// mcp-go tries the resource templates that match a URI in no fixed order:
// declare templates whose URIs do not overlap, or overlap with the same
// scope (see [AddResourceTemplate]).
//
// [auth.TokenInfo]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#TokenInfo
// [auth.RequireBearerToken]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#RequireBearerToken
package mcpgo
