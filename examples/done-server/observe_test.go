package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// observedDone runs done-server serve -http as a process on the data in
// dir, with args and the environment extra (and no OTEL_ variable of the
// test's own), and returns the base URL of its MCP server and the URL of
// its metrics ("" without -metrics). The process is stopped as a person
// stops it, with SIGTERM, at the end of the test.
func observedDone(t *testing.T, dir string, extra []string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(doneServer(t), append([]string{"serve", "-data", dir, "-context", "off", "-http", "127.0.0.1:0"}, args...)...)
	for _, kv := range serverEnv(extra...) {
		if !strings.HasPrefix(kv, "OTEL_") || slices.Contains(extra, kv) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Error("done-server did not stop on SIGTERM")
		}
	})
	var mcpURL, metricsURL string
	lines := bufio.NewScanner(stderr)
	for mcpURL == "" && lines.Scan() {
		line := lines.Text()
		if _, u, ok := strings.Cut(line, `msg="serving metrics" url=`); ok {
			metricsURL = u
		}
		if _, u, ok := strings.Cut(line, `msg="serving MCP over HTTP" url=`); ok {
			mcpURL = strings.TrimSuffix(u, mcpPath)
		}
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("done-server: %s", line)
		}
	}
	if mcpURL == "" {
		t.Fatal("done-server never said where it serves MCP")
	}
	go io.Copy(io.Discard, stderr)
	return mcpURL, metricsURL
}

