package mcpeffect

import (
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The kinds of error of [Registry.Add], for [errors.Is]: each error it
// returns wraps one of them, and its text names the tool and the rule
// broken, such as
//
//	mcpeffect: tool "delete_task": Read cannot be combined with Destructive
var (
	// ErrInvalidToolName: the name is not a valid MCP tool name (see
	// [ValidateToolName]).
	ErrInvalidToolName = errors.New("mcpeffect: invalid tool name")
	// ErrInvalidEffect: the effect is not one a tool can have (see
	// [Effect.Valid]). [ParseEffect] and [Effect.MarshalText] wrap it too.
	ErrInvalidEffect = errors.New("mcpeffect: invalid effect")
	// ErrAlreadyClassified: the tool has a classification already, which
	// stays.
	ErrAlreadyClassified = errors.New("mcpeffect: tool already classified")
)

// A ruleError says which rule was broken, and wraps the kind of error it is
// (one of the Err variables) without repeating that kind's text.
type ruleError struct {
	kind error
	text string
}

func (e *ruleError) Error() string { return e.text }
func (e *ruleError) Unwrap() error { return e.kind }

func ruleErrorf(kind error, format string, args ...any) error {
	return &ruleError{kind: kind, text: fmt.Sprintf(format, args...)}
}

// CodeNotEnforced is the JSON-RPC error code with which a tool, resource
// or prompt added with [AddTool] and the others refuses a request that no
// middleware of this package let through: the server classifies what it
// serves but enforces nothing, so nothing runs, and the message says how
// to install the middleware. It is in the range JSON-RPC leaves to
// servers, beside [CodeDenied].
const CodeNotEnforced = -32052

// notEnforced returns the error of a handler that the middleware did not
// let through: what (`tool "x"`) was not done (run, read).
func notEnforced(what, done string) error {
	return &jsonrpc.Error{
		Code: CodeNotEnforced,
		Message: fmt.Sprintf("mcpeffect: %s was not %s: the server has no mcpeffect middleware, so nothing checked the caller's scope; "+
			"install it with server.AddReceivingMiddleware(registry.Middleware(opts))", what, done),
	}
}
