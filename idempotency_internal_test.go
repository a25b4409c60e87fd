package mcpeffect

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFingerprintEquivalence holds the fingerprint to SEP-3182's request
// equivalence: the same parsed JSON values are the same call, whatever
// their writing; anything else is another call.
func TestFingerprintEquivalence(t *testing.T) {
	same := []struct{ name, a, b string }{
		{"key order", `{"a": 1, "b": 2}`, `{"b":2,"a":1}`},
		{"whitespace", `{"a":[1,2]}`, " {\n\t\"a\" : [ 1 , 2 ] }\n"},
		{"1 and 1.0", `{"n": 1}`, `{"n": 1.0}`},
		{"exponents", `{"n": 100}`, `{"n": 1e2}`},
		{"exponent and fraction", `{"n": 1}`, `{"n": 10E-1}`},
		{"plus exponent", `{"n": 0.1e+1}`, `{"n": 1}`},
		{"negative zero", `{"n": 0}`, `{"n": -0.0}`},
		{"zero with exponent", `{"n": 0e10}`, `{"n": 0}`},
		{"escapes", `{"s": "é\u0000"}`, `{"s": "\u00e9\u0000"}`},
		{"escaped name", `{"title": 1}`, `{"\u0074itle": 1}`},
		{"slash escape", `{"s": "a/b"}`, `{"s": "a\/b"}`},
		{"absent and null", ``, `null`},
		{"absent and empty", ``, `{}`},
		{"last of a name given twice", `{"a": 1, "a": 2}`, `{"a": 2}`},
		{"huge exponent", `{"n": 1e1000000000000000000000}`, `{"n": 10e999999999999999999999}`},
	}
	for _, tc := range same {
		a, err := fingerprint("t", json.RawMessage(tc.a))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, err := fingerprint("t", json.RawMessage(tc.b))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if a != b {
			t.Errorf("%s: %s and %s differ", tc.name, tc.a, tc.b)
		}
	}
	differ := []struct{ name, a, b string }{
		{"values", `{"a": 1}`, `{"a": 2}`},
		{"beyond float64", `{"n": 9007199254740993}`, `{"n": 9007199254740992}`},
		{"tiny difference", `{"n": 1.0000000000000000000001}`, `{"n": 1}`},
		{"sign", `{"n": 1}`, `{"n": -1}`},
		{"string and number", `{"n": "1"}`, `{"n": 1}`},
		{"array order", `{"a": [1, 2]}`, `{"a": [2, 1]}`},
		{"null and absent member", `{"a": null}`, `{}`},
		{"case", `{"Title": 1}`, `{"title": 1}`},
		{"normalization", `{"s": "é"}`, `{"s": "e\u0301"}`},
		{"nesting", `{"a": [[1]]}`, `{"a": [1]}`},
		{"empty string and null", `{"a": ""}`, `{"a": null}`},
		{"boundaries of names", `{"ab": "c"}`, `{"a": "bc"}`},
		{"empty and null arguments", `[]`, `{}`},
	}
	for _, tc := range differ {
		a, _ := fingerprint("t", json.RawMessage(tc.a))
		b, _ := fingerprint("t", json.RawMessage(tc.b))
		if a == b {
			t.Errorf("%s: %s and %s are the same call", tc.name, tc.a, tc.b)
		}
	}
	a, _ := fingerprint("create_task", json.RawMessage(`{}`))
	b, _ := fingerprint("create_project", json.RawMessage(`{}`))
	if a == b {
		t.Error("two tools with the same arguments are the same call")
	}
	if _, err := fingerprint("t", json.RawMessage(`{"a":`)); err == nil {
		t.Error("arguments that are not JSON have a fingerprint")
	}
}

func TestCanonicalNumber(t *testing.T) {
	for lit, want := range map[string]string{
		"0": "0", "-0": "0", "0.000": "0", "1": "1e0", "1.0": "1e0", "-1.50": "-15e-1",
		"100": "1e2", "0.001": "1e-3", "12.34e2": "1234e0", "5E-3": "5e-3",
	} {
		got, err := canonicalNumber(lit)
		if err != nil || got != want {
			t.Errorf("canonicalNumber(%s) = %q, %v; want %q", lit, got, err, want)
		}
	}
}