// tokensIn mints a read-only and a full token for people in a new data
// directory, and returns it with their secrets.
func tokensIn(t *testing.T) (dir, reader, full string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "data")
	st, _, err := store.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, reader, err = st.MintToken(t.Context(), store.NewToken{Name: "rita", Kind: store.Human, Scope: mcpeffect.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	_, full, err = st.MintToken(t.Context(), store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	return dir, reader, full
}

// observedCalls makes, through the MCP server at base, an allowed call
// (a read-only token reads), a refused one (it creates: the step-up
// challenge answers it), and with a full token, having created two
// tasks, a deletion a person confirms and one they decline.
func observedCalls(t *testing.T, base, reader, full string) {
	t.Helper()
	var answer struct {
		sync.Mutex
		action string
	}
	elicit := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		answer.Lock()
		defer answer.Unlock()
		return &mcp.ElicitResult{Action: answer.action}, nil
	}
	connect := func(secret string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: elicit}).
			Connect(t.Context(), &mcp.StreamableClientTransport{
				Endpoint: base + mcpPath, HTTPClient: &http.Client{Transport: bearerTransport{secret: secret}},
				MaxRetries: -1, DisableStandaloneSSE: true,
			}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	r, f := connect(reader), connect(full)
	first := must[store.Task](t, f, "create_task", args{"title": "ship v2"})
	second := must[store.Task](t, f, "create_task", args{"title": "ship v3"})
	must[store.TaskDetail](t, r, "get_task", args{"task_id": first.ID})
	if _, err := call[store.Task](t, r, "create_task", args{"title": "not mine to make"}); err == nil {
		t.Fatal("a read-only token created a task")
	}
	answer.action = "accept"
	must[store.TrashItem](t, f, "delete_task", args{"task_id": first.ID})
	answer.action = "decline"
	if _, err := call[store.TrashItem](t, f, "delete_task", args{"task_id": second.ID}); err == nil {
		t.Fatal("a declined deletion ran")
	}
}

// TestMetricsScrape runs done-server with -metrics and -confirm
// destructive, makes allowed, refused and confirmed calls, and scrapes
// /metrics: the exposition, parsed, counts each decision by tool and
// outcome, each answer, and times each operation.
func TestMetricsScrape(t *testing.T) {
	dir, reader, full := tokensIn(t)
	base, metricsURL := observedDone(t, dir, nil, "-metrics", "127.0.0.1:0", "-confirm", "destructive")
	if !strings.HasPrefix(metricsURL, "http://127.0.0.1:") || !strings.HasSuffix(metricsURL, metricsPath) {
		t.Fatalf("metrics served at %q", metricsURL)
	}
	observedCalls(t, base, reader, full)

	families := scrape(t, metricsURL)
	counts := func(name string, by ...string) map[string]float64 {
		out := map[string]float64{}
		f := families[name]
		if f == nil {
			t.Fatalf("no %s in the exposition; it has %v", name, keys(families))
		}
		for _, m := range f.GetMetric() {
			if !hasLabel(m, "mcp_method_name", "tools/call") {
				continue
			}
			var parts []string
			for _, l := range by {
				parts = append(parts, label(m, l))
			}
			key := strings.Join(parts, " ")
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] += m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key] += float64(m.GetHistogram().GetSampleCount())
			}
		}
		return out
	}
	decisions := counts("mcpeffect_decisions_total", "gen_ai_tool_name", "mcpeffect_decision", "mcpeffect_scope")
	for key, want := range map[string]float64{
		"create_task allow full":     2,
		"get_task allow read-only":   1,
		"create_task deny read-only": 1,
	} {
		if got := decisions[key]; got != want {
			t.Errorf("mcpeffect_decisions_total{%s} = %v, want %v; all: %v", key, got, want, decisions)
		}
	}
	// Two deletions to confirm, each decided once a call: on the
	// 2026-07-28 protocol, the question and the answer are two calls.
	if got := decisions["delete_task confirm full"]; got != 2 && got != 4 {
		t.Errorf("mcpeffect_decisions_total{delete_task confirm full} = %v, want 2 or 4; all: %v", got, decisions)
	}
	answers := counts("mcpeffect_confirmations_total", "gen_ai_tool_name", "mcpeffect_confirm_answer")
	if answers["delete_task accept"] != 1 || answers["delete_task decline"] != 1 {
		t.Errorf("mcpeffect_confirmations_total %v, want one accept and one decline of delete_task", answers)
	}
	durations := counts("mcp_server_operation_duration_seconds", "gen_ai_tool_name", "error_type")
	// The refusal of the challenge is answered before the MCP server: no
	// operation, and no duration.
	for key, want := range map[string]float64{
		"create_task ":       2,
		"get_task ":          1,
		"delete_task -32051": 1,
	} {
		if durations[key] != want {
			t.Errorf("mcp_server_operation_duration_seconds{%s} counts %v, want %v; all: %v", key, durations[key], want, durations)
		}
	}
	if durations["delete_task "] < 1 || durations["create_task -32050"] != 0 {
		t.Errorf("mcp_server_operation_duration_seconds %v: want the accepted deletion timed, and no operation for the challenge's refusal", durations)
	}
	if f := families["mcp_server_operation_duration_seconds"]; f != nil {
		if b := f.GetMetric()[0].GetHistogram().GetBucket(); len(b) < 14 || b[0].GetUpperBound() != 0.01 || b[13].GetUpperBound() != 300 {
			t.Errorf("buckets %v, want the conventions' 0.01 to 300", b)
		}
	}

	// The listener serves the metrics and nothing else.
	for _, c := range []struct{ method, path string }{{"POST", metricsPath}, {"GET", "/"}, {"GET", mcpPath}} {
		req, _ := http.NewRequest(c.method, strings.TrimSuffix(metricsURL, metricsPath)+c.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode < 400 {
			t.Errorf("%s %s on the metrics listener: %s", c.method, c.path, res.Status)
		}
	}
}

