package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	segjson "github.com/segmentio/encoding/json"
	"golang.org/x/time/rate"
)

// BenchmarkHTTPCall makes one tools/call after another over Streamable
// HTTP, with a client of raw HTTP requests, so that what it allocates is
// the server's (go-sdk's client would add its own decoding; the raw
// client's, encoding a request and reading the answer, are a few KiB):
// B/op and allocs/op are a call's, go-sdk's share included. echo is the
// trivial tool of TestLoad's ceiling. With a memory profile of every
// allocation, pprof tells what go-sdk's decoding allocates (see the
// README's performance section):
//
//	go test -run '^$' -bench HTTPCall -benchmem -memprofile mem.out -memprofilerate 1 .
//	go tool pprof -sample_index=alloc_space -top mem.out
func BenchmarkHTTPCall(b *testing.B) {
	for _, c := range []struct {
		tool string
		args func(task string) map[string]any
	}{
		{"echo", func(string) map[string]any { return map[string]any{"text": "a call"} }},
		{"whoami", func(string) map[string]any { return map[string]any{} }},
		{"get_task", func(task string) map[string]any { return map[string]any{"task_id": task} }},
		{"list_comments", func(task string) map[string]any { return map[string]any{"task_id": task} }},
		{"comment_on_task", func(task string) map[string]any { return map[string]any{"task_id": task, "body": "a comment"} }},
	} {
		b.Run(c.tool, func(b *testing.B) {
			base, secret, task := benchServer(b, c.tool == "echo")
			call := rawSession(b, base, secret)
			a := c.args(task)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				call(i, c.tool, a)
			}
		})
	}
}

// benchServer serves Done over HTTP, or the ceiling of TestLoad, on a
// loopback port, and returns its URL, a secret of a person with full
// scope, and a task with two steps and two comments.
func benchServer(b *testing.B, ceiling bool) (base, secret, task string) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	b.Cleanup(srv.Close)
	base = "http://" + srv.Listener.Addr().String()
	if ceiling {
		srv.Config.Handler = ceilingHandler(newDone(nil, logger, config{}), defaultHTTPLimits)
		srv.Start()
		return base, "any", ""
	}
	ctx := b.Context()
	st, _, err := store.Open(ctx, b.TempDir(), storeOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	secret, task = seedBench(b, st)
	// The write limit off: a benchmark measures Done, not the limit.
	d := newDone(st, logger, config{baseURL: base, writeRate: rate.Inf})
	server, registry := d.newServer()
	srv.Config.Handler = d.httpHandler(server, registry)
	srv.Start()
	return base, secret, task
}

// rawSession opens an MCP session at base with plain HTTP requests and
// returns a function that calls a tool in it, the i-th call, and fails b
// unless the call succeeds.
func rawSession(b *testing.B, base, secret string) func(i int, tool string, args map[string]any) {
	client := &http.Client{}
	session, version := "", ""
	post := func(body any) (*http.Response, []byte) {
		js, err := json.Marshal(body)
		if err != nil {
			b.Fatal(err)
		}
		req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, base+mcpPath, bytes.NewReader(js))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		return resp, out
	}
	resp, out := post(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"},
	}})
	session = resp.Header.Get("Mcp-Session-Id")
	var init struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if err := json.Unmarshal(sseData(out), &init); err != nil || session == "" {
		b.Fatalf("initialize: %d %s (%v)", resp.StatusCode, out, err)
	}
	version = init.Result.ProtocolVersion
	if resp, out := post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); resp.StatusCode != http.StatusAccepted {
		b.Fatalf("notifications/initialized: %d %s", resp.StatusCode, out)
	}
	return func(i int, tool string, args map[string]any) {
		resp, out := post(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"structuredContent"`)) || bytes.Contains(out, []byte(`"isError":true`)) {
			b.Fatalf("%s: %d %s", tool, resp.StatusCode, out)
		}
	}
}

// sseData returns the data of the first event of a text/event-stream
// answer, or the answer itself if it is plain JSON.
func sseData(body []byte) []byte {
	for line := range strings.Lines(string(body)) {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return []byte(strings.TrimSpace(data))
		}
	}
	return body
}

// BenchmarkDecode decodes a tools/call request as go-sdk decodes each
// JSON value it reads (its internal/json.Unmarshal: a new segmentio
// Decoder on a bytes.Reader, which allocates a 32 KiB buffer to read
// into), and as segmentio's Parse decodes the same bytes where they are.
func BenchmarkDecode(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_task","arguments":{"task_id":"0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}}}`)
	b.Run("decoder", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var v map[string]any
			dec := segjson.NewDecoder(bytes.NewReader(msg))
			dec.DontMatchCaseInsensitiveStructFields()
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var v map[string]any
			if _, err := segjson.Parse(msg, &v, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
				b.Fatal(err)
			}
		}
	})
}
