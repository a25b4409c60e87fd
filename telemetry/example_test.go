package telemetry_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A go-sdk server whose decisions are traced and counted: the
// telemetry's middleware opens each operation's span before mcpeffect's
// decides, and OnDecision puts the decision on it. Here the providers
// keep what they record in memory, to print it; a server gives them
// exporters (OTLP, Prometheus) instead.
func ExampleTelemetry_OnDecision() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	metrics := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(metrics))
	t, err := telemetry.New(&telemetry.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		log.Fatal(err)
	}

	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "delete_task"}, mcpeffect.Destructive|mcpeffect.Idempotent,
		func(context.Context, *mcp.CallToolRequest, struct{ ID string }) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	s.AddReceivingMiddleware(t.Middleware(), r.Middleware(&mcpeffect.MiddlewareOptions{OnDecision: t.OnDecision}))

	// A read-only caller, in memory.
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_task", Arguments: map[string]any{"ID": "7"}})
	fmt.Println("refused:", err != nil)

	for _, span := range spans.GetSpans() {
		if !strings.HasPrefix(span.Name, "tools/call") {
			continue
		}
		fmt.Println("span:", span.Name)
		for _, kv := range span.Attributes {
			switch kv.Key {
			case telemetry.AttrDecision, telemetry.AttrScope, telemetry.AttrRequired, "error.type":
				fmt.Printf("  %s=%s\n", kv.Key, kv.Value.String())
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := metrics.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != telemetry.MetricDecisions {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				tool, _ := dp.Attributes.Value("gen_ai.tool.name")
				decision, _ := dp.Attributes.Value(telemetry.AttrDecision)
				fmt.Printf("%s: %s %s %d\n", m.Name, tool.AsString(), decision.AsString(), dp.Value)
			}
		}
	}
	// Output:
	// refused: true
	// span: tools/call delete_task
	//   mcpeffect.decision=deny
	//   mcpeffect.scope=read-only
	//   mcpeffect.scope.required=full
	//   error.type=-32050
	// mcpeffect.decisions: delete_task deny 1
}