// TestCarryParams moves the draft's idempotencyKey into _meta, and marks
// what cannot be moved with certainty, so that the middleware refuses it.
func TestCarryParams(t *testing.T) {
	for _, tc := range []struct {
		name, method, in string
		want             string // the value under IdempotencyKeyMetaKey, or "" for params unchanged
		others           string // a member that must still be there
	}{
		{"moved", "tools/call", `{"name":"t","arguments":{"a":1},"idempotencyKey":"k1"}`, `"k1"`, `"arguments":{"a":1}`},
		{"beside _meta", "tools/call", `{"name":"t","_meta":{"progressToken":3},"idempotencyKey":"k1"}`, `"k1"`, `"progressToken":3`},
		{"escaped member name", "tools/call", `{"name":"t","idempotency\u004bey":"k1"}`, `"k1"`, `"name":"t"`},
		{"null _meta", "tools/call", `{"name":"t","_meta":null,"idempotencyKey":"k1"}`, `"k1"`, ``},
		{"same key in _meta", "tools/call", `{"name":"t","_meta":{"io.github.mcpeffect/idempotency-key":"k1"},"idempotencyKey":"k1"}`, `"k1"`, ``},
		{"a number", "tools/call", `{"name":"t","idempotencyKey":7}`, `7`, ``},
		{"given twice", "tools/call", `{"name":"t","idempotencyKey":"a","idempotencyKey":"b"}`, `{"invalid":"params.idempotencyKey is given twice"}`, ``},
		{"differs from _meta", "tools/call", `{"name":"t","_meta":{"io.github.mcpeffect/idempotency-key":"a"},"idempotencyKey":"b"}`,
			`{"invalid":"params.idempotencyKey and params._meta.io.github.mcpeffect/idempotency-key differ"}`, ``},
		{"_meta twice", "tools/call", `{"name":"t","_meta":{},"_meta":{},"idempotencyKey":"a"}`, `{"invalid":"params._meta is given twice"}`, ``},
		{"_meta not an object", "tools/call", `{"name":"t","_meta":[],"idempotencyKey":"a"}`, `{"invalid":"params._meta is not an object"}`, ``},
		{"no key", "tools/call", `{"name":"t","arguments":{"idempotencyKey":"inside the arguments"}}`, ``, ``},
		{"not an object", "tools/call", `["idempotencyKey"]`, ``, ``},
		{"another method", "tools/list", `{"idempotencyKey":"k"}`, ``, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := carryParams(tc.method, json.RawMessage(tc.in))
			if tc.want == "" {
				if string(out) != tc.in {
					t.Fatalf("carryParams changed %s into %s", tc.in, out)
				}
				return
			}
			var p struct {
				Key  *json.RawMessage           `json:"idempotencyKey"`
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			if err := json.Unmarshal(out, &p); err != nil {
				t.Fatalf("carryParams: %s: %v", out, err)
			}
			if p.Key != nil {
				t.Errorf("params.idempotencyKey is still there: %s", out)
			}
			if got := string(p.Meta[IdempotencyKeyMetaKey]); got != tc.want {
				t.Errorf("_meta key = %s, want %s (params %s)", got, tc.want, out)
			}
			if tc.others != "" && !strings.Contains(string(out), tc.others) {
				t.Errorf("params %s lost %s", out, tc.others)
			}
		})
	}
	// initialize and server/discover are marked, whatever their _meta.
	for _, in := range []string{`{"protocolVersion":"2025-11-25"}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`} {
		out := carryParams("initialize", json.RawMessage(in))
		if !strings.Contains(string(out), `"io.github.mcpeffect/idempotency-carried":true`) {
			t.Errorf("initialize %s not marked: %s", in, out)
		}
	}
}

