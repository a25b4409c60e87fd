package mcpeffect

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddTool classifies t.Name in r with effect e, sets the tool's annotations
// from that one classification, and adds the tool to s with [mcp.AddTool].
// A title the caller set in t.Annotations is kept; t itself is not changed.
//
// Like [mcp.AddTool] on a bad schema, AddTool panics when the classification
// is refused (see [Registry.Add]; a name already classified with the same
// effect is accepted), and when t arrives with hints that disagree with e:
// a hint written twice is the drift this package exists to prevent, so the
// hints are best left out. go-sdk cannot tell a readOnlyHint or
// idempotentHint of false from one left out, so only true is checked there.
func AddTool[In, Out any](s *mcp.Server, r *Registry, t *mcp.Tool, e Effect, h mcp.ToolHandlerFor[In, Out]) {
	mcp.AddTool(s, r.classify(t, e), h)
}

// AddToolHandler is [AddTool] for a low-level [mcp.ToolHandler], added
// with [mcp.Server.AddTool]: the handler unmarshals and validates its own
// arguments.
func AddToolHandler(s *mcp.Server, r *Registry, t *mcp.Tool, e Effect, h mcp.ToolHandler) {
	s.AddTool(r.classify(t, e), h)
}

// classify adds t to r with effect e and returns a copy of t annotated from
// it. It panics where AddTool documents.
func (r *Registry) classify(t *mcp.Tool, e Effect) *mcp.Tool {
	if t == nil {
		panic("mcpeffect: AddTool: nil tool")
	}
	// The name and the effect first: the hints an invalid effect derives
	// would make the conflict below meaningless.
	if err := validateEntry(t.Name, e); err != nil {
		panic(err)
	}
	want := e.Annotations()
	var title string
	if t.Annotations != nil {
		if err := conflict(t.Annotations, want); err != nil {
			panic(fmt.Sprintf("mcpeffect: AddTool: tool %q is classified %s, but %v", t.Name, e, err))
		}
		title = t.Annotations.Title
	}
	if err := r.Add(t.Name, e); err != nil {
		if old, ok := r.Effect(t.Name); !ok || old != e {
			panic(err)
		}
	}
	tt := *t
	want.Title = title
	tt.Annotations = want
	return &tt
}

// conflict returns an error naming the first hint that a tool's own
// annotations set and that differs from what its effect derives.
func conflict(got, want *mcp.ToolAnnotations) error {
	switch {
	case got.ReadOnlyHint && !want.ReadOnlyHint:
		return fmt.Errorf("its annotations say readOnlyHint: true")
	case got.IdempotentHint && !want.IdempotentHint:
		return fmt.Errorf("its annotations say idempotentHint: true")
	case got.DestructiveHint != nil && *got.DestructiveHint != *want.DestructiveHint:
		return fmt.Errorf("its annotations say destructiveHint: %t", *got.DestructiveHint)
	case got.OpenWorldHint != nil && *got.OpenWorldHint != *want.OpenWorldHint:
		return fmt.Errorf("its annotations say openWorldHint: %t", *got.OpenWorldHint)
	}
	return nil
}
