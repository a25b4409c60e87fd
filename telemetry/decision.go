package telemetry

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// OnDecision is told of d, a decision of mcpeffect: set it as the
// OnDecision of [mcpeffect.MiddlewareOptions] (on mcp-go, of the
// Options' embedded MiddlewareOptions).
//
// It counts d: a decision in mcpeffect.decisions, by mcp.method.name,
// gen_ai.tool.name (a tool that the registry classifies; a name it does
// not know is left out, so that made-up names add no series),
// mcpeffect.decision and mcpeffect.scope; an answer to a confirmation
// in mcpeffect.confirmations, by mcpeffect.confirm.answer instead. And
// when ctx is that of the operation's span (see [Telemetry.Middleware]),
// it puts d on the span: mcpeffect.decision, mcpeffect.scope,
// mcpeffect.effect of a tools/call, mcpeffect.scope.required of a
// refusal that a wider scope would lift, and mcpeffect.confirm.answer
// of an answer; and for a call that needs confirmation, an event
// mcpeffect.decision at each of its decisions (that it needs one, then
// the answer), which times the person's answer. Each round of a
// confirmation that the 2026-07-28 protocol makes in two calls is
// decided, and so counted, in each call.
// A decision made before the span opens (the HTTP challenge's, an mcp-go
// hook's) is counted only.
func (t *Telemetry) OnDecision(ctx context.Context, d mcpeffect.Decision) {
	op := &d.Operation
	tool := ""
	if op.Method == methodCallTool && (d.Denied == nil || d.Denied.Classified) {
		tool = op.Name
	}
	verdict := verdictOf(d)
	scope := AttrScope.String(d.Scope.String())
	k := setKey{instrument: instDecisions, method: op.Method, target: tool, outcome: verdict, scope: d.Scope.String()}
	counter := t.decisions
	if d.Answer != "" {
		k.instrument, k.outcome, counter = instAnswers, d.Answer, t.answers
	}
	p := t.points.get(k, func() []attribute.KeyValue {
		attrs := []attribute.KeyValue{keyMethod.String(op.Method), scope}
		if tool != "" {
			attrs = append(attrs, keyTool.String(tool))
		}
		if d.Answer != "" {
			return append(attrs, AttrAnswer.String(d.Answer))
		}
		return append(attrs, AttrDecision.String(verdict))
	})
	counter.Add(ctx, 1, p.add...)

	o := OperationFromContext(ctx)
	if o == nil {
		return
	}
	recording := o.span.IsRecording()
	var span []attribute.KeyValue
	if recording {
		span = make([]attribute.KeyValue, 0, 5)
		span = append(span, AttrDecision.String(verdict), scope)
		if op.Method == methodCallTool {
			span = append(span, AttrEffect.String(t.effects[d.Effect]))
		}
		if d.Denied != nil && d.Denied.Classified {
			// A tool no one classified needs more than any scope.
			span = append(span, AttrRequired.String(d.Denied.Required.String()))
		}
		if d.Answer != "" {
			span = append(span, AttrAnswer.String(d.Answer))
		}
	}
	if !o.decided(op.Method, targetOf(op), tool != "", span) || !recording {
		return
	}
	switch {
	case d.Answer != "":
		o.span.AddEvent(EventDecision, trace.WithAttributes(AttrDecision.String(verdict), AttrAnswer.String(d.Answer)))
	case d.Confirm:
		o.span.AddEvent(EventDecision, trace.WithAttributes(AttrDecision.String(verdict)))
	}
}

// verdictOf returns the mcpeffect.decision of d.
func verdictOf(d mcpeffect.Decision) string {
	switch {
	case d.Denied != nil:
		return DecisionDeny
	case d.Confirm:
		return DecisionConfirm
	}
	return DecisionAllow
}

// targetOf returns the tool or prompt that op names.
func targetOf(op *mcpeffect.Operation) string {
	switch op.Method {
	case methodCallTool, methodGetPrompt:
		return op.Name
	}
	return ""
}

// decided puts attrs, a decision of method on target (a tool or prompt,
// or ""), on o's span, and reports whether the decision is of o's own
// operation: not one that a handler made of another call with the same
// context. A decision that shows the registry classifies the tool
// (classified) makes the tool name the span.
func (o *Operation) decided(method, target string, classified bool, attrs []attribute.KeyValue) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if method != o.req.Method {
		return false
	}
	switch have := o.req.target(); {
	case target == "" || have == target:
	case have != "":
		return false
	case method == methodCallTool:
		o.req.Tool = target
	case method == methodGetPrompt:
		o.req.Prompt = target
	}
	if classified {
		o.name()
	}
	if len(attrs) > 0 {
		o.span.SetAttributes(attrs...)
	}
	return true
}
