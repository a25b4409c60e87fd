package telemetry_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// observed is a Telemetry with the SDK's in-memory span exporter and a
// manual metric reader: what the tests read back.
type observed struct {
	t       *telemetry.Telemetry
	spans   *tracetest.InMemoryExporter
	metrics *sdkmetric.ManualReader
}

// observe returns an observed Telemetry, configured by opts but for its
// providers.
func observe(tb testing.TB, opts ...telemetry.Options) *observed {
	tb.Helper()
	o := &observed{spans: tracetest.NewInMemoryExporter(), metrics: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(o.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(o.metrics))
	tb.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	var err error
	var to telemetry.Options
	if len(opts) > 0 {
		to = opts[0]
	}
	to.TracerProvider, to.MeterProvider = tp, mp
	if o.t, err = telemetry.New(&to); err != nil {
		tb.Fatal(err)
	}
	return o
}

// The attributes that describe a span in the tests, in this order.
var shownKeys = []attribute.Key{
	"gen_ai.tool.name", "gen_ai.prompt.name", "mcp.resource.uri",
	telemetry.AttrDecision, telemetry.AttrScope, telemetry.AttrEffect, telemetry.AttrRequired, telemetry.AttrAnswer,
	"error.type", "rpc.response.status_code",
}

// describe returns a line that says what s records of a decision: its
// name, the attributes of shownKeys, its status and its events.
func describe(s tracetest.SpanStub) string {
	var b strings.Builder
	b.WriteString(s.Name)
	have := map[attribute.Key]string{}
	for _, kv := range s.Attributes {
		have[kv.Key] = kv.Value.String()
	}
	for _, k := range shownKeys {
		if v, ok := have[k]; ok {
			fmt.Fprintf(&b, " %s=%s", strings.TrimPrefix(string(k), "mcpeffect."), v)
		}
	}
	if s.Status.Code == codes.Error {
		b.WriteString(" status=error")
	}
	for _, e := range s.Events {
		var vs []string
		for _, kv := range e.Attributes {
			vs = append(vs, kv.Value.String())
		}
		fmt.Fprintf(&b, " event=%s(%s)", strings.TrimPrefix(e.Name, "mcpeffect."), strings.Join(vs, ","))
	}
	return b.String()
}

// take returns the lines of the spans of method ended since the last
// take, in the order they ended, and forgets every span.
func (o *observed) take(method string) []string {
	var lines []string
	for _, s := range o.spans.GetSpans() {
		for _, kv := range s.Attributes {
			if kv.Key == "mcp.method.name" && kv.Value.AsString() == method {
				lines = append(lines, describe(s))
			}
		}
	}
	o.spans.Reset()
	return lines
}

// spansOf returns the spans of method ended since the last take.
func (o *observed) spansOf(method string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range o.spans.GetSpans() {
		for _, kv := range s.Attributes {
			if kv.Key == "mcp.method.name" && kv.Value.AsString() == method {
				out = append(out, s)
			}
		}
	}
	return out
}

// setText returns the attributes of set as "k=v" joined with commas,
// sorted, leaving out those of skip.
func setText(set attribute.Set, skip ...attribute.Key) string {
	var parts []string
	for _, kv := range set.ToSlice() {
		if !slices.Contains(skip, kv.Key) {
			parts = append(parts, string(kv.Key)+"="+kv.Value.String())
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// collect returns the metrics as they are now.
func (o *observed) collect(tb testing.TB) metricdata.ResourceMetrics {
	tb.Helper()
	var rm metricdata.ResourceMetrics
	if err := o.metrics.Collect(context.Background(), &rm); err != nil {
		tb.Fatal(err)
	}
	return rm
}

// find returns the metric named name, failing tb if there is none.
func find(tb testing.TB, rm metricdata.ResourceMetrics, name string) metricdata.Metrics {
	tb.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	tb.Fatalf("no metric %s", name)
	return metricdata.Metrics{}
}

// counts returns the values of the counter name by their attributes.
func (o *observed) counts(tb testing.TB, name string) map[string]int64 {
	tb.Helper()
	m := find(tb, o.collect(tb), name)
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok || !sum.IsMonotonic {
		tb.Fatalf("%s is a %T, want a counter", name, m.Data)
	}
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		out[setText(dp.Attributes)] = dp.Value
	}
	return out
}

// durations returns the number of durations recorded in
// mcp.server.operation.duration, by their attributes other than the
// protocol version and the transport, and checks the histogram is the
// conventions' one: in seconds, with their buckets.
func (o *observed) durations(tb testing.TB) map[string]uint64 {
	tb.Helper()
	m := find(tb, o.collect(tb), "mcp.server.operation.duration")
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok || m.Unit != "s" {
		tb.Fatalf("mcp.server.operation.duration is a %T in %q, want a histogram in s", m.Data, m.Unit)
	}
	out := map[string]uint64{}
	for _, dp := range h.DataPoints {
		if want := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}; !slices.Equal(dp.Bounds, want) {
			tb.Errorf("the buckets are %v, want the conventions' %v", dp.Bounds, want)
		}
		out[setText(dp.Attributes, "mcp.protocol.version", "network.transport")] += dp.Count
	}
	return out
}

// person answers every confirmation with answer.
type person struct {
	mu     sync.Mutex
	answer string
}

func (p *person) set(answer string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answer = answer
}

func (p *person) handler(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &mcp.ElicitResult{Action: p.answer}, nil
}

// The tools of the tests' servers, with their effects.
var testTools = []struct {
	name   string
	effect mcpeffect.Effect
}{
	{"get_task", mcpeffect.Read},
	{"create_task", mcpeffect.Write},
	{"delete_task", mcpeffect.Destructive | mcpeffect.Idempotent},
}

// taskArgs are the arguments of the tests' tools.
type taskArgs struct {
	ID string `json:"id"`
}

// goServer returns a go-sdk server of the testTools and of fail_task,
// a read whose result is an error, traced by o, enforced with opts, with
// o's OnDecision; its registry, and the count of each tool's runs.
func goServer(tb testing.TB, o *observed, opts mcpeffect.MiddlewareOptions) (*mcp.Server, *mcpeffect.Registry, *runs) {
	tb.Helper()
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)
	ran := &runs{n: map[string]int{}}
	for _, tool := range testTools {
		name := tool.name
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: name}, tool.effect,
			func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
				ran.add(name)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran"}}}, nil, nil
			})
	}
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "fail_task"}, mcpeffect.Read,
		func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
			ran.add("fail_task")
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such task"}}}, nil, nil
		})
	if opts.OnDecision == nil {
		opts.OnDecision = o.t.OnDecision
	}
	s.AddReceivingMiddleware(o.t.Middleware(), r.Middleware(&opts))
	return s, r, ran
}

