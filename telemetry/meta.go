package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// parent returns the context that parents the span of a request whose
// params._meta is meta, received with ctx: ctx with the trace context
// that meta carries, if any, as the conventions ask; and the span
// context of ctx to link to, when meta's replaced it (the transport's
// trace, an HTTP request's, is not the caller's, but is worth a link).
func (t *Telemetry) parent(ctx context.Context, meta map[string]any) (context.Context, trace.SpanContext) {
	carrier := metaCarrier(meta, t.prop)
	if carrier == nil {
		return ctx, trace.SpanContext{}
	}
	parent := t.prop.Extract(ctx, carrier)
	ambient, extracted := trace.SpanContextFromContext(ctx), trace.SpanContextFromContext(parent)
	if !extracted.IsValid() || !ambient.IsValid() || extracted.Equal(ambient) {
		return parent, trace.SpanContext{}
	}
	return parent, ambient
}

// metaCarrier returns the fields of meta that prop reads whose values
// are strings, or nil if there are none:
// the caller's trace context, as the conventions write it in _meta
// (unprefixed keys, as SEP-414 has them). A value of another type is
// not a trace context, and is left out.
func metaCarrier(meta map[string]any, prop propagation.TextMapPropagator) propagation.MapCarrier {
	if len(meta) == 0 {
		return nil
	}
	fields := prop.Fields()
	var carrier propagation.MapCarrier
	for _, f := range fields {
		if v, ok := meta[f].(string); ok {
			if carrier == nil {
				carrier = make(propagation.MapCarrier, len(fields))
			}
			carrier[f] = v
		}
	}
	return carrier
}
