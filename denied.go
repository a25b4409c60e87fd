package mcpeffect

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// CodeDenied is the JSON-RPC error code of a tools/call refused by
// [Registry.Middleware]. The error's data is a [DeniedError] in JSON. It is in
// the range JSON-RPC leaves to servers, clear of the codes that go-sdk and
// the MCP specification use.
const CodeDenied = -32050

// A DeniedError describes a tools/call refused by [Registry.Middleware].
// It is the data of the JSON-RPC error the caller receives, and
// [AsDeniedError] reads it back on the client; [MiddlewareOptions] OnDenied
// sees it on the server.
type DeniedError struct {
	// Tool is the tool that was called.
	Tool string `json:"tool"`
	// Classified is false for a tool the registry does not know, which
	// no scope may call.
	Classified bool `json:"classified"`
	// Required is the least scope that may call the tool, and
	// RequiredScopeName the scope string that grants it. Both are empty for
	// a tool that is not classified.
	Required          Scope  `json:"required"`
	RequiredScopeName string `json:"requiredScopeName,omitempty"`
	// Granted is the scope the caller has.
	Granted Scope `json:"granted"`
}

// Error says in plain words which tool was refused, which scope it needs
// and which scope the caller has.
func (d *DeniedError) Error() string {
	if !d.Classified {
		return fmt.Sprintf("mcpeffect: tool %q is refused: it has no effect classification, so no scope may call it", d.Tool)
	}
	return fmt.Sprintf("mcpeffect: tool %q is refused: it needs the %s scope (%q), and the caller has %s",
		d.Tool, d.Required, d.RequiredScopeName, describeGranted(d.Granted))
}

func describeGranted(s Scope) string {
	if s == 0 {
		return "no scope"
	}
	return "only " + s.String()
}

// AsDeniedError reports whether err, as returned by a client's CallTool, is
// a refusal by [Registry.Middleware], and if so returns its [DeniedError].
// Any other error, nil included, gives nil and false.
func AsDeniedError(err error) (*DeniedError, bool) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeDenied || len(je.Data) == 0 {
		return nil, false
	}
	var d DeniedError
	if json.Unmarshal(je.Data, &d) != nil || d.Tool == "" {
		return nil, false
	}
	return &d, true
}

func (r *Registry) denial(name string, granted Scope, names ScopeNames) *DeniedError {
	d := &DeniedError{Tool: name, Granted: granted}
	if need, ok := r.Required(name); ok {
		d.Classified = true
		d.Required = need
		d.RequiredScopeName = names.Name(need)
	}
	return d
}

func (d *DeniedError) rpcError() *jsonrpc.Error {
	data, err := json.Marshal(d)
	if err != nil {
		// A DeniedError holds strings and valid scopes only.
		panic(err)
	}
	return &jsonrpc.Error{Code: CodeDenied, Message: d.Error(), Data: data}
}
