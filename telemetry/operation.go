package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// A Request is what a server's SDK tells of a request (or a
// notification) it received, for [Telemetry.Start]: what the
// conventions put on the operation's span. Empty fields are unknown.
type Request struct {
	// Method is the MCP method ("tools/call").
	Method string
	// Tool is the tool a tools/call calls; Prompt the prompt a
	// prompts/get gets, or whose arguments a completion/complete
	// completes; ResourceURI the resource read, subscribed to or
	// completed.
	Tool, Prompt, ResourceURI string
	// RequestID is the JSON-RPC id of the request, as text; empty for a
	// notification, or where the SDK does not tell it.
	RequestID string
	// SessionID is the MCP session's id, where there is one.
	SessionID string
	// ProtocolVersion is the MCP protocol version of the request.
	ProtocolVersion string
	// Transport is the network.transport of the conventions: "tcp" for
	// HTTP, "pipe" for stdio.
	Transport string
	// Meta is the request's params._meta, where the caller's trace
	// context travels (see [Options] Propagator). Start only reads it.
	Meta map[string]any
}

// target returns the low-cardinality target of r that names its span
// once known: its tool or prompt. A resource's URI is not one (the
// conventions leave it out of span names by default).
func (r *Request) target() string {
	switch r.Method {
	case methodCallTool:
		return r.Tool
	case methodGetPrompt:
		return r.Prompt
	}
	return ""
}

// An Operation is the trace of one request that a server received, from
// [Telemetry.Start] to [Operation.End]: its span, and the time it took.
// The decisions that [Telemetry.OnDecision] is told of with its context
// go on its span. It is safe for concurrent use; a nil *Operation does
// nothing.
type Operation struct {
	t     *Telemetry
	span  trace.Span
	start time.Time

	mu  sync.Mutex
	req Request // without Meta
	// known reports that the target (tool or prompt) names the span and
	// goes on the metrics: a tool that the registry classifies, as a
	// decision shows, or a target that was served without error. A name
	// that no server knows comes from the caller alone, and would give
	// the metrics a series per name an attacker makes up.
	known     bool
	toolError bool
	ended     bool
}

type operationKey struct{}

// OperationFromContext returns the operation whose context ctx is (or
// derives from), or nil.
func OperationFromContext(ctx context.Context) *Operation {
	o, _ := ctx.Value(operationKey{}).(*Operation)
	return o
}

// Start opens the span of r, a request that the server received, and
// returns the operation and its context, which carries the span: hand
// that context on to the handlers, so that [Telemetry.OnDecision] finds
// the span there. The span's parent is the trace context of r.Meta if
// it carries one, linked to that of ctx; else that of ctx. End the
// operation when the answer is sent. Package telemetry's middleware
// calls it for go-sdk and package mcpgotel for mcp-go; an adapter for
// another SDK calls it as they do.
func (t *Telemetry) Start(ctx context.Context, r Request) (context.Context, *Operation) {
	o := &Operation{t: t, start: time.Now(), req: r}
	o.req.Meta = nil
	parent, link := t.parent(ctx, r.Meta)
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(o.start),
		trace.WithAttributes(o.req.spanAttributes(nil)...),
	}
	if link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: link}))
	}
	ctx, o.span = t.tracer.Start(parent, r.Method, opts...)
	return context.WithValue(ctx, operationKey{}, o), o
}

// spanAttributes appends to attrs the attributes of the conventions that
// r gives a span.
func (r *Request) spanAttributes(attrs []attribute.KeyValue) []attribute.KeyValue {
	if r.Method != "" {
		attrs = append(attrs, keyMethod.String(r.Method))
	}
	if r.Tool != "" {
		attrs = append(attrs, keyTool.String(r.Tool))
	}
	if r.Method == methodCallTool {
		attrs = append(attrs, executeTool)
	}
	if r.Prompt != "" {
		attrs = append(attrs, keyPrompt.String(r.Prompt))
	}
	if r.ResourceURI != "" {
		attrs = append(attrs, keyResource.String(r.ResourceURI))
	}
	if r.RequestID != "" {
		attrs = append(attrs, keyRequestID.String(r.RequestID))
	}
	if r.SessionID != "" {
		attrs = append(attrs, keySession.String(r.SessionID))
	}
	if r.ProtocolVersion != "" {
		attrs = append(attrs, keyProtocolVersion.String(r.ProtocolVersion))
	}
	if r.Transport != "" {
		attrs = append(attrs, keyTransport.String(r.Transport))
	}
	return attrs
}

