package connect

import (
	"encoding/json"
	"strings"
	"testing"
)

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
