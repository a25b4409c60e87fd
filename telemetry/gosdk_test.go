package telemetry_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The protocols of go-sdk's client: with the earlier a server asks for
// confirmation with an elicitation request inside the call; with the
// later the call's result asks, and the client calls again with the
// answer.
const (
	legacyProtocol = "2025-11-25"
	modernProtocol = "2026-07-28"
)

// TestGoSDK: through go-sdk's client and server, each call's span says
// what mcpeffect decided of it (allowed, refused and why, a confirmation
// asked and answered), named and with the attributes the conventions
// give it; the counters count each decision by tool and outcome, and
// the histogram times each call.
func TestGoSDK(t *testing.T) {
	o := observe(t)
	p := &person{answer: "accept"}
	s, _, ran := goServer(t, o, mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{}})
	reader := connectGo(t, s, mcpeffect.ReadOnly, nil, "")
	full := connectGo(t, s, mcpeffect.Full, &mcp.ClientOptions{ElicitationHandler: p.handler}, legacyProtocol)
	modern := connectGo(t, s, mcpeffect.Full, &mcp.ClientOptions{ElicitationHandler: p.handler}, modernProtocol)
	o.take("tools/call")

	const destructive = "effect=write|destructive|idempotent"
	for _, step := range []struct {
		name   string
		cs     *mcp.ClientSession
		tool   string
		answer string // the person's
		fails  bool
		want   []string
	}{
		{"allowed", reader, "get_task", "", false, []string{
			"tools/call get_task gen_ai.tool.name=get_task decision=allow scope=read-only effect=read",
		}},
		{"refused", reader, "delete_task", "", true, []string{
			"tools/call delete_task gen_ai.tool.name=delete_task decision=deny scope=read-only " + destructive +
				" scope.required=full error.type=-32050 rpc.response.status_code=-32050 status=error",
		}},
		// A tool no one classified: its name stays off the span's name.
		{"unclassified", reader, "no_such_tool", "", true, []string{
			"tools/call gen_ai.tool.name=no_such_tool decision=deny scope=read-only effect=none" +
				" error.type=-32050 rpc.response.status_code=-32050 status=error",
		}},
		{"tool error", reader, "fail_task", "", false, []string{
			"tools/call fail_task gen_ai.tool.name=fail_task decision=allow scope=read-only effect=read error.type=tool_error status=error",
		}},
		{"confirmed", full, "delete_task", "accept", false, []string{
			"tools/call delete_task gen_ai.tool.name=delete_task decision=confirm scope=full " + destructive +
				" confirm.answer=accept event=decision(confirm) event=decision(confirm,accept)",
		}},
		{"declined", full, "delete_task", "decline", true, []string{
			"tools/call delete_task gen_ai.tool.name=delete_task decision=confirm scope=full " + destructive +
				" confirm.answer=decline error.type=-32051 rpc.response.status_code=-32051 status=error event=decision(confirm) event=decision(confirm,decline)",
		}},
		// On the later protocol, two calls: the first asks, the second
		// brings the answer.
		{"confirmed in two calls", modern, "delete_task", "accept", false, []string{
			"tools/call delete_task gen_ai.tool.name=delete_task decision=confirm scope=full " + destructive + " event=decision(confirm)",
			"tools/call delete_task gen_ai.tool.name=delete_task decision=confirm scope=full " + destructive +
				" confirm.answer=accept event=decision(confirm) event=decision(confirm,accept)",
		}},
	} {
		t.Run(step.name, func(t *testing.T) {
			p.set(step.answer)
			_, err := call(step.cs, step.tool)
			if (err != nil) != step.fails {
				t.Fatalf("call of %s: %v", step.tool, err)
			}
			if got := o.take("tools/call"); !slices.Equal(got, step.want) {
				t.Errorf("spans\n\t%q\nwant\n\t%q", got, step.want)
			}
		})
	}
	if ran.count("delete_task") != 2 {
		t.Errorf("delete_task ran %d times, want twice (on each accept)", ran.count("delete_task"))
	}

	wantCounts(t, o, "mcpeffect.decisions", map[string]int64{
		"gen_ai.tool.name=get_task,mcp.method.name=tools/call,mcpeffect.decision=allow,mcpeffect.scope=read-only":   1,
		"gen_ai.tool.name=fail_task,mcp.method.name=tools/call,mcpeffect.decision=allow,mcpeffect.scope=read-only":  1,
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.decision=deny,mcpeffect.scope=read-only": 1,
		"mcp.method.name=tools/call,mcpeffect.decision=deny,mcpeffect.scope=read-only":                              1,
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.decision=confirm,mcpeffect.scope=full":   4,
	})
	wantCounts(t, o, "mcpeffect.confirmations", map[string]int64{
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.confirm.answer=accept,mcpeffect.scope=full":  2,
		"gen_ai.tool.name=delete_task,mcp.method.name=tools/call,mcpeffect.confirm.answer=decline,mcpeffect.scope=full": 1,
	})
	wantDurations(t, o, "tools/call", map[string]uint64{
		"gen_ai.operation.name=execute_tool,gen_ai.tool.name=get_task,mcp.method.name=tools/call":                                                      1,
		"error.type=tool_error,gen_ai.operation.name=execute_tool,gen_ai.tool.name=fail_task,mcp.method.name=tools/call":                               1,
		"error.type=-32050,gen_ai.operation.name=execute_tool,gen_ai.tool.name=delete_task,mcp.method.name=tools/call,rpc.response.status_code=-32050": 1,
		"error.type=-32050,gen_ai.operation.name=execute_tool,mcp.method.name=tools/call,rpc.response.status_code=-32050":                              1,
		"gen_ai.operation.name=execute_tool,gen_ai.tool.name=delete_task,mcp.method.name=tools/call":                                                   3,
		"error.type=-32051,gen_ai.operation.name=execute_tool,gen_ai.tool.name=delete_task,mcp.method.name=tools/call,rpc.response.status_code=-32051": 1,
	})
}