// scrape returns the metric families that url serves, parsed from the
// Prometheus text exposition.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET %s: %s, %s", url, res.Status, res.Header.Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parsing the exposition of %s: %v", url, err)
	}
	return families
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func hasLabel(m *dto.Metric, name, value string) bool { return label(m, name) == value }

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestOTLPExport runs done-server with the standard OTEL_EXPORTER_OTLP_*
// variables naming a collector (a test server that decodes what it is
// sent): the spans of the calls reach it over OTLP/HTTP, each with its
// decision, and so do the metrics.
func TestOTLPExport(t *testing.T) {
	var mu sync.Mutex
	var spans []string
	var metricPosts int
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want protobuf", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/traces":
			var req coltrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, rs := range req.GetResourceSpans() {
				service := ""
				for _, kv := range rs.GetResource().GetAttributes() {
					if kv.GetKey() == "service.name" {
						service = kv.GetValue().GetStringValue()
					}
				}
				for _, ss := range rs.GetScopeSpans() {
					for _, s := range ss.GetSpans() {
						line := service + ": " + s.GetName()
						for _, kv := range s.GetAttributes() {
							if kv.GetKey() == "mcpeffect.decision" || kv.GetKey() == "mcpeffect.confirm.answer" {
								line += " " + kv.GetKey() + "=" + kv.GetValue().GetStringValue()
							}
						}
						spans = append(spans, line)
					}
				}
			}
		case "/v1/metrics":
			metricPosts++
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(collector.Close)

	dir, reader, full := tokensIn(t)
	base, metricsURL := observedDone(t, dir, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL,
		"OTEL_SERVICE_NAME=done-test",
		"OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_METRIC_EXPORT_INTERVAL=100",
	}, "-confirm", "destructive")
	if metricsURL != "" {
		t.Errorf("metrics served at %q without -metrics", metricsURL)
	}
	observedCalls(t, base, reader, full)

	want := []string{
		"done-test: tools/call get_task mcpeffect.decision=allow",
		"done-test: tools/call delete_task mcpeffect.decision=confirm mcpeffect.confirm.answer=accept",
		"done-test: tools/call delete_task mcpeffect.decision=confirm mcpeffect.confirm.answer=decline",
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return slices.Contains(spans, w) })
		got, posts := slices.Clone(spans), metricPosts
		mu.Unlock()
		if len(missing) == 0 && posts > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector has not received %q (%d posts of metrics); it has %q", missing, posts, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTelemetryConfig: which variables turn OTLP on, and the clear error
// of each that asks for what Done cannot do; where -metrics listens.
func TestTelemetryConfig(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		traces  bool
		metrics bool
		err     string
	}{
		{env: nil},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, traces: true, metrics: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, traces: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none"}, traces: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, traces: true, metrics: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: `OTEL_EXPORTER_OTLP_PROTOCOL="grpc": Done exports OTLP over HTTP with protobuf only`},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, err: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/json"`},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER="zipkin": Done exports traces over OTLP only`},
	} {
		getenv := func(k string) string { return c.env[k] }
		traces, err := otlpWanted(getenv, "TRACES")
		var metrics bool
		if err == nil {
			metrics, err = otlpWanted(getenv, "METRICS")
		}
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v, want %q", c.env, err, c.err)
			}
		case err != nil || traces != c.traces || metrics != c.metrics:
			t.Errorf("%v: traces %v, metrics %v, err %v; want %v, %v", c.env, traces, metrics, err, c.traces, c.metrics)
		}
	}

	for addr, want := range map[string]string{
		"9464": "127.0.0.1:9464", ":9464": "127.0.0.1:9464", "0": "127.0.0.1:0",
		"0.0.0.0:9464": "0.0.0.0:9464", "[::1]:9464": "[::1]:9464", "localhost:9464": "localhost:9464",
		"": "", "localhost": "", "127.0.0.1:": "", ":99999": "", "9464\x00": "", "١٢٣": "", "-1": "",
	} {
		got, err := metricsAddress(addr)
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), "-metrics must be a port") {
				t.Errorf("-metrics %q: %q, %v; want an error that says what it takes", addr, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("-metrics %q: %q, %v; want %q", addr, got, err, want)
		}
	}

	// Through the command line: a bad -metrics, or a variable Done cannot
	// honour, is refused before anything is served.
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"serve", "-data", dir, "-context", "off", "-http", "127.0.0.1:0", "-metrics", "nope"}, nil, "-metrics must be a port"},
		{[]string{"serve", "-data", dir, "-context", "off", "-http", "127.0.0.1:0"}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "http/protobuf"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		err := run(ctx, c.args, getenv(c.env), io.Discard, io.Discard)
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%q with %v: %v, want an error that says %q", c.args, c.env, err, c.want)
		}
	}
}
