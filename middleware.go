package mcpeffect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpeffect/mcpeffect/internal/testhook"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MiddlewareOptions configure [Registry.Middleware]. A nil
// *MiddlewareOptions is the zero value.
type MiddlewareOptions struct {
	// Scope returns the scope of the caller of a request. If nil, the scope
	// comes from the scope strings of the request's bearer token
	// ([mcp.RequestExtra] TokenInfo), mapped by ScopeNames; a request that
	// carries no token (stdio, in-memory) has only the scope of its
	// connection, set with [WithScope], and without one it may call
	// nothing.
	//
	// Whatever Scope returns, a scope set with WithScope on the connection
	// caps it.
	Scope func(context.Context, mcp.Request) Scope

	// HideDenied makes tools/list show only the tools the caller may call.
	// The list is then the caller's own, and is marked cacheable privately.
	// Left false, every tool is listed, so that a host can see what a wider
	// scope would allow and ask for it.
	HideDenied bool

	// ScopeNames maps token scope strings to a Scope, and names the scope
	// string a refused call needs. The zero value is the default names.
	ScopeNames ScopeNames

	// OnDenied, if non-nil, is called with each refused tools/call, before
	// the refusal is sent: for logging or metrics. It must not block.
	OnDenied func(context.Context, *Denial)
}

// CodeDenied is the JSON-RPC error code of a tools/call refused by
// [Registry.Middleware]. The error's data is a [Denial] in JSON. It is in
// the range JSON-RPC leaves to servers, clear of the codes that go-sdk and
// the MCP specification use.
const CodeDenied = -32050

// A Denial describes a refused tools/call. It is the data of the JSON-RPC
// error the caller receives; [AsDenial] reads it back on the client.
type Denial struct {
	// Tool is the tool that was called.
	Tool string `json:"tool"`
	// Classified is false for a tool the registry does not know, which
	// no scope may call.
	Classified bool `json:"classified"`
	// Required is the least scope that may call the tool, and
	// RequiredScope the scope string that grants it. Both are empty for a
	// tool that is not classified.
	Required      Scope  `json:"required"`
	RequiredScope string `json:"requiredScope,omitempty"`
	// Granted is the scope the caller has.
	Granted Scope `json:"granted"`
}

// Error says in plain words which tool was refused, which scope it needs
// and which scope the caller has.
func (d *Denial) Error() string {
	if !d.Classified {
		return fmt.Sprintf("mcpeffect: tool %q is refused: it has no effect classification, so no scope may call it", d.Tool)
	}
	return fmt.Sprintf("mcpeffect: tool %q is refused: it needs the %s scope (%q), and the caller has %s",
		d.Tool, d.Required, d.RequiredScope, describeGranted(d.Granted))
}

func describeGranted(s Scope) string {
	if s == 0 {
		return "no scope"
	}
	return "only " + s.String()
}

// AsDenial reports whether err, as returned by a client's CallTool, is a
// refusal by [Registry.Middleware], and if so returns its [Denial].
func AsDenial(err error) (*Denial, bool) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeDenied || len(je.Data) == 0 {
		return nil, false
	}
	var d Denial
	if json.Unmarshal(je.Data, &d) != nil || d.Tool == "" {
		return nil, false
	}
	return &d, true
}