// TestNamesTheServerKnows: a span is named after its prompt, and the
// duration counted by it, only once the server has served it; a prompt
// that is not there, as a tool that no one classified, stays on the
// span's attributes, so that a caller cannot add a series per name. A
// read's span has its resource's URI, and not in its name.
func TestNamesTheServerKnows(t *testing.T) {
	o := observe(t)
	s, r, _ := goServer(t, o, mcpeffect.MiddlewareOptions{})
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "audit"}, mcpeffect.ReadOnly,
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "audit"}}}}, nil
		})
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://payroll", Name: "payroll"}, mcpeffect.Full,
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	cs := connectGo(t, s, mcpeffect.ReadOnly, nil, "")
	ctx := context.Background()

	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "audit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "made_up_name"}); err == nil {
		t.Fatal("a prompt that is not there was got")
	}
	got := o.take("prompts/get")
	if len(got) != 2 || !strings.HasPrefix(got[0], "prompts/get audit gen_ai.prompt.name=audit decision=allow scope=read-only") ||
		!strings.HasPrefix(got[1], "prompts/get gen_ai.prompt.name=made_up_name decision=allow scope=read-only error.type=") {
		t.Errorf("spans %q", got)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://payroll"}); err == nil {
		t.Fatal("a read-only caller read what needs full")
	}
	if got, want := o.take("resources/read"), []string{
		"resources/read mcp.resource.uri=notes://payroll decision=deny scope=read-only scope.required=full error.type=-32050 rpc.response.status_code=-32050 status=error",
	}; !slices.Equal(got, want) {
		t.Errorf("spans\n\t%q\nwant\n\t%q", got, want)
	}
	durations := o.durations(t)
	for k, n := range durations {
		if strings.Contains(k, "made_up_name") || strings.Contains(k, "payroll") {
			t.Errorf("mcp.server.operation.duration{%s}: %d; a name the server does not know, or a URI, is not an attribute of a metric", k, n)
		}
	}
	if durations["gen_ai.prompt.name=audit,mcp.method.name=prompts/get"] != 1 {
		t.Errorf("durations %v: the prompt served is not counted by its name", durations)
	}
	for k := range o.counts(t, "mcpeffect.decisions") {
		if strings.Contains(k, "audit") || strings.Contains(k, "payroll") {
			t.Errorf("mcpeffect.decisions{%s}: the counts are by tool only", k)
		}
	}

	// Names made up by the caller, hostile ones among them, add no
	// series: each is refused, on a span named by the method alone.
	o.take("")
	hostile := strings.Repeat("x", 1<<16) + "\x00\u202e\u0130"
	for i := range 50 {
		name := fmt.Sprintf("made_up_%d", i)
		if i == 0 {
			name = hostile
		}
		if _, err := call(cs, name); err == nil {
			t.Fatalf("%.20q was called", name)
		}
	}
	for _, s := range o.spansOf("tools/call") {
		if s.Name != "tools/call" {
			t.Errorf("a span of a made-up tool is named %.40q", s.Name)
		}
	}
	for k, n := range o.counts(t, "mcpeffect.decisions") {
		if strings.Contains(k, "made_up") || strings.Contains(k, "xxx") {
			t.Errorf("mcpeffect.decisions{%.60s}: %d: a made-up name is a series", k, n)
		}
	}
	for k, n := range o.durations(t) {
		if strings.Contains(k, "made_up") || strings.Contains(k, "xxx") {
			t.Errorf("mcp.server.operation.duration{%.60s}: %d: a made-up name is a series", k, n)
		}
	}
	if n := o.counts(t, "mcpeffect.decisions")["mcp.method.name=tools/call,mcpeffect.decision=deny,mcpeffect.scope=read-only"]; n != 50 {
		t.Errorf("%d refusals of tools no one classified counted, want 50", n)
	}
}