// runs counts the runs of each handler.
type runs struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *runs) add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n[name]++
}

func (r *runs) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[name]
}

// connectGo opens an in-memory session to s whose server side has
// scope, as a client with opts speaking protocol ("": go-sdk's default).
func connectGo(tb testing.TB, s *mcp.Server, scope mcpeffect.Scope, opts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
	tb.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(mcpeffect.WithConnectionScope(context.Background(), scope), st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v1"}, opts).
		Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// call calls tool on cs with {"id": "7"}.
func call(cs *mcp.ClientSession, tool string) (*mcp.CallToolResult, error) {
	return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: taskArgs{ID: "7"}})
}

// wantCounts checks the values of the counter name, by attributes.
func wantCounts(tb testing.TB, o *observed, name string, want map[string]int64) {
	tb.Helper()
	if got := o.counts(tb, name); !maps.Equal(got, want) {
		tb.Errorf("%s\n\t%v\nwant\n\t%v", name, got, want)
	}
}

// wantDurations checks the number of durations of method recorded, by
// attributes.
func wantDurations(tb testing.TB, o *observed, method string, want map[string]uint64) {
	tb.Helper()
	got := o.durations(tb)
	maps.DeleteFunc(got, func(k string, _ uint64) bool {
		return !slices.Contains(strings.Split(k, ","), "mcp.method.name="+method)
	})
	if !maps.Equal(got, want) {
		tb.Errorf("mcp.server.operation.duration of %s\n\t%v\nwant\n\t%v", method, got, want)
	}
}

// attr returns the value of the attribute key of s, or "".
func attr(s tracetest.SpanStub, key attribute.Key) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.String()
		}
	}
	return ""
}
