package mcpeffect

import (
	"context"
	"fmt"

	"github.com/mcpeffect/mcpeffect/internal/testhook"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddTool classifies t.Name in r with effect e, sets the tool's annotations
// from that one classification, and adds the tool to s with [mcp.AddTool].
// A title the caller set in t.Annotations is kept; t itself is not changed.
//
// The handler runs only when [Registry.Middleware] has let the call
// through: on a server without the middleware, every call to the tool is
// refused with a JSON-RPC internal error that says how to install it, so
// that classifying tools without enforcing them fails at the first call
// rather than in production. (go-sdk validates the arguments of the
// typed handler first: a call with arguments its schema refuses gets that
// error instead.)
//
// Like [mcp.AddTool] on a bad schema, AddTool panics when the classification
// is refused (see [Registry.Add]; a name already classified with the same
// effect is accepted), and when t arrives with hints that disagree with e:
// a hint written twice is the drift this package exists to prevent, so the
// hints are best left out. go-sdk cannot tell a readOnlyHint or
// idempotentHint of false from one left out, so only true is checked there.
// It panics on a nil handler too.
func AddTool[In, Out any](s *mcp.Server, r *Registry, t *mcp.Tool, e Effect, h mcp.ToolHandlerFor[In, Out]) {
	if h == nil {
		panic("mcpeffect: AddTool: nil handler")
	}
	tt := r.classify(t, e)
	mcp.AddTool(s, tt, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		if err := enforced(ctx, tt.Name); err != nil {
			var zero Out
			return nil, zero, err
		}
		return h(ctx, req, in)
	})
}

// AddToolHandler is [AddTool] for a low-level [mcp.ToolHandler], added
// with [mcp.Server.AddTool]: the handler unmarshals and validates its own
// arguments.
func AddToolHandler(s *mcp.Server, r *Registry, t *mcp.Tool, e Effect, h mcp.ToolHandler) {
	if h == nil {
		panic("mcpeffect: AddToolHandler: nil handler")
	}
	tt := r.classify(t, e)
	s.AddTool(tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := enforced(ctx, tt.Name); err != nil {
			return nil, err
		}
		return h(ctx, req)
	})
}

// enforced returns nil if ctx is that of a call that [Registry.Middleware]
// let through, and otherwise the error that refuses to run the tool: a
// server that classifies its tools but never installed the middleware
// would advertise hints and enforce nothing, so it fails closed, at its
// first call, with a message that says how to install it.
func enforced(ctx context.Context, tool string) error {
	if _, ok := callerScope(ctx); ok {
		return nil
	}
	return &jsonrpc.Error{
		Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("mcpeffect: tool %q was not run: %s, so nothing checked the caller's scope; "+
			"install it with server.AddReceivingMiddleware(registry.Middleware(opts))", tool, testhook.NoMiddleware),
	}
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
