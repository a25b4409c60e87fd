package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

// TestLineWriter checks the writer of Listen and Handler: whatever the
// chunks mcp-go writes in, every byte goes out, in order, and the one
// error recorded as a refusal goes out with its code and data instead.
func TestLineWriter(t *testing.T) {
	d := &mcpeffect.DeniedError{Tool: "delete_task", Classified: true, Required: mcpeffect.Full, RequiredScopeName: "tools:destructive", Granted: mcpeffect.ReadOnly}
	code, msg, data := d.JSONRPCError()
	internal := func(id int, message string) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": message}})
		return string(b) + "\n"
	}
	result := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"error\": not one"}]}}` + "\n"
	long := `{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"` + strings.Repeat("x", maxLine) + `"}}` + "\n"
	for _, c := range []struct {
		name     string
		recorded bool
		in       string
		rewrote  bool
	}{
		{"a result", true, result, false},
		{"the refusal", true, internal(2, msg), true},
		{"the refusal over SSE", true, "event: message\ndata: " + internal(2, msg) + "\n", true},
		{"the same words, not recorded", false, internal(3, msg), false},
		{"another internal error", true, internal(4, "mcpeffect: something else"), false},
		{"an overlong line", true, long, false},
		{"not JSON", true, "data: {\"error\" \n", false},
	} {
		for _, chunk := range []int{1, 7, 1 << 20} {
			rs := new(refusals)
			if c.recorded {
				record(withRefusals(context.Background(), rs), &refusal{wire: rpcError{Code: int(code), Message: msg, Data: data}})
			}
			var out bytes.Buffer
			w := &lineWriter{rs: rs, write: out.Write}
			for in := c.in; in != ""; {
				n := min(chunk, len(in))
				if _, err := w.Write([]byte(in[:n])); err != nil {
					t.Fatal(err)
				}
				in = in[n:]
			}
			got := out.String()
			if !c.rewrote {
				if got != c.in {
					t.Errorf("%s, chunks of %d: wrote %.200q, want it as it was", c.name, chunk, got)
				}
				continue
			}
			if strings.Contains(got, "-32603") || !strings.Contains(got, `"code":-32050`) || !strings.Contains(got, `"requiredScopeName":"tools:destructive"`) || !strings.HasSuffix(got, "\n") {
				t.Errorf("%s, chunks of %d: wrote %q, want the refusal with its code and data", c.name, chunk, got)
			}
			if !rs.empty() {
				t.Errorf("%s: the refusal is still pending after it was written", c.name)
			}
		}
	}
}

// TestRefusalsBounded checks that refusals never written do not pile up
// without end.
func TestRefusalsBounded(t *testing.T) {
	rs := new(refusals)
	ctx := withRefusals(context.Background(), rs)
	for i := range maxPending + 100 {
		record(ctx, &refusal{wire: rpcError{Code: -32050, Message: strings.Repeat("m", i%7)}})
	}
	if rs.n != maxPending {
		t.Errorf("%d refusals pending, want at most %d", rs.n, maxPending)
	}
}
