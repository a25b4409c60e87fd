package effectproof

import (
	"encoding/json"
	"fmt"

	"github.com/mcpeffect/mcpeffect"
)

// An UndoTrial is the check that a tool's undo, the recovery it publishes
// (SEP-3172, see [mcpeffect.Recovery]), restores what a call of it
// changed: on a state of its own, apart from the [Trial] of the same
// example, so that neither sees the other's calls. Its fixtures are made,
// and its session opened, before it runs.
type UndoTrial struct {
	// At names the tool and the example, as a Trial's does.
	At string
	// Tool and Example are the names its messages give.
	Tool, Example string
	// Recovery is the undo the tool publishes: the call to make.
	Recovery mcpeffect.Recovery
	// Request is the arguments of the example's call, a JSON object:
	// what $request.body reads.
	Request json.RawMessage
	// Capture captures the state, in canonical form, with what the
	// examples leave out left out, as a Trial's does.
	Capture func() (Snapshot, error)
	// Call calls the tool with Request, and returns the structured
	// content of its result, what $response.body reads (nil for a result
	// without it), and the text of the error it met, or "" if it
	// succeeded.
	Call func() (response json.RawMessage, failure string)
	// Undo calls the undo, the tool Recovery names, with args, a JSON
	// object, and returns the text of the error it met, or "".
	Undo func(args json.RawMessage) string
}

// An UndoResult is what an undo trial came to.
type UndoResult struct {
	// Failure, if not "", says why the undo cannot be judged, starting
	// with the trial's At: a capture failed, the call did not reach the
	// tool's work or changed nothing, the undo could not be bound from
	// the call or its call failed.
	Failure string
	// CaptureErr is the error of the capture that failed, if one did.
	CaptureErr error
	// Changed is what the call changed: nil if it was not measured, not
	// nil (and maybe empty) if it was.
	Changed []Change
	// Arguments are the undo's, bound from the call, once bound.
	Arguments json.RawMessage
	// Restored says that, after the undo, the state was the state before
	// the call.
	Restored bool
	// Lie says that it was not: the undo left the state changed, each
	// record and field of Lie.Changes from its value before the call
	// (Before) to its value after the undo (After). Its rule is "undo",
	// its When "its undo".
	Lie *Lie
}

// ProveUndo runs an undo trial: it captures the state, calls the tool,
// captures the state, binds the undo's arguments from the call's request
// and response ([mcpeffect.Recovery.Bind]), calls the undo, captures the
// state a third time, and holds it equal to the state before the call.
// A call that changed nothing proves nothing of its undo, and fails the
// trial; so does an undo that cannot be bound, which, as the draft says,
// no one should call for that call.
func ProveUndo(u UndoTrial) (r UndoResult) {
	var snaps [3]Snapshot
	capture := func(i int) bool {
		s, err := u.Capture()
		if err != nil {
			r.CaptureErr = err
			r.Failure = fmt.Sprintf("%s: checking its undo, capturing the state: %v", u.At, err)
			return false
		}
		snaps[i] = s
		return true
	}
	undo := u.Recovery.CompensatingOperation.OperationID
	if !capture(0) {
		return r
	}
	response, failure := u.Call()
	if failure != "" {
		r.Failure = fmt.Sprintf("%s: checking its undo, the example did not reach the tool's work: %s", u.At, failure)
		return r
	}
	if !capture(1) {
		return r
	}
	r.Changed = Diff(snaps[0], snaps[1])
	if len(r.Changed) == 0 {
		r.Changed = []Change{} // measured, and empty
		r.Failure = fmt.Sprintf("%s: checking its undo, %q, the call changed nothing: there is nothing to restore, and nothing proved", u.At, undo)
		return r
	}
	args, err := u.Recovery.Bind(u.Request, response)
	if err != nil {
		r.Failure = fmt.Sprintf("%s: its undo cannot be bound from the call, so no one should call it (SEP-3172): %s", u.At, Printable(err.Error(), MaxShownError))
		return r
	}
	raw, err := json.Marshal(args)
	if err != nil {
		// Bind gives JSON values, which marshal.
		r.Failure = fmt.Sprintf("%s: the arguments of its undo: %v", u.At, err)
		return r
	}
	r.Arguments = raw
	if failure := u.Undo(raw); failure != "" {
		r.Failure = fmt.Sprintf("%s: its undo, %q with %s, failed: %s", u.At, undo, Shown(string(raw)), failure)
		return r
	}
	if !capture(2) {
		return r
	}
	left := Diff(snaps[0], snaps[2])
	if len(left) == 0 {
		r.Restored = true
		return r
	}
	r.Lie = &Lie{When: "its undo", Rule: "undo", Changes: left, Message: fmt.Sprintf(
		"tool %q publishes %q as its undo, but in example %q, %q called with %s after the call did not restore the state the call changed (before the call → after the undo):%s",
		u.Tool, undo, u.Example, undo, Shown(string(raw)), Describe(left))}
	return r
}
