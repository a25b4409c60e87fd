package mcpeffect

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// CodeDenied is the JSON-RPC error code of a tools/call refused by
// [Registry.Middleware]. The error's data is a [Denial] in JSON. It is in
// the range JSON-RPC leaves to servers, clear of the codes that go-sdk and
// the MCP specification use.
const CodeDenied = -32050

// A Denial describes a refused tools/call. It is the data of the JSON-RPC
// error the caller receives; [AsDenial] reads it back on the client.
type Denial struct {
	// Tool is the tool that was called.
	Tool string `json:"tool"`
	// Classified is false for a tool the registry does not know, which
	// no scope may call.
	Classified bool `json:"classified"`
	// Required is the least scope that may call the tool, and
	// RequiredScope the scope string that grants it. Both are empty for a
	// tool that is not classified.
	Required      Scope  `json:"required"`
	RequiredScope string `json:"requiredScope,omitempty"`
	// Granted is the scope the caller has.
	Granted Scope `json:"granted"`
}

// Error says in plain words which tool was refused, which scope it needs
// and which scope the caller has.
func (d *Denial) Error() string {
	if !d.Classified {
		return fmt.Sprintf("mcpeffect: tool %q is refused: it has no effect classification, so no scope may call it", d.Tool)
	}
	return fmt.Sprintf("mcpeffect: tool %q is refused: it needs the %s scope (%q), and the caller has %s",
		d.Tool, d.Required, d.RequiredScope, describeGranted(d.Granted))
}

func describeGranted(s Scope) string {
	if s == 0 {
		return "no scope"
	}
	return "only " + s.String()
}

// AsDenial reports whether err, as returned by a client's CallTool, is a
// refusal by [Registry.Middleware], and if so returns its [Denial].
func AsDenial(err error) (*Denial, bool) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeDenied || len(je.Data) == 0 {
		return nil, false
	}
	var d Denial
	if json.Unmarshal(je.Data, &d) != nil || d.Tool == "" {
		return nil, false
	}
	return &d, true
}

func (r *Registry) denial(name string, granted Scope, names ScopeNames) *Denial {
	d := &Denial{Tool: name, Granted: granted}
	if need, ok := r.Required(name); ok {
		d.Classified = true
		d.Required = need
		d.RequiredScope = names.Name(need)
	}
	return d
}

func (d *Denial) rpcError() *jsonrpc.Error {
	data, err := json.Marshal(d)
	if err != nil {
		// A Denial holds strings and valid scopes only.
		panic(err)
	}
	return &jsonrpc.Error{Code: CodeDenied, Message: d.Error(), Data: data}
}