// TestTraceContextFromMeta: the caller's trace context in params._meta
// parents the operation's span; one that is not a trace context (not a
// string, malformed, hostile) is ignored, and the span is a root.
func TestTraceContextFromMeta(t *testing.T) {
	o := observe(t, telemetry.Options{Propagator: propagation.TraceContext{}})
	s, _, _ := goServer(t, o, mcpeffect.MiddlewareOptions{})
	cs := connectGo(t, s, mcpeffect.ReadOnly, nil, "")
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, c := range []struct {
		name   string
		meta   mcp.Meta
		parent bool
	}{
		{"traceparent", mcp.Meta{"traceparent": "00-" + traceID + "-" + spanID + "-01", "progressToken": 3}, true},
		{"not a string", mcp.Meta{"traceparent": 17}, false},
		{"malformed", mcp.Meta{"traceparent": "00-" + traceID + "-zz-01"}, false},
		{"hostile", mcp.Meta{"traceparent": "00-\x00\u202e" + strings.Repeat("f", 1<<16), "tracestate": strings.Repeat("k=v,", 1<<12)}, false},
		{"none", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Meta: c.meta, Name: "get_task", Arguments: taskArgs{ID: "1"}})
			if err != nil {
				t.Fatal(err)
			}
			spans := o.spansOf("tools/call")
			o.take("")
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			p := spans[0].Parent
			if c.parent != p.IsValid() {
				t.Fatalf("parent %v", p)
			}
			if c.parent && (p.TraceID().String() != traceID || p.SpanID().String() != spanID || !p.IsRemote()) {
				t.Errorf("parent %v, want the caller's span %s of trace %s", p, spanID, traceID)
			}
			if spans[0].SpanKind != trace.SpanKindServer {
				t.Errorf("span kind %v", spans[0].SpanKind)
			}
		})
	}
}

// TestStartLinksAmbient: when the caller's trace context parents a span,
// the context the request came with (an HTTP request's span) is linked;
// without one, it is the parent.
func TestStartLinksAmbient(t *testing.T) {
	o := observe(t, telemetry.Options{Propagator: propagation.TraceContext{}})
	tp := sdktrace.NewTracerProvider()
	ctx, ambient := tp.Tracer("http").Start(context.Background(), "POST /mcp")
	defer ambient.End()
	meta := map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}

	_, op := o.t.Start(ctx, telemetry.Request{Method: "tools/call", Tool: "get_task", Meta: meta})
	op.End(nil)
	_, op = o.t.Start(ctx, telemetry.Request{Method: "tools/call", Tool: "get_task"})
	op.End(nil)
	spans := o.spansOf("tools/call")
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	if links := spans[0].Links; len(links) != 1 || !links[0].SpanContext.Equal(ambient.SpanContext()) || !spans[0].Parent.IsRemote() {
		t.Errorf("with a trace context in _meta: parent %v, links %v; want the remote parent and a link to %v", spans[0].Parent, links, ambient.SpanContext())
	}
	if !spans[1].Parent.Equal(ambient.SpanContext()) || len(spans[1].Links) != 0 {
		t.Errorf("without: parent %v, links %v; want the parent %v", spans[1].Parent, spans[1].Links, ambient.SpanContext())
	}
}