// TestCarryBody carries the key of each message of an HTTP body, a batch
// included, and leaves a body without one byte for byte.
func TestCarryBody(t *testing.T) {
	plain := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}`
	if out, changed := carryBody([]byte(plain)); changed || string(out) != plain {
		t.Errorf("a body without a key: %s, %t", out, changed)
	}
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","idempotencyKey":"a"}},` +
		`{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","idempotencyKey":"b"}}]`
	out, changed := carryBody([]byte(batch))
	if !changed {
		t.Fatal("a batch with keys is unchanged")
	}
	var msgs []struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(out, &msgs); err != nil || len(msgs) != 3 {
		t.Fatalf("carried batch %s: %v", out, err)
	}
	for i, want := range []string{`{"io.github.mcpeffect/idempotency-key":"a"}`, ``, `{"io.github.mcpeffect/idempotency-key":"b"}`} {
		if got := string(msgs[i].Params["_meta"]); got != want {
			t.Errorf("message %d: _meta %s, want %s", i, got, want)
		}
	}
	dup := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","idempotencyKey":"a"},"params":{"name":"u"}}`
	if out, changed := carryBody([]byte(dup)); changed || string(out) != dup {
		t.Errorf("a message with its params twice was changed: %s", out)
	}
}

// BenchmarkMiddlewareNoKey measures, without transports, what a call
// without a key pays when the options have Idempotency: the carrier's
// look at its params (carryParams) and the middleware's look at its
// _meta, against the same middleware without Idempotency, in blocks
// that alternate as BenchmarkDecisionPaired's do. The handler is a
// function that returns a fixed result.
func BenchmarkMiddlewareNoKey(b *testing.B) {
	r := NewRegistry()
	if err := r.Add("create_task", Write); err != nil {
		b.Fatal(err)
	}
	result := &mcp.CallToolResult{}
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return result, nil }
	plain := r.Enforcer(nil).Middleware()(next)
	keyed := r.Enforcer(&MiddlewareOptions{Idempotency: &IdempotencyOptions{}}).Middleware()(next)
	ctx := WithConnectionScope(context.Background(), Full)
	params := json.RawMessage(`{"name":"create_task","arguments":{"title":"ship v2","due":"2026-09-01","priority":2}}`)
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "create_task", Arguments: json.RawMessage(`{"title":"ship v2","due":"2026-09-01","priority":2}`)}}
	b.ReportAllocs()
	var spent [2]time.Duration
	var carried json.RawMessage
	for round := 0; b.Loop(); round++ {
		for k := range 2 {
			which := (k + round) % 2
			start := time.Now()
			for range pairedBlockSize {
				var err error
				if which == 0 {
					_, err = plain(ctx, methodCallTool, req)
				} else {
					carried = carryParams(methodCallTool, params)
					_, err = keyed(ctx, methodCallTool, req)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			spent[which] += time.Since(start)
		}
	}
	if len(carried) != len(params) {
		b.Fatalf("the params without a key were changed: %s", carried)
	}
	calls := float64(b.N) * pairedBlockSize
	b.ReportMetric(float64(spent[0].Nanoseconds())/calls, "baseline-ns/call")
	b.ReportMetric(float64(spent[1].Nanoseconds())/calls, "no-key-ns/call")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "ratio")
}

// TestKeptErrorFits: the error kept in place of an answer that could not
// be kept fits in what the memory store reserves at the claim, whatever
// the key and the store's error hold.
func TestKeptErrorFits(t *testing.T) {
	key := strings.Repeat("\x01", MaxIdempotencyKeyBytes)
	store := NewMemoryIdempotencyStore(1, memoryRecordOverhead+memoryOutcomeReserve)
	i := newIdempotency(&IdempotencyOptions{Store: store})
	call, _, ie := i.begin(context.Background(), "t", nil, key, "caller")
	if ie != nil {
		t.Fatal(ie)
	}
	if err := call.keep(context.Background(), IdempotencyResultNotKept, strings.Repeat("\u202e\x00", 1000)); err != nil {
		t.Fatalf("the kept error does not fit: %v", err)
	}
}