// Middleware returns receiving middleware for an [mcp.Server] that enforces
// r: install it with [mcp.Server.AddReceivingMiddleware]. It is the
// authoritative check, and the one that cannot be bypassed, since it runs
// after go-sdk has parsed the request, whatever the transport.
//
// On tools/call it refuses, before the tool's handler runs, a call that the
// caller's scope does not allow (see [MiddlewareOptions.Scope]) with a
// JSON-RPC error of code [CodeDenied] whose message names the tool, the
// scope it needs and the scope the caller has. A tool that r does not
// classify is refused for every scope. With HideDenied, it filters
// tools/list. Every other method passes through untouched.
//
// Middleware panics if opts.ScopeNames is not valid (see [ScopeNames.Check]).
func (r *Registry) Middleware(opts *MiddlewareOptions) mcp.Middleware {
	var o MiddlewareOptions
	if opts != nil {
		o = *opts
	}
	if err := o.ScopeNames.Check(); err != nil {
		panic(err)
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/call":
				call, ok := req.(*mcp.CallToolRequest)
				if !ok || call.Params == nil {
					break
				}
				name := call.Params.Name
				granted := o.scope(ctx, req)
				if r.Allowed(name, granted) {
					return next(context.WithValue(ctx, callerScopeKey{}, granted), method, req)
				}
				d := r.denial(name, granted, o.ScopeNames)
				if o.OnDenied != nil {
					o.OnDenied(ctx, d)
				}
				return nil, d.rpcError()
			case "tools/list":
				if !o.HideDenied || testhook.UnfilteredList(ctx) {
					break
				}
				res, err := next(ctx, method, req)
				if err != nil {
					return res, err
				}
				list, ok := res.(*mcp.ListToolsResult)
				if !ok {
					return res, err
				}
				return r.filter(list, o.scope(ctx, req)), nil
			}
			return next(ctx, method, req)
		}
	}
}

// scope returns the scope of the caller of req.
func (o *MiddlewareOptions) scope(ctx context.Context, req mcp.Request) Scope {
	var s Scope
	have := false
	if o.Scope != nil {
		s, have = o.Scope(ctx, req), true
	} else if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		s, have = o.ScopeNames.Scope(extra.TokenInfo.Scopes), true
	}
	if c, ok := ScopeFrom(ctx); ok && (!have || c < s) {
		s = c
	}
	return s
}

func (r *Registry) denial(name string, granted Scope, names ScopeNames) *Denial {
	d := &Denial{Tool: name, Granted: granted}
	if need, ok := r.Required(name); ok {
		d.Classified = true
		d.Required = need
		d.RequiredScope = names.Name(need)
	}
	return d
}

func (d *Denial) rpcError() *jsonrpc.Error {
	data, err := json.Marshal(d)
	if err != nil {
		// A Denial holds strings and valid scopes only.
		panic(err)
	}
	return &jsonrpc.Error{Code: CodeDenied, Message: d.Error(), Data: data}
}

// filter returns a copy of list holding only the tools that s may call.
// The tools themselves are shared, not copied: they belong to the server
// and no one changes them.
func (r *Registry) filter(list *mcp.ListToolsResult, s Scope) *mcp.ListToolsResult {
	out := *list
	out.Tools = make([]*mcp.Tool, 0, len(list.Tools))
	for _, t := range list.Tools {
		if t != nil && r.Allowed(t.Name, s) {
			out.Tools = append(out.Tools, t)
		}
	}
	out.CacheScope = "private"
	return &out
}

type scopeKey struct{}

// WithScope returns a copy of ctx that carries scope s. Given to
// [mcp.Server.Run] or [mcp.Server.Connect], it sets the scope of every
// request of that connection, as over stdio where there is no token:
//
//	server.Run(mcpeffect.WithScope(ctx, mcpeffect.ReadOnly), &mcp.StdioTransport{})
//
// A connection scope caps any other: a request whose token has a wider
// scope gets only s. [Registry.Middleware] reads it.
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns the scope set on ctx with [WithScope], and whether
// there is one.
func ScopeFrom(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(scopeKey{}).(Scope)
	return s, ok
}

type callerScopeKey struct{}

// CallerScopeFromContext returns the scope of the caller of the tools/call
// request whose handler received ctx: the scope of its token capped by the
// connection's (see [WithScope]), exactly as [Registry.Middleware] computed
// it to let the call through. A handler uses it to bound what the caller
// may create or grant, such as a token of its own, without computing the
// scope a second time. Outside a call that the middleware let through, it
// returns the zero Scope, which allows nothing.
func CallerScopeFromContext(ctx context.Context) Scope {
	s, _ := ctx.Value(callerScopeKey{}).(Scope)
	return s
}
