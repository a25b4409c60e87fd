package telemetry

import (
	"context"
	"fmt"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Middleware returns receiving middleware for a go-sdk [mcp.Server]
// that traces every request and notification it receives: a span of kind
// server per operation, named as the conventions name it ("tools/call
// delete_task", "resources/read"), with the conventions' attributes, and
// its duration in mcp.server.operation.duration. Its parent is the
// caller's trace context from params._meta, if any (see [Options]
// Propagator).
//
// Install it before mcpeffect's middleware, in the same call, so that
// it wraps it and [Telemetry.OnDecision] finds the span in the context
// it is given (go-sdk makes the first middleware of a call the
// outermost; a later call wraps the earlier ones):
//
//	s.AddReceivingMiddleware(t.Middleware(), r.Middleware(opts))
//
// go-sdk does not tell middleware a request's JSON-RPC id, so the spans
// have no jsonrpc.request.id; network.transport is "tcp" for a request
// that came over HTTP, and left out otherwise (in memory, stdio: go-sdk
// does not tell them apart).
func (t *Telemetry) Middleware() mcp.Middleware {
	return t.wrap
}

func (t *Telemetry) wrap(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		ctx, o := t.Start(ctx, requestOf(method, req))
		defer func() {
			if p := recover(); p != nil {
				// The span ends, then the panic goes on as it would have.
				o.End(fmt.Errorf("panic: %v", p))
				panic(p)
			}
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
				o.ToolFailed()
			}
			o.End(err)
		}()
		return next(ctx, method, req)
	}
}

// requestOf returns what req, of method, tells of itself.
func requestOf(method string, req mcp.Request) Request {
	r := Request{Method: method}
	if req == nil {
		return r
	}
	switch q := req.(type) {
	case *mcp.CallToolRequest:
		if q.Params != nil {
			r.Tool = q.Params.Name
		}
	case *mcp.GetPromptRequest:
		if q.Params != nil {
			r.Prompt = q.Params.Name
		}
	case *mcp.ReadResourceRequest:
		if q.Params != nil {
			r.ResourceURI = q.Params.URI
		}
	case *mcp.SubscribeRequest:
		if q.Params != nil {
			r.ResourceURI = q.Params.URI
		}
	case *mcp.UnsubscribeRequest:
		if q.Params != nil {
			r.ResourceURI = q.Params.URI
		}
	case *mcp.CompleteRequest:
		if q.Params != nil && q.Params.Ref != nil {
			switch q.Params.Ref.Type {
			case "ref/prompt":
				r.Prompt = q.Params.Ref.Name
			case "ref/resource":
				r.ResourceURI = q.Params.Ref.URI
			}
		}
	}
	if p := req.GetParams(); p != nil {
		// A request without its params holds a nil pointer, whose
		// GetMeta would panic.
		if v := reflect.ValueOf(p); v.Kind() != reflect.Pointer || !v.IsNil() {
			r.Meta = p.GetMeta()
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		r.SessionID = ss.ID()
		if ip := ss.InitializeParams(); ip != nil {
			r.ProtocolVersion = ip.ProtocolVersion
		}
	}
	if extra := req.GetExtra(); extra != nil && extra.Header != nil {
		r.Transport = "tcp"
	}
	return r
}
