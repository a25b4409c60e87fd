// Package mcpgotel connects package telemetry to MCP servers built on
// github.com/mark3labs/mcp-go: the span and the duration of each
// operation, opened through mcp-go's own tracing interface
// ([server.WithTracer]) and described by its hooks, so that the
// decisions of mcpeffect's mcp-go adapter (package mcpgo) go on them.
//
// It is a package of its own, so that a server on go-sdk does not build
// mcp-go:
//
//	t, err := telemetry.New(nil)
//	...
//	opts := &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{OnDecision: t.OnDecision}}
//	so := append(mcpgotel.ServerOptions(t), mcpgo.ServerOptions(r, opts)...)
//	s := server.NewMCPServer("tasks", "v1", so...)
//
// What mcp-go does not let it trace: a request that mcp-go answers before
// it opens its span (a request that a hook of OnRequestInitialization
// refuses, such as mcpgo's refusals of a task-augmented tools/call, of
// resources/subscribe and of completion/complete, or one whose protocol
// version mcp-go refuses) has no span and no duration; its decision is
// counted all the same. mcp-go names its spans "mcp.{method}" and opens
// one more around each tool handler; this package names them as the
// conventions do, and opens the one span of each operation that they
// have.
package mcpgotel

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/tracing"
	"github.com/mcpeffect/mcpeffect/telemetry"
	"go.opentelemetry.io/otel/propagation"
)

// The attributes that mcp-go gives its spans, which the tracer reads.
const (
	mcpgoMethod   = "mcp.method"
	mcpgoTool     = "mcp.tool.name"
	mcpgoSession  = "mcp.session.id"
	mcpgoProtocol = "mcp.protocol.version"
)

// ServerOptions returns the options that make an mcp-go server built with
// them traced by t: its tracer ([server.WithTracer]), the propagator that
// reads the caller's trace context from params._meta
// ([server.WithMetaPropagator]), and hooks that tell each operation its
// target, its JSON-RPC id and its outcome. Pass them to
// [server.NewMCPServer] after any [server.WithHooks], whose hooks they
// add to, and before the options of mcpgo.ServerOptions, whose
// OnDecision should be t.OnDecision.
//
// A refusal of mcpeffect is recorded with the code that mcpgo's Listen,
// ServeStdio and Handler send ([mcpeffect.CodeDenied],
// [mcpeffect.CodeNotConfirmed]); any other error with the code mcp-go
// answers it with.
func ServerOptions(t *telemetry.Telemetry) []server.ServerOption {
	tr := &tracer{t: t}
	return []server.ServerOption{
		server.WithTracer(tr),
		server.WithMetaPropagator(metaPropagator{t}),
		tr.installHooks,
	}
}

// tracer is the mcp-go Tracer of a Telemetry.
type tracer struct {
	t *telemetry.Telemetry
}

// Start opens the span of an operation, for the span of kind server that
// mcp-go opens around each request. For the span mcp-go opens around a
// tool's handler it opens none: the conventions have one span an
// operation, which covers the handler, and on which the handler's error
// is the operation's.
func (tr *tracer) Start(ctx context.Context, name string, kind tracing.SpanKind, attrs ...tracing.Attribute) (context.Context, tracing.Span) {
	if kind != tracing.SpanKindServer {
		return tracing.NoopTracer().Start(ctx, name, kind, attrs...)
	}
	r := telemetry.Request{ProtocolVersion: server.RequestProtocolVersion(ctx)}
	for _, a := range attrs {
		switch a.Key {
		case mcpgoMethod:
			r.Method = a.Value
		case mcpgoSession:
			r.SessionID = a.Value
		case mcpgoProtocol:
			if r.ProtocolVersion == "" {
				r.ProtocolVersion = a.Value
			}
		}
	}
	// The caller's trace context, which telemetry's Start reads.
	r.Meta, _ = ctx.Value(metaKey{}).(map[string]any)
	ctx, o := tr.t.Start(ctx, r)
	s := &span{op: o}
	return tracing.ContextWithSpan(ctx, s), s
}

// span is the mcp-go Span of an operation.
type span struct {
	op *telemetry.Operation

	mu        sync.Mutex
	err       error  // the error the request was answered with, from the hook
	succeeded bool   // the request was answered with a result, as the hook saw
	status    string // the message mcp-go ended it with
}

// SetAttributes takes the tool's name that mcp-go's tracing middleware
// sets on a tools/call.
func (s *span) SetAttributes(attrs ...tracing.Attribute) {
	for _, a := range attrs {
		if a.Key == mcpgoTool {
			s.op.Describe(telemetry.Request{Tool: a.Value})
		}
	}
}

// RecordError keeps err as the error the operation ends with, unless a
// hook saw the one it was answered with. (mcp-go calls it on the
// handler's span only, and the error reaches the hook.)
func (s *span) RecordError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = wireError(err)
	}
}

// SetStatus keeps the message of an error, for End.
func (s *span) SetStatus(code tracing.StatusCode, description string) {
	if code != tracing.StatusError {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = description
}

// failed records err, the error the request was answered with.
func (s *span) failed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// succeed records that the request was answered with a result: a tool's
// result that is an error is not a JSON-RPC error, whatever status
// mcp-go gives the span.
func (s *span) succeed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.succeeded = true
}

