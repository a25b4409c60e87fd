// Package mcpeffecttest proves, in the tests of an MCP server built with
// mcpeffect, that the one effect each tool is classified with is what the
// server tells hosts, what it enforces, and the truth.
//
// [Check] proves that what a server advertises and what it enforces
// agree: every tool is classified, its annotations are those its effect
// derives, and at each boundary between scopes every call the scope may
// not make is refused before its handler runs (read-only against every
// write, non-destructive against every destructive write).
//
// [Verify] proves that the classification is true. It calls each tool on
// a fresh instance of the server, twice with the same arguments, and
// compares the data the server's users see before and after each call:
//
//   - read: the state is exactly the same after the call;
//   - non-destructive write: every value that existed before the call
//     exists after it, unchanged. It may add records, and values in fields
//     that were empty; nothing else;
//   - destructive write: anything else, such as changing a status, an
//     assignee, a flag or a position, or moving a record to a Trash;
//   - idempotent write: repeating the call with the same arguments leaves
//     the state exactly as the first call left it.
//
// The state is what users see as data, captured by a function of the
// server's author as records by key ([State]), so that a failure names the
// record and field that changed, with its value before and after.
// Bookkeeping that users do not see as data (an updated_at, a last-used
// time, the activity log itself) may be left out of it, in one short list,
// each entry justified where it is written. Verify also fails a
// classification that claims more than any example shows, such as a
// destructive tool that never destroys, since hosts then ask people before
// calls for nothing.
//
// A server's test gives Check the server, and Verify a function that makes
// a fresh [Instance] (a new temporary database, say) and a table of
// [Example] calls, at least one a tool, which doubles as the documentation
// of what each tool does. An example may make fixtures first, through the
// server's own tools or directly, compute its arguments from them (ids
// that only exist at run time), and say who calls:
//
//	func TestEffects(t *testing.T) {
//		inst := newInstance(t)
//		mcpeffecttest.Check(t, inst.Server, inst.Registry)
//		mcpeffecttest.Verify(t, newInstance, []mcpeffecttest.Example[*Store]{
//			{Tool: "create_task", Args: map[string]any{"title": "Buy milk"}},
//			{Tool: "complete_task", Setup: func(t testing.TB, st *Store, s *mcpeffecttest.Session) any {
//				return map[string]any{"id": st.AddTask("Buy milk")}
//			}},
//		}, nil)
//	}
//
// A tool whose effect depends on its arguments ([mcpeffect.EffectRule])
// is checked and verified outcome by outcome. Check makes a call for each
// outcome of the common form itself (the rule's argument set to its
// value), or takes the [Call] values given to it; for the general form,
// it can only prove, without calls given, that a scope allowing none of
// the outcomes is refused. Verify holds each example to the effect of its
// own call, and wants an example of each outcome.
//
// Check calls only what a scope refuses, so it never runs a handler that
// the middleware lets through; Verify runs every one.
package mcpeffecttest
