package mcpeffecttest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testhook"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Check connects to server in-process, over [mcp.NewInMemoryTransports],
// and fails t on any disagreement between the server and r:
//
//   - a tool on the server that r does not classify;
//   - a tool classified in r that is not on the server;
//   - an advertised annotation, among the four hints, that is missing or
//     differs from the one r derives from the tool's effect.
//
// It then proves each boundary between scopes: it connects with a
// read-only scope (see [mcpeffect.WithConnectionScope]) and calls every
// listed tool that is not a read, then with a non-destructive scope and
// calls every destructive tool, with empty arguments. It fails unless each
// call is refused by the middleware of [mcpeffect.Registry] with a
// [mcpeffect.DeniedError] for that tool: that refusal is made before the
// tool's handler would run, so a passing Check also shows that no handler
// ran. Check never calls a tool that a scope allows, since that would run
// its handler. A server without the middleware, or one that enforces
// read-only and nothing else, fails here, saying so: tools added with
// [mcpeffect.AddTool] refuse to run without the middleware, but those added
// with go-sdk alone run their handlers with empty arguments, so give Check
// a server whose storage the test can throw away.
//
// Check lists the tools as the server holds them, even when the middleware
// hides them from callers (HideDenied).
func Check(t testing.TB, server *mcp.Server, r *mcpeffect.Registry) {
	t.Helper()
	ctx := context.Background()

	listed := listTools(t, testhook.WithUnfilteredList(mcpeffect.WithConnectionScope(ctx, mcpeffect.Full)), server)
	if listed == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		tool := listed[name]
		e, ok := r.Effect(name)
		if !ok {
			t.Errorf("tool %q is on the server but has no effect classification: no scope may call it", name)
			continue
		}
		for _, d := range annotationDiffs(tool.Annotations, r.Annotations(name)) {
			t.Errorf("tool %q, classified %s: %s", name, e, d)
		}
	}
	for name, e := range r.All() {
		if _, ok := listed[name]; !ok {
			t.Errorf("tool %q is classified %s but is not on the server", name, e)
		}
	}

	for _, scope := range []mcpeffect.Scope{mcpeffect.ReadOnly, mcpeffect.NonDestructive} {
		checkRefusals(t, server, r, scope, listed)
	}
}

// checkRefusals connects to server with scope and calls every listed tool
// that scope may not call, each of which must be refused by the middleware.
func checkRefusals(t testing.TB, server *mcp.Server, r *mcpeffect.Registry, scope mcpeffect.Scope, listed map[string]*mcp.Tool) {
	t.Helper()
	ctx := context.Background()
	cs := connect(t, mcpeffect.WithConnectionScope(ctx, scope), server)
	if cs == nil {
		return
	}
	defer cs.Close()
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		if r.Allowed(name, scope) {
			continue // calling it would run its handler
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		d, denied := mcpeffect.AsDeniedError(err)
		var rpcErr *jsonrpc.Error
		switch {
		case denied && d.Tool == name:
			// Refused before the handler, as it must be.
		case denied:
			t.Errorf("tool %q with a %s scope: refused, but the refusal names tool %q", name, scope, d.Tool)
		case errors.As(err, &rpcErr) && strings.Contains(rpcErr.Message, testhook.NoMiddleware):
			t.Errorf("tool %q with a %s scope: %s: the call was refused by mcpeffect.AddTool, which runs no handler without it, not by the middleware that checks the caller's scope; "+
				"install it with server.AddReceivingMiddleware(registry.Middleware(opts))", name, scope, testhook.NoMiddleware)
		case err != nil:
			t.Errorf("tool %q with a %s scope: want a refusal by the mcpeffect middleware, got another error, so its handler may have run: %v", name, scope, err)
		case res.IsError && strings.HasPrefix(resultText(res), `validating "arguments"`):
			// go-sdk validates the arguments of a typed handler before
			// calling it, and after the middleware would have refused.
			t.Errorf("tool %q with a %s scope: want a refusal by the mcpeffect middleware, but go-sdk's schema validation refused the empty arguments (%s): "+
				"the handler did not run, but nothing checked the caller's scope first, so the server has no mcpeffect middleware, or one whose registry lets this scope call it",
				name, scope, resultText(res))
		default:
			t.Errorf("tool %q with a %s scope: want a refusal, but the call returned a result (isError %t): its handler ran", name, scope, res.IsError)
		}
	}
}

// connect opens an in-process session to server, whose requests see ctx.
func connect(t testing.TB, ctx context.Context, server *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Errorf("mcpeffecttest: connecting to the server: %v", err)
		return nil
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpeffecttest", Version: "v1"}, nil)
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Errorf("mcpeffecttest: connecting a client: %v", err)
		return nil
	}
	return cs
}

// listTools returns every tool of server by name, following pagination.
func listTools(t testing.TB, ctx context.Context, server *mcp.Server) map[string]*mcp.Tool {
	t.Helper()
	cs := connect(t, ctx, server)
	if cs == nil {
		return nil
	}
	defer cs.Close()
	tools := make(map[string]*mcp.Tool)
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Errorf("mcpeffecttest: listing tools: %v", err)
			return nil
		}
		if _, dup := tools[tool.Name]; dup {
			t.Errorf("tool %q is listed twice", tool.Name)
		}
		tools[tool.Name] = tool
	}
	return tools
}

// annotationDiffs describes each hint of got that is missing or differs
// from want, whose hints are all explicit.
func annotationDiffs(got, want *mcp.ToolAnnotations) []string {
	if got == nil {
		return []string{"the server advertises no annotations; hosts will assume the worst"}
	}
	var diffs []string
	if got.ReadOnlyHint != want.ReadOnlyHint {
		diffs = append(diffs, fmt.Sprintf("readOnlyHint is %t, want %t", got.ReadOnlyHint, want.ReadOnlyHint))
	}
	if got.IdempotentHint != want.IdempotentHint {
		diffs = append(diffs, fmt.Sprintf("idempotentHint is %t, want %t", got.IdempotentHint, want.IdempotentHint))
	}
	for _, h := range []struct {
		name      string
		got, want *bool
	}{
		{"destructiveHint", got.DestructiveHint, want.DestructiveHint},
		{"openWorldHint", got.OpenWorldHint, want.OpenWorldHint},
	} {
		switch {
		case h.got == nil:
			diffs = append(diffs, fmt.Sprintf("%s is missing (hosts assume true), want %t", h.name, *h.want))
		case *h.got != *h.want:
			diffs = append(diffs, fmt.Sprintf("%s is %t, want %t", h.name, *h.got, *h.want))
		}
	}
	return diffs
}
