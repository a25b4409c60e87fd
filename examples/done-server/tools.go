package main

import (
	"context"
	"errors"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/nonnull"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/schemashare"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTools adds every tool of Done to server, classifying each in
// registry.
func (d *done) addTools(server *mcp.Server, registry *mcpeffect.Registry) {
	t := toolbox{server: server, registry: registry, check: d.check, schemas: d.schemas}
	d.addTaskTools(t)
	d.addStepTools(t)
	d.addCommentTools(t)
	d.addProjectTools(t)
	d.addLabelTools(t)
	d.addApprovalTools(t)
	d.addTrashTools(t)
	d.addAccountTools(t)
	d.addFleetTools(t)
	d.addDigestTools(t)
	d.addCalendarTools(t)
	d.addConnectorTools(t)
	declareRecoveries(registry) // the undo of each move to the Trash (recoveries.go)
}

// A toolbox is where [addTool] adds tools: a server, the registry that
// classifies its tools, the check of their errors, and the schemas that
// the servers of a process share.
type toolbox struct {
	server   *mcp.Server
	registry *mcpeffect.Registry
	check    func(context.Context, error) error
	schemas  *schemashare.Set
}

// addTool adds the tool name to t's server with [mcpeffect.AddTool],
// classified e: the one place where the tool's effect is declared, from
// which come both its annotations and the scope it needs. title is what
// a host shows a person for it (see [tool]). Its arguments are In and its
// result Out, with the schemas of [tool]. h does the tool's work; what it
// returns goes through [done.check], so that a fault of the server never
// reaches the caller.
//
// go-sdk checks every result against the tool's output schema before it
// is sent, and a result that breaks it (a status outside its enumeration,
// say) fails the call: what the schema promises a client holds at run
// time, not only in the tests, for a price in each call (see
// docs/performance.md) worth paying in a server people copy.
func addTool[In, Out any](t toolbox, name, title, description string, e mcpeffect.Effect, h func(context.Context, In) (Out, error)) {
	mcpeffect.AddTool(t.server, t.registry, tool[In, Out](t.schemas, name, title, description), e,
		func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
			out, err := h(idempotentWrites(ctx), in)
			if err = t.check(ctx, err); err != nil {
				var zero Out
				return nil, zero, err
			}
			nonnull.Fill(reflect.ValueOf(&out).Elem())
			return nil, out, nil
		})
}

// check turns an error of the store or of a connector into the error a
// tool call reports. A refusal ([refusal.Error], which the store and the
// connectors return alike) goes to the caller as it is: its message says
// what is wrong. Anything else is a fault of the server, whose details
// belong in its log, not in the answer.
func (d *done) check(ctx context.Context, err error) error {
	if err == nil || refusal.CodeOf(err) != 0 || errors.Is(err, context.Canceled) {
		return err
	}
	if store.Transient(err) {
		// A shared database that is down, restarting or too contended:
		// the caller may try again, and should know it.
		d.logger.WarnContext(ctx, "tool call failed on the database", "err", err)
		noteTransient(ctx)
		return errors.New("the database of Done is unavailable for now (down, restarting or busy): nothing was changed; try again in a few seconds")
	}
	d.logger.ErrorContext(ctx, "tool call failed", "err", err)
	return errors.New("internal error: nothing was changed; the server log has the details")
}

// schemaFor returns the JSON Schema of T from set (see
// [schemashare.Set]), inferred the first time as go-sdk would infer it,
// except that the store's enumerated types list the values they allow,
// and that a slice is an "array", never null (see [nonnull.Rewrite]).
// Hosts then show the allowed values, and go-sdk refuses any other before
// a handler runs.
func schemaFor[T any](set *schemashare.Set) *jsonschema.Schema {
	t := reflect.TypeFor[T]()
	return set.Of(t, func() *jsonschema.Schema { return inferSchema(t) })
}

// inferSchema infers the schema of t, as schemaFor says.
func inferSchema(t reflect.Type) *jsonschema.Schema {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: enumSchemas})
	if err != nil {
		panic(err) // a bug in the types of this package
	}
	nonnull.Rewrite(t, s)
	return s
}

var enumSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[store.Status]():       enum(store.Statuses...),
	reflect.TypeFor[store.Priority]():     enum(store.Priorities...),
	reflect.TypeFor[store.StepStatus]():   enum(store.StepStatuses...),
	reflect.TypeFor[store.Kind]():         enum(store.Human, store.Agent),
	reflect.TypeFor[store.RunStatus]():    enum(store.RunStatuses...),
	reflect.TypeFor[store.Period]():       enum(store.Periods...),
	reflect.TypeFor[store.ApprovalKind](): enum(store.ApprovalKinds...),
	reflect.TypeFor[runOutcome]():         enum(store.Outcomes...),
	reflect.TypeFor[store.ArtifactKind](): enum(store.ArtifactKinds...),
	reflect.TypeFor[mcpeffect.Scope]():    enum(mcpeffect.ReadOnly.String(), mcpeffect.NonDestructive.String(), mcpeffect.Full.String()),
}

func enum[T ~string](values ...T) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string"}
	for _, v := range values {
		s.Enum = append(s.Enum, string(v))
	}
	return s
}

// tool returns the definition of a tool whose arguments are In and whose
// result is Out, for [mcpeffect.AddTool].
//
// The title, a few words for people ("Delete task"), is set twice: as the
// tool's title, which MCP has had since 2025-06-18 and which most hosts
// show, and in its annotations, where 2025-03-26 put it and where some
// hosts still look first (VS Code shows annotations.title before title).
// App directories want one or the other (Claude's rejects a tool with
// neither); mcpeffect.AddTool keeps the annotations' title and derives
// every hint.
func tool[In, Out any](schemas *schemashare.Set, name, title, description string) *mcp.Tool {
	return &mcp.Tool{
		Name:         name,
		Title:        title,
		Annotations:  &mcp.ToolAnnotations{Title: title},
		Description:  description,
		InputSchema:  schemaFor[In](schemas),
		OutputSchema: schemaFor[Out](schemas),
	}
}

// noArgs are the arguments of a tool that takes none.
type noArgs struct{}

// taskArg is the argument of the tools that act on one task.
type taskArg struct {
	TaskID string `json:"task_id" jsonschema:"the id of the task"`
}

// taskPageArgs are the arguments of the tools that list what belongs to
// one task.
type taskPageArgs struct {
	taskArg
	store.Page
}

// paged ends the description of every tool that lists: no list is
// answered whole, so that no answer grows with the data (see store.Page).
const paged = " One page at a time (limit, 50 by default, at most 200): pass next_cursor back as cursor for the next page."
