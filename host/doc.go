// Package host is the side of mcpeffect for MCP hosts (clients): reading
// the annotations any server declares for its tools, and deciding before
// a call whether to send it, ask the person first, or refuse it.
//
// A server's hints are only claims, and a hint it leaves out must be taken
// as its worst case. [Declared] holds the four hints as declared, each
// nil where it was left out (where [mcpeffect.Hints], the server's side,
// has all four); [ParseDeclared] reads them from a tool's JSON and
// [DeclaredOf] from go-sdk's [mcp.ToolAnnotations]; [Declared.Effect] and
// [EffectOf] turn them into the [mcpeffect.Effect] a careful host must
// assume:
//
//	h, _ := host.ParseDeclared([]byte(`{"readOnlyHint": false}`))
//	h.Effect() // write|destructive|openworld: destructiveHint and openWorldHint are missing
//
// A [Policy] chooses from those hints, and from whether the server is
// trusted, the [Action]: to [Allow] a call, [Ask] the person or [Deny] it; its zero value
// is the careful default. An [Approver] applies a Policy to the calls of a
// go-sdk client as sending middleware: a call it denies, or that the person
// declines, never reaches the server, and CallTool returns a
// [*NotSentError].
//
// An Approver also remembers. It pins the definition of each tool whose
// call it approved ([Pins]), and asks again when a server changes it, in
// the same session or in a later one whose host saved the pins: a read
// that becomes a write, or a description that now steers the model, is a
// "rug pull". With [Policy] AskAfterOpenWorld, a session that has taken in
// the output of an open-world tool is asked about before each write and
// open-world call it makes.
//
// Where a server serves the experimental tool-resolution extension
// ([resolution.Extension]), an Approver whose Policy has
// ResolveCalls asks for the hints of each call of a tool whose effect
// depends on its arguments, and decides from those when they keep to the
// extension's rules (see [EnableToolResolution]).
package host
