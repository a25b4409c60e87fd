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
// more); any tool may reach an [OpenWorld] outside the server's own data:
//
//	r := mcpeffect.NewRegistry()
//	r.Add("get_task", mcpeffect.Read)
//	r.Add("create_task", mcpeffect.Write)
//	r.Add("update_task", mcpeffect.Destructive|mcpeffect.Idempotent)
//	r.Add("search_web", mcpeffect.Read|mcpeffect.OpenWorld)
//
// # Annotations
//
// [Registry.Annotations] turns the effect into the four hints of the MCP
// specification, always all explicit:
//
//	effect                          readOnly destructive idempotent openWorld
//	Read                            true     false       true       false
//	Write                           false    false       false      false
//	Write|Idempotent                false    false       true       false
//	Write|Destructive               false    true        false      false
//	Write|Destructive|Idempotent    false    true        true       false
//	|OpenWorld on any                                               true
//	not classified                  false    true        false      true
//
// The last row is the worst case that the specification tells hosts to
// assume of a tool without annotations. Going the other way, package host
// reads the annotations any server sends into the effect a careful host
// must assume.
//
// # Scopes
//
// A [Scope] is what a credential may call: [ReadOnly] calls reads,
// [NonDestructive] also calls writes that are not destructive, [Full] calls
// everything classified. The zero Scope calls nothing, and neither does any
// scope call a tool the registry does not know:
//
//	r.Allowed("get_task", mcpeffect.ReadOnly)          // true
//	r.Allowed("update_task", mcpeffect.NonDestructive) // false: it overwrites
//	r.Allowed("unknown_tool", mcpeffect.Full)          // false: fail closed
//
// Credentials carry scope strings, such as OAuth scopes; [ScopeNames]
// maps them to a Scope ("tools:read", "tools:write" and "tools:destructive"
// by default) and gives the string each tool requires.
//
// A [Registry] is safe for concurrent use, and [Registry.Allowed], which
// sits on every call, takes no lock and allocates nothing.
//
// # Servers built with go-sdk
//
// [AddTool] classifies a tool, sets its annotations from the effect and adds
// it to an [mcp.Server]; [Registry.Middleware] enforces the effects on
// every tools/call, whatever the transport, before any handler runs:
//
//	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_task"}, mcpeffect.Destructive, deleteTask)
//	server.AddReceivingMiddleware(r.Middleware(nil))
//
// The caller's scope comes from the scope strings of its bearer token, or,
// over stdio, from the connection: see [WithConnectionScope]. Over Streamable HTTP,
// [Registry.Challenge] also answers a refused call early with the step-up
// challenge of the MCP authorization specification (403,
// error="insufficient_scope"), so that a client can ask for the scope it
// lacks. Package mcpeffecttest proves in a server's own tests that what it
// advertises and what it enforces agree, and [Registry.Manifest] lists
// every tool with its effect for a README or a review.
//
// # Hosts
//
// The other side, MCP hosts (clients) reading any server's hints and
// deciding whether to run a call, ask the person first or refuse it, is
// package [github.com/mcpeffect/mcpeffect/host].
package mcpeffect
