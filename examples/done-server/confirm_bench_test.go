package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// BenchmarkURLConfirmWaiting measures what calls waiting for a person's
// answer on the page (serve -confirm url) cost while they wait: 60 calls
// of 4 agent tokens of the command line, 15 each, over HTTP on
// 2025-11-25, each sent to the page and waiting there. Each op is one
// second of their waiting; cores is the CPU that Done (this process, the
// clients' idle sessions included) and PostgreSQL, on that store, used in
// it, and waiting how many calls waited. "none" is the same server with
// no call waiting, the baseline; "2MiB-refused" sends delete_task with
// 2 MiB of an argument its schema does not know, the attack of issue 27;
// "300KiB" update_task with a description of 300 KiB its schema
// accepts. Run it for a few seconds of each:
//
//	go test -run '^$' -bench URLConfirmWaiting -benchtime 5x .
func BenchmarkURLConfirmWaiting(b *testing.B) {
	for _, c := range []struct {
		name string
		tool string
		args func(task string) map[string]any
	}{
		{"none", "", nil},
		{"delete_task", "delete_task", func(task string) map[string]any { return map[string]any{"task_id": task} }},
		{"300KiB", "update_task", func(task string) map[string]any {
			return map[string]any{"task_id": task, "description": strings.Repeat("d", 300<<10)}
		}},
		{"2MiB-refused", "delete_task", func(task string) map[string]any {
			return map[string]any{"task_id": task, "padding": strings.Repeat("p", 2<<20)}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			const tokens, each = 4, 15
			base, secrets, tasks := confirmBenchServer(b, tokens, tokens*each)
			ctx, cancel := context.WithCancel(b.Context())
			var wg sync.WaitGroup
			defer func() { cancel(); wg.Wait() }()
			asked := make(chan struct{}, tokens*each)
			returned := make(chan struct{}, tokens*each)
			// One call after another, each sent to the page, where it
			// waits, or refused at once: what is measured is their
			// waiting, not PostgreSQL's retries of 60 confirmations
			// asked in the same moment.
			waiting := 0
			for i, secret := range secrets {
				if c.tool == "" {
					break
				}
				cs := confirmBenchHost(b, base, secret, asked)
				for j := range each {
					wg.Go(func() {
						res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args(tasks[i*each+j])})
						if ctx.Err() == nil && c.name != "2MiB-refused" {
							b.Errorf("a call returned before it was answered: %v %v", err, res)
						}
						returned <- struct{}{}
					})
					select {
					case <-asked:
						waiting++
					case <-returned:
					}
				}
			}
			var pg *pgtest.Cluster
			if pgtest.Postgres() {
				pg = pgtest.Start(b)
			}
			cpu := func() time.Duration {
				d := cpuTime()
				if pg != nil {
					d += processTreeCPU(pg.PID())
				}
				return d
			}
			b.ResetTimer()
			start, used := time.Now(), cpu()
			for range b.N {
				time.Sleep(time.Second)
			}
			elapsed, used := time.Since(start), cpu()-used
			b.StopTimer()
			b.ReportMetric(used.Seconds()/elapsed.Seconds(), "cores")
			b.ReportMetric(float64(waiting), "waiting")
		})
	}
}

// confirmBenchServer serves Done with -confirm url over HTTP on a
// loopback port, on the store of this run, and returns its URL, the
// secrets of n agent tokens of the command line, and tasks tasks.
func confirmBenchServer(b *testing.B, n, tasks int) (base string, secrets, taskIDs []string) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	b.Cleanup(srv.Close)
	base = "http://" + srv.Listener.Addr().String()
	st, _, err := openStoreAt(b, b.TempDir(), storeOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	// The write limit off: a benchmark measures Done, not the limit.
	d := newDone(st, logger, config{baseURL: base, writeRate: rate.Inf, confirmURL: urlConfirmModes["url"]})
	server, registry := d.newServer()
	srv.Config.Handler = d.httpHandler(server, registry)
	srv.Start()
	for i := range n {
		_, secret, err := st.MintToken(b.Context(), store.NewToken{Name: "bot-" + string(rune('a'+i)), Kind: store.Agent, Scope: mcpeffect.Full})
		if err != nil {
			b.Fatal(err)
		}
		secrets = append(secrets, secret)
	}
	owner, _, err := st.Owner(b.Context(), "owner")
	if err != nil {
		b.Fatal(err)
	}
	for range tasks {
		task, err := st.CreateTask(b.Context(), owner.Actor(), store.NewTask{Title: "a task to delete"})
		if err != nil {
			b.Fatal(err)
		}
		taskIDs = append(taskIDs, task.ID)
	}
	return base, secrets, taskIDs
}

// confirmBenchHost connects to base with the token secret on
// 2025-11-25, as a host that opens every confirmation page it is sent
// to, and says so on asked.
func confirmBenchHost(b *testing.B, base, secret string, asked chan<- struct{}) *mcp.ClientSession {
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := client.Connect(b.Context(), &mcp.StreamableClientTransport{
		Endpoint: base + mcpPath, HTTPClient: &http.Client{Transport: bearerTransport{secret: secret}}, MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}
