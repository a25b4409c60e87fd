package telemetry_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkDecisionHook measures what the decision hook costs a
// tools/call through go-sdk's client and server in memory: the baseline
// is mcpeffect's middleware with OnDecision nil; "empty-hook" sets an
// OnDecision that does nothing (the hook's own cost, without a
// consumer); "telemetry" sets the telemetry's, with its middleware, on
// the OpenTelemetry SDK (every span sampled and batched to an exporter
// that drops it, the metrics aggregated for a reader), as a server that
// exports them runs. Each pair runs in the same loop, call by call (see
// paired), so that both see the same machine: only the ratio means
// something.
func BenchmarkDecisionHook(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	tel, err := telemetry.New(&telemetry.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	session := func(hook func(context.Context, mcpeffect.Decision), traced bool) *mcp.ClientSession {
		r := mcpeffect.NewRegistry()
		s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "v1"}, nil)
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: "create_task"}, mcpeffect.Write,
			func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
			})
		mw := []mcp.Middleware{r.Middleware(&mcpeffect.MiddlewareOptions{OnDecision: hook})}
		if traced {
			mw = append([]mcp.Middleware{tel.Middleware()}, mw...)
		}
		s.AddReceivingMiddleware(mw...)
		return connectGo(b, s, mcpeffect.Full, nil, "")
	}
	calling := func(cs *mcp.ClientSession) func() error {
		params := &mcp.CallToolParams{Name: "create_task", Arguments: taskArgs{ID: "7"}}
		return func() error { _, err := cs.CallTool(context.Background(), params); return err }
	}
	baseline := calling(session(nil, false))
	b.Run("empty-hook", func(b *testing.B) {
		paired(b, baseline, calling(session(func(context.Context, mcpeffect.Decision) {}, false)))
	})
	b.Run("telemetry", func(b *testing.B) {
		paired(b, baseline, calling(session(tel.OnDecision, true)))
	})
}

// paired runs baseline and with alternately, call by call, each first in
// turn, and reports the mean time of each, their ratio (with over
// baseline, from the means), and the ratio of their medians, which a
// few calls stalled by other work on a shared machine do not move.
func paired(b *testing.B, baseline, with func() error) {
	b.Helper()
	calls := [2]func() error{baseline, with}
	for range 50 { // warm both up
		for _, c := range calls {
			if err := c(); err != nil {
				b.Fatal(err)
			}
		}
	}
	var spent [2]time.Duration
	var each [2][]time.Duration
	n := 0
	for b.Loop() {
		for k := range 2 {
			i := (n + k) % 2
			start := time.Now()
			if err := calls[i](); err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			spent[i] += d
			each[i] = append(each[i], d)
		}
		n++
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2])
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(n), "baseline-ns/call")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(n), "with-ns/call")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "ratio")
	b.ReportMetric(median(each[1])/median(each[0]), "median-ratio")
}

// BenchmarkOperation measures the telemetry's own work for one
// tools/call, without the protocol: the span opened, a decision put on
// it and counted, the span ended and the duration recorded, on the same
// SDK setup as BenchmarkDecisionHook's.
func BenchmarkOperation(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	tel, err := telemetry.New(&telemetry.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		b.Fatal(err)
	}
	r := mcpeffect.NewRegistry()
	if err := r.Add("create_task", mcpeffect.Write); err != nil {
		b.Fatal(err)
	}
	enf := r.Enforcer(nil)
	op := mcpeffect.Operation{Method: "tools/call", Name: "create_task"}
	caller := mcpeffect.Caller{Scope: mcpeffect.Full, Scoped: true}
	req := telemetry.Request{Method: "tools/call", Tool: "create_task", ProtocolVersion: "2025-11-25"}
	b.ReportAllocs()
	for b.Loop() {
		ctx, o := tel.Start(context.Background(), req)
		tel.OnDecision(ctx, enf.Decide(ctx, op, caller))
		o.End(nil)
	}
}
