// Package refusal is the error of a request that Done refuses: a bad
// argument, a missing record, a change the state or the caller may not
// make. Its message is written for the caller and goes to it as it is;
// any other error is a fault of the server, which Done logs and does not
// show. The store and the connectors both refuse with it (their Error
// types are this one), so that the tools tell the two kinds of error
// apart with one test.
package refusal

import (
	"errors"
	"fmt"
)

// An Error is a request that Done refuses. Its message names the problem
// in words meant for the caller, such as
// `task "0199..." is in the Trash: restore it first`.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

// A Code classifies an [Error].
type Code int

// The codes of an [Error].
const (
	// Invalid is an argument that is malformed or out of bounds, or that
	// names something the caller must not reach.
	Invalid Code = iota + 1
	// NotFound is a reference to something that does not exist.
	NotFound
	// Conflict is a change that the current state forbids, such as closing
	// a blocked task.
	Conflict
	// Forbidden is a change that the caller may not make, whatever its
	// scope, such as an agent approving a task.
	Forbidden
	// Unavailable is a request that the server could not carry out, for
	// a reason the caller may know and act on, such as every source of
	// documents failing: the details of the failure stay in the log.
	Unavailable
)

// New returns an [*Error] of code whose message is format with args, as
// fmt.Sprintf makes it.
func New(code Code, format string, args ...any) error {
	return &Error{code, fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of err if it is or wraps an [*Error], and 0
// otherwise (nil included).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