// Describe adds to o what r tells that [Telemetry.Start] was not told,
// for an SDK that tells a request's target or id only after its span is
// open (mcp-go): each field of r fills o's if o's is empty. Method and
// Meta are ignored.
func (o *Operation) Describe(r Request) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var add Request
	changed := false
	for _, f := range [...]struct {
		have, to *string
		v        string
	}{
		{&o.req.Tool, &add.Tool, r.Tool},
		{&o.req.Prompt, &add.Prompt, r.Prompt},
		{&o.req.ResourceURI, &add.ResourceURI, r.ResourceURI},
		{&o.req.RequestID, &add.RequestID, r.RequestID},
		{&o.req.SessionID, &add.SessionID, r.SessionID},
		{&o.req.ProtocolVersion, &add.ProtocolVersion, r.ProtocolVersion},
		{&o.req.Transport, &add.Transport, r.Transport},
	} {
		if *f.have == "" && f.v != "" {
			*f.have, *f.to = f.v, f.v
			changed = true
		}
	}
	if changed {
		o.span.SetAttributes(add.spanAttributes(nil)...)
	}
}

// name makes o's target name its span and its metrics, once it is known
// to the server. o.mu is held.
func (o *Operation) name() {
	if o.known {
		return
	}
	if target := o.req.target(); target != "" {
		o.known = true
		o.span.SetName(o.req.Method + " " + target)
	}
}

// ToolFailed records that o, a tools/call, was answered with a result
// that is an error (isError): its error.type is then "tool_error".
func (o *Operation) ToolFailed() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.toolError = true
}

// End ends o: its answer was sent, the error err (nil for a result). It
// ends the span and records the duration. The error.type of an error is
// its JSON-RPC code: that of the first error in err's chain that is a
// go-sdk *jsonrpc.Error or has a method
//
//	JSONRPCError() (code int64, message string, data json.RawMessage)
//
// as mcpeffect's DeniedError and NotConfirmedError have; else "_OTHER".
// Only the first End counts.
func (o *Operation) End(err error) {
	if o == nil {
		return
	}
	elapsed := time.Since(o.start)
	o.mu.Lock()
	if o.ended {
		o.mu.Unlock()
		return
	}
	o.ended = true
	var errType, code, message string
	switch {
	case err != nil:
		if c, msg, ok := codeOf(err); ok {
			code = strconv.FormatInt(c, 10)
			errType, message = code, msg
		} else {
			errType, message = errorOther, err.Error()
		}
	case o.toolError:
		errType = ErrorTool
		o.name() // it ran
	default:
		o.name()
	}
	req, known := o.req, o.known
	o.mu.Unlock()

	if errType != "" {
		attrs := []attribute.KeyValue{keyErrorType.String(errType)}
		if code != "" {
			attrs = append(attrs, keyStatusCode.String(code))
		}
		o.span.SetAttributes(attrs...)
		o.span.SetStatus(codes.Error, message)
	}
	o.span.End()

	k := setKey{instrument: instDuration, method: req.Method, errType: errType, code: code,
		protocolVersion: req.ProtocolVersion, transport: req.Transport}
	if known {
		k.target = req.target()
	}
	p := o.t.points.get(k, func() []attribute.KeyValue {
		attrs := []attribute.KeyValue{keyMethod.String(req.Method)}
		switch {
		case k.target != "" && req.Method == methodCallTool:
			attrs = append(attrs, keyTool.String(k.target))
		case k.target != "" && req.Method == methodGetPrompt:
			attrs = append(attrs, keyPrompt.String(k.target))
		}
		if req.Method == methodCallTool {
			attrs = append(attrs, executeTool)
		}
		if errType != "" {
			attrs = append(attrs, keyErrorType.String(errType))
		}
		if code != "" {
			attrs = append(attrs, keyStatusCode.String(code))
		}
		if req.ProtocolVersion != "" {
			attrs = append(attrs, keyProtocolVersion.String(req.ProtocolVersion))
		}
		if req.Transport != "" {
			attrs = append(attrs, keyTransport.String(req.Transport))
		}
		return attrs
	})
	// The span's context, so that an exemplar can point at the trace.
	ctx := trace.ContextWithSpan(context.Background(), o.span)
	o.t.duration.RecordSet(ctx, elapsed.Seconds(), p.set)
}

// codeOf returns the JSON-RPC code and message of err, if it has one.
func codeOf(err error) (int64, string, bool) {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return wire.Code, wire.Message, true
	}
	var coded interface {
		JSONRPCError() (int64, string, json.RawMessage)
	}
	if errors.As(err, &coded) {
		c, msg, _ := coded.JSONRPCError()
		return c, msg, true
	}
	return 0, "", false
}
