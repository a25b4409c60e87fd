package telemetry

import (
	"fmt"

	"github.com/mcpeffect/mcpeffect"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	"go.opentelemetry.io/otel/semconv/v1.39.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
)

// Options configure a [Telemetry]. A nil *Options is the zero value,
// which uses OpenTelemetry's global providers and propagator.
type Options struct {
	// TracerProvider makes the tracer of the operations' spans. If nil,
	// otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter of the duration and the counts. If
	// nil, otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator reads the caller's trace context from a request's
	// params._meta ("traceparent", "tracestate", "baggage", as the
	// conventions carry it on every transport), which then parents the
	// operation's span. If nil, otel.GetTextMapPropagator(), which reads
	// nothing until one is set.
	Propagator propagation.TextMapPropagator
}

// A Telemetry turns what an MCP server receives and what mcpeffect
// decides of it into OpenTelemetry spans and metrics: a span and the
// duration (mcp.server.operation.duration) of each operation, opened by
// [Telemetry.Middleware] on go-sdk (package mcpgotel on mcp-go), and on
// them the decision that [Telemetry.OnDecision] is told of, counted by
// tool and outcome. Make one with [New], and use it for every server it
// observes. It is safe for concurrent use.
type Telemetry struct {
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator
	duration  mcpconv.ServerOperationDuration
	decisions metric.Int64Counter
	answers   metric.Int64Counter
	// effects holds the text of every Effect, so that a decision does
	// not build it anew.
	effects [256]string
	points  sets
}

// New returns a Telemetry configured by opts, with its instruments made
// from opts' meter provider. It fails only where the meter provider
// refuses an instrument.
func New(opts *Options) (*Telemetry, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	if o.Propagator == nil {
		o.Propagator = otel.GetTextMapPropagator()
	}
	t := &Telemetry{
		tracer: o.TracerProvider.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:   o.Propagator,
	}
	meter := o.MeterProvider.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	var err error
	if t.duration, err = mcpconv.NewServerOperationDuration(meter, metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		return nil, fmt.Errorf("telemetry: %s: %w", t.duration.Name(), err)
	}
	if t.decisions, err = meter.Int64Counter(MetricDecisions, metric.WithUnit("{decision}"),
		metric.WithDescription("The decisions of mcpeffect on the operations an MCP server received: allow, deny or confirm.")); err != nil {
		return nil, fmt.Errorf("telemetry: %s: %w", MetricDecisions, err)
	}
	if t.answers, err = meter.Int64Counter(MetricConfirmations, metric.WithUnit("{answer}"),
		metric.WithDescription("The answers to the confirmations that mcpeffect asked of a person.")); err != nil {
		return nil, fmt.Errorf("telemetry: %s: %w", MetricConfirmations, err)
	}
	for i := range t.effects {
		t.effects[i] = mcpeffect.Effect(i).String()
	}
	return t, nil
}

// Propagator returns the propagator that reads (and writes) the trace
// context in params._meta: that of the [Options], or OpenTelemetry's
// global one.
func (t *Telemetry) Propagator() propagation.TextMapPropagator { return t.prop }
