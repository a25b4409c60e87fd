package connect

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDeclaresIdempotency reads capabilities.tools.idempotency (SEP-3182)
// from a handshake's answer as a host built with mcpeffect does: declared
// by any value but null, the draft's being {}; and nothing declared by
// an answer that is not what it should be.
func TestDeclaresIdempotency(t *testing.T) {
	for _, tc := range []struct {
		result string
		want   bool
	}{
		{`{"capabilities": {"tools": {"idempotency": {}}}}`, true},
		{`{"capabilities": {"tools": {"listChanged": true, "idempotency": {"retention": "24h"}}}}`, true},
		{`{"capabilities": {"tools": {"idempotency": null}}}`, false},
		{`{"capabilities": {"tools": {"listChanged": true}}}`, false},
		{`{"capabilities": {"idempotency": {}}}`, false},
		{`{"capabilities": {"tools": []}}`, false},
		{`{"capabilities": "tools"}`, false},
		{`[]`, false},
		{``, false},
	} {
		if got := declaresIdempotency(json.RawMessage(tc.result)); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.result, got, tc.want)
		}
	}
}

// TestReadPageOutputSchema keeps a tool's output schema as sent, and
// refuses a listing whose outputSchema is not an object, as it refuses an
// inputSchema that is not.
func TestReadPageOutputSchema(t *testing.T) {
	tools, _, err := readPage(json.RawMessage(`{"tools": [{"name": "a", "outputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}}}, {"name": "b", "outputSchema": null}]}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(tools[0].OutputSchema); !strings.Contains(got, `"id"`) || !isNull(tools[1].OutputSchema) {
		t.Errorf("output schemas %s and %s", tools[0].OutputSchema, tools[1].OutputSchema)
	}
	_, _, err = readPage(json.RawMessage(`{"tools": [{"name": "a", "outputSchema": "object"}]}`), 1)
	if err == nil || !strings.Contains(err.Error(), `"outputSchema" is a string, want an object`) {
		t.Errorf("a string as outputSchema: %v", err)
	}
}
