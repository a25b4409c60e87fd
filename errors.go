package mcpeffect

import (
	"errors"
	"fmt"
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