// End ends the operation with the error it was answered with, whose code
// the hook saw, or else, for an answer the hooks did not see, with the
// message mcp-go ended the span with.
func (s *span) End() {
	s.mu.Lock()
	err, status := s.err, s.status
	if err == nil && !s.succeeded && status != "" {
		err = errors.New(status)
	}
	s.mu.Unlock()
	s.op.End(err)
}

// installHooks adds tr's hooks to those of s.
func (tr *tracer) installHooks(s *server.MCPServer) {
	h := s.GetHooks()
	if h == nil {
		h = &server.Hooks{}
		server.WithHooks(h)(s)
	}
	h.AddBeforeAny(func(ctx context.Context, id any, _ mcp.MCPMethod, message any) {
		r := targetOf(message)
		r.RequestID = idText(id)
		telemetry.OperationFromContext(ctx).Describe(r)
	})
	h.AddOnError(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any, err error) {
		if s, ok := tracing.SpanFromContext(ctx).(*span); ok {
			s.failed(wireError(err))
		}
	})
	h.AddOnSuccess(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any, result any) {
		if s, ok := tracing.SpanFromContext(ctx).(*span); ok {
			s.succeed()
		}
		if res, ok := result.(*mcp.CallToolResult); ok && res != nil && res.IsError {
			telemetry.OperationFromContext(ctx).ToolFailed()
		}
	})
}

// targetOf returns what message, a request as mcp-go decoded it for its
// hooks, names.
func targetOf(message any) telemetry.Request {
	var r telemetry.Request
	switch m := message.(type) {
	case *mcp.CallToolRequest:
		r.Tool = m.Params.Name
	case *mcp.GetPromptRequest:
		r.Prompt = m.Params.Name
	case *mcp.ReadResourceRequest:
		r.ResourceURI = m.Params.URI
	case *mcp.SubscribeRequest:
		r.ResourceURI = m.Params.URI
	case *mcp.UnsubscribeRequest:
		r.ResourceURI = m.Params.URI
	case *mcp.CompleteRequest:
		switch ref := m.Params.Ref.(type) {
		case mcp.PromptReference:
			r.Prompt = ref.Name
		case mcp.ResourceReference:
			r.ResourceURI = ref.URI
		}
	}
	return r
}

// idText returns the JSON-RPC id that mcp-go decoded, as text; "" for
// none (a notification) or null, which the conventions leave out.
func idText(id any) string {
	switch v := id.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case mcp.RequestId:
		if v.Value() != nil {
			return v.String()
		}
	}
	return ""
}

// codedError is an error with the JSON-RPC code mcp-go answers it with,
// as telemetry.Operation.End reads a code.
type codedError struct {
	code    int64
	message string
}

func (e *codedError) Error() string { return e.message }

func (e *codedError) JSONRPCError() (int64, string, json.RawMessage) { return e.code, e.message, nil }

// wireError returns err, an error that mcp-go answers a request with,
// such that its code is the one the client gets: that of an error of
// mcpeffect in its chain, as mcpgo's transports send it, else that of
// mcp-go's own error.
func wireError(err error) error {
	var coded interface {
		JSONRPCError() (int64, string, json.RawMessage)
	}
	if errors.As(err, &coded) {
		return err
	}
	var rpc interface{ ToJSONRPCError() mcp.JSONRPCError }
	if errors.As(err, &rpc) {
		e := rpc.ToJSONRPCError().Error
		return &codedError{code: int64(e.Code), message: e.Message}
	}
	return err
}

// metaPropagator reads the caller's trace context from params._meta for
// mcp-go, which calls it before it opens a request's span, and writes it
// there for a request the server sends.
type metaPropagator struct {
	t *telemetry.Telemetry
}

type metaKey struct{}

// ExtractMeta keeps meta on ctx for the tracer's Start, which hands it
// to telemetry.Telemetry.Start: that reads the trace context from it as
// on go-sdk, and links the one ctx has (an HTTP request's).
func (p metaPropagator) ExtractMeta(ctx context.Context, meta *mcp.Meta) context.Context {
	if meta == nil || len(meta.AdditionalFields) == 0 {
		return ctx
	}
	return context.WithValue(ctx, metaKey{}, meta.AdditionalFields)
}

// InjectMeta writes the trace context of ctx into meta, as the
// conventions carry it: unprefixed keys in params._meta.
func (p metaPropagator) InjectMeta(ctx context.Context, meta *mcp.Meta) *mcp.Meta {
	carrier := propagation.MapCarrier{}
	p.t.Propagator().Inject(ctx, carrier)
	if len(carrier) == 0 {
		return meta
	}
	if meta == nil {
		meta = &mcp.Meta{}
	}
	if meta.AdditionalFields == nil {
		meta.AdditionalFields = make(map[string]any, len(carrier))
	}
	for k, v := range carrier {
		meta.AdditionalFields[k] = v
	}
	return meta
}
