// Package mcpeffect keeps one classification of each tool of an MCP server,
// its effect, and derives from it both what the server advertises (the
// tool annotations hosts read before a call) and what it enforces (which
// credentials may call the tool). Written twice, those two drift: tools
// advertised as read-only that write, read-only tokens that still let
// writes through. Derived from one value, they cannot.
//
// # Effects
//
// An [Effect] says what a call does. It is [Read] or [Write]; a write may
// also be [Destructive] (it deletes or overwrites what exists) and
// [Idempotent] (repeating it with the same arguments changes nothing
// more); any tool may reach an [OpenWorld] outside the server's own data.
// A [Registry] holds the effect of each tool:
//
//	r := mcpeffect.NewRegistry()
//	r.Add("get_task", mcpeffect.Read)
//	r.Add("create_task", mcpeffect.Write)
//	r.Add("update_task", mcpeffect.Destructive|mcpeffect.Idempotent)
//	r.Add("search_web", mcpeffect.Read|mcpeffect.OpenWorld)
//
// [Registry.Add] refuses what cannot be true, with errors that wrap
// [ErrInvalidToolName], [ErrInvalidEffect] or [ErrAlreadyClassified].
//
// # Annotations and scopes
//
// From the effect come the four hints of the MCP specification, always all
// explicit ([Effect.Annotations], [Registry.Annotations]), and the least
// [Scope] that may call the tool ([Registry.Required]):
//
//	effect                        readOnly destructive idempotent openWorld  least scope
//	Read                          true     false       true       false      ReadOnly
//	Write                         false    false       false      false      NonDestructive
//	Write|Idempotent              false    false       true       false      NonDestructive
//	Write|Destructive             false    true        false      false      Full
//	Write|Destructive|Idempotent  false    true        true       false      Full
//	|OpenWorld on any                                             true
//	not classified                false    true        false      true       none
//
// The last row is the worst case that the specification tells hosts to
// assume of a tool without annotations, and no scope may call such a tool.
// The scopes are levels, each allowing what the one below allows: the zero
// Scope calls nothing.
//
//	r.Allowed("get_task", mcpeffect.ReadOnly)          // true
//	r.Allowed("update_task", mcpeffect.NonDestructive) // false: it overwrites
//	r.Allowed("unknown_tool", mcpeffect.Full)          // false: fail closed
//
// Credentials carry scope strings, such as OAuth scopes; [ScopeNames]
// maps them to a Scope ("tools:read", "tools:write" and "tools:destructive"
// by default) and gives the string each tool requires.
//
// A Registry is safe for concurrent use. [Registry.Allowed] takes no lock
// and allocates nothing, at the cost of a lookup in a plain map; the
// middleware's own check of each call reads the same table.
//
// # Servers built with go-sdk
//
// [AddTool] classifies a tool, sets its annotations from the effect and adds
// it to an [mcp.Server]; [Registry.Middleware] enforces the effects on
// every tools/call, whatever the transport, before any handler runs. A tool
// added with AddTool runs only behind that middleware: a server that
// forgets it refuses every call, saying how to install it.
//
//	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_task"}, mcpeffect.Destructive, deleteTask)
//	server.AddReceivingMiddleware(r.Middleware(nil))
//
// The caller's scope comes from the scope strings of its bearer token. A
// request without a token (stdio, in memory) has the scope of its
// connection, set with [WithConnectionScope], which also caps a token's:
//
//	server.Run(mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), &mcp.StdioTransport{})
//
// A refused call gets a JSON-RPC error that names the tool, the scope it
// needs and the scope the caller has; [AsDeniedError] reads it back as a
// [DeniedError]. A handler that the middleware let through reads its
// caller's scope with [CallerScopeFromContext].
//
// Over Streamable HTTP, [Enforcer.Challenge] also answers a refused call
// early with the step-up challenge of the MCP authorization specification
// (403, error="insufficient_scope"), so that a client can ask for the scope
// it lacks. The middleware and the challenge come from one [Enforcer],
// configured once, whose [Enforcer.Decide] is the one decision every way
// in makes, a server built on another SDK included. Package mcpeffecttest proves in a server's own tests that what
// it advertises and what it enforces agree, and [github.com/mcpeffect/mcpeffect/manifest.Of] lists
// every tool with its effect for a README or a review.
//
// # Effects that depend on the arguments
//
// A tool that folds several operations into one declares an [EffectRule]
// instead of one effect: [EffectByArgument] when one string argument
// selects the operation, [EffectByFunc] for a function of the arguments
// with the effects it may return. The tool advertises the worst case of
// those outcomes, which a careful host must assume; each call is enforced
// at its own effect, computed from the arguments as the handler receives
// them, and anything uncertain counts as the worst case:
//
//	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "pods"},
//		mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
//			"get":    mcpeffect.Read,
//			"delete": mcpeffect.Destructive | mcpeffect.Idempotent,
//		}), pods)
//
// A read-only token may then get pods, and not delete them. The tool
// publishes each outcome in its _meta, under [OutcomesMetaKey], from the
// rule it enforces, for audits and people to read. Hosts may ask for the
// hints of one call before making it with the experimental
// tool-resolution extension, which [github.com/mcpeffect/mcpeffect/resolution.Serve] serves.
//
// # Confirmation the server insists on
//
// [MiddlewareOptions] Confirm makes the server ask a person, through MCP
// elicitation, before the calls it chooses (destructive ones by default),
// whatever the host does with the hints; the handler runs only on an
// explicit accept. It relies on the client to relay the person's answer
// honestly: it puts a person in the loop, and is not an authorization
// boundary, which the scope is. See [ConfirmOptions].
//
// # Retries that run once, and undos
//
// [MiddlewareOptions] Idempotency runs a write that is not idempotent at
// most once for each idempotency key a caller sends with it (SEP-3182): a
// retry gets the first call's answer, and other arguments under the key
// are refused. A go-sdk server brings the draft's field to the middleware
// with a carrier, [Enforcer.IdempotencyTransport] or
// [Enforcer.IdempotencyHandler]; the records live in an
// [IdempotencyStore], in memory by default. A write names the tool that
// undoes it with [Registry.DeclareRecovery] (SEP-3172), published in its
// listing.
//
// # Every operation scoped
//
// Reading a resource and getting a prompt need a scope too: read-only,
// unless the server says more with [AddResource], [AddResourceTemplate]
// or [AddPrompt]. The zero Scope reads nothing, as it calls nothing.
//
// # Hosts
//
// The other side, MCP hosts (clients) reading any server's hints and
// deciding whether to run a call, ask the person first or refuse it, is
// package [github.com/mcpeffect/mcpeffect/host].
package mcpeffect
