package main

// Done's decisions, observed: every operation's span and duration, and
// every decision of mcpeffect counted by tool and outcome (module
// github.com/mcpeffect/mcpeffect/telemetry), exported over OTLP when the
// standard OTEL_EXPORTER_OTLP_* variables name a collector, and served to
// Prometheus on a listener of their own with serve -metrics ADDR. With
// neither, there is no telemetry at all: the decision hook is left nil
// and costs nothing.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	"go.opentelemetry.io/otel/trace/noop"
)

// metricsPath is where the -metrics listener serves Prometheus.
const metricsPath = "/metrics"

// otlpWanted reports, from the standard variables of the OpenTelemetry
// SDK, whether the signal ("TRACES" or "METRICS") is exported over OTLP:
// a collector is named for it (OTEL_EXPORTER_OTLP_ENDPOINT, or the
// signal's own endpoint), and neither OTEL_SDK_DISABLED nor the signal's
// exporter (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER: none) turns it
// off. It fails on what Done cannot do: an exporter other than otlp, a
// protocol other than http/protobuf (the OTLP exporters built in are
// HTTP's).
func otlpWanted(getenv func(string) string, signal string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	exporter := "OTEL_" + signal + "_EXPORTER"
	switch v := strings.TrimSpace(getenv(exporter)); v {
	case "", "otlp":
	case "none":
		return false, nil
	default:
		return false, fmt.Errorf("%s=%q: Done exports %s over OTLP only (otlp, or none; Prometheus metrics are served with -metrics)", exporter, v, strings.ToLower(signal))
	}
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") == "" {
		return false, nil
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			if v != "http/protobuf" {
				return false, fmt.Errorf("%s=%q: Done exports OTLP over HTTP with protobuf only (http/protobuf)", name, v)
			}
			break
		}
	}
	return true, nil
}

// metricsAddress returns where -metrics listens: addr, on loopback when
// it names no host (a port alone, or :PORT), so that exposing the
// metrics to other machines takes a host of one's own (0.0.0.0:9464).
func metricsAddress(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		// A port alone.
		host, port = "", addr
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return "", fmt.Errorf("serve: -metrics must be a port or an address with a port, such as 9464 or 127.0.0.1:9464 (got %q)", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// startTelemetry returns the telemetry of a serving process, exported as
// getenv and metricsAddr say (see otlpWanted and metricsAddress), and
// what ends it: it flushes what is not exported yet, and closes the
// metrics listener. It returns a nil Telemetry when neither asks for any.
// The OTLP exporters read the rest of their configuration (headers,
// timeouts, certificates) from the process's environment, as every
// OpenTelemetry SDK does.
func startTelemetry(ctx context.Context, getenv func(string) string, metricsAddr string, logger *slog.Logger) (*telemetry.Telemetry, func(), error) {
	traces, err := otlpWanted(getenv, "TRACES")
	if err != nil {
		return nil, nil, err
	}
	otlpMetrics, err := otlpWanted(getenv, "METRICS")
	if err != nil {
		return nil, nil, err
	}
	if !traces && !otlpMetrics && metricsAddr == "" {
		return nil, func() {}, nil
	}
	var stops []func(context.Context) error
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, s := range stops {
			if err := s(ctx); err != nil {
				logger.Warn("stopping the telemetry", "err", err)
			}
		}
	}
	fail := func(err error) (*telemetry.Telemetry, func(), error) {
		stop()
		return nil, nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("done-server"), semconv.ServiceVersion(version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
		resource.WithTelemetrySDK())
	if err != nil {
		return fail(fmt.Errorf("the telemetry's resource: %w", err))
	}

	opts := &telemetry.Options{
		TracerProvider: noop.NewTracerProvider(),
		Propagator:     propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return fail(fmt.Errorf("the OTLP trace exporter: %w", err))
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		stops = append(stops, tp.Shutdown)
		opts.TracerProvider = tp
	}
	readers := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if otlpMetrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return fail(fmt.Errorf("the OTLP metric exporter: %w", err))
		}
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	if metricsAddr != "" {
		reader, serve, err := prometheusMetrics(metricsAddr, logger)
		if err != nil {
			return fail(err)
		}
		stops = append(stops, serve)
		readers = append(readers, sdkmetric.WithReader(reader))
	}
	mp := sdkmetric.NewMeterProvider(readers...)
	// The provider stops before the listener: its last collection is
	// still served until then.
	stops = append([]func(context.Context) error{mp.Shutdown}, stops...)
	opts.MeterProvider = mp
	t, err := telemetry.New(opts)
	if err != nil {
		return fail(err)
	}
	logger.Info("telemetry", "otlp_traces", traces, "otlp_metrics", otlpMetrics, "prometheus", metricsAddr != "")
	return t, stop, nil
}

// prometheusMetrics returns the reader that gives the metrics to
// Prometheus, served at /metrics on a listener of its own at addr (see
// metricsAddress), and what closes that listener.
func prometheusMetrics(addr string, logger *slog.Logger) (sdkmetric.Reader, func(context.Context) error, error) {
	addr, err := metricsAddress(addr)
	if err != nil {
		return nil, nil, err
	}
	// A registry of Done's own, not client_golang's global one: only the
	// telemetry's metrics are served.
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, fmt.Errorf("the Prometheus exporter: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: -metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+metricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}))
	srv := &http.Server{
		Handler: mux,
		// A scrape is one small request: a client that takes longer to
		// send its headers is not a scraper, and holds no connection.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("serving metrics", "url", "http://"+ln.Addr().String()+metricsPath)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serving metrics", "err", err)
		}
	}()
	return exp, srv.Shutdown, nil
}

// onDecision returns the decision hook of d's enforcers: the
// telemetry's, or nil without one.
func (d *done) onDecision() func(context.Context, mcpeffect.Decision) {
	if d.telemetry == nil {
		return nil
	}
	return d.telemetry.OnDecision
}

// traced returns mw, the receiving middleware of d's servers, with the
// telemetry's outermost, so that each operation's span and duration
// cover all of it (a panic recovered below included), and the decision
// made within finds its span: mw as it is, without telemetry.
func (d *done) traced(mw []mcp.Middleware) []mcp.Middleware {
	if d.telemetry == nil {
		return mw
	}
	return append([]mcp.Middleware{d.telemetry.Middleware()}, mw...)
}
