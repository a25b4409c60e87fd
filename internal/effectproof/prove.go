package effectproof

import (
	"fmt"
	"slices"

	"github.com/mcpeffect/mcpeffect"
)

// A Trial is one example, as both proofs run it, mcpeffecttest.Verify in
// Go and mcpeffect verify from outside: what its calls are held to, and
// how to capture the state and make the call. Its fixtures are made, and
// its session opened, before it runs.
type Trial struct {
	// At names the tool and the example, and begins every failure:
	// `tool "t", example "e"`.
	At string
	// Tool and Example are the names the messages of lies give.
	Tool, Example string
	// Effect is what the calls are held to: the tool's effect, or, for a
	// tool whose effect depends on its arguments, the outcome of this
	// call (see [CallEffect]).
	Effect mcpeffect.Effect
	// Hints is the effect the tool's hints claim, the worst case hosts
	// decide from. Where it allows less than Effect (see [Allows]), the
	// calls are held to it as well: a call its outcome allows may still
	// make the hints a lie. Zero is Effect.
	Hints mcpeffect.Effect
	// WantError, if not empty, says that both calls must fail with an
	// error whose text holds it, and change nothing.
	WantError string
	// Capture captures the state, in canonical form; it is called while
	// no call runs.
	Capture func() (Snapshot, error)
	// Call calls the tool with the example's arguments, and returns the
	// text of the error it met, a tool error or a protocol error, or ""
	// if it succeeded.
	Call func() string
}

// A Result is what a trial came to.
type Result struct {
	// Failure, if not "", says why the example cannot be judged, starting
	// with the trial's At: a capture failed, the first call did not reach
	// the tool's work, an expected error did not come, or changed the
	// state.
	Failure string
	// CaptureErr is the error of the capture that failed, if one did.
	CaptureErr error
	// Measured is how many calls' changes were measured: 0, 1 (the first
	// call's, in First) or 2 (the repeat's too, in Repeat).
	Measured int
	// First and Repeat are what the first call and the repeat changed.
	First, Repeat []Change
	// RepeatError is the text of the error of the repeat, of an example
	// that expects none: it may fail, as a deletion's does once the
	// record is gone, and is held, as any repeat, to what it changed.
	RepeatError string
	// Refused says that the example expected an error, and both calls
	// failed with it, changing nothing.
	Refused bool
	// Evidence is what the calls of an example that reached the tool's
	// work showed, and Lies every rule of the effect they broke.
	Evidence Evidence
	Lies     []Lie
}

// Prove runs a trial: it captures the state, calls the tool, captures the
// state, calls it again with the same arguments, and captures the state a
// third time; then it judges what each call changed (see [Judge]) or,
// for an example that expects an error, that both calls failed with it
// and changed nothing (see [ExpectedError]).
func Prove(t Trial) (r Result) {
	var snaps [3]Snapshot
	capture := func(i int) bool {
		s, err := t.Capture()
		if err != nil {
			r.CaptureErr = err
			r.Failure = fmt.Sprintf("%s: capturing the state: %v", t.At, err)
			return false
		}
		snaps[i] = s
		return true
	}
	if !capture(0) {
		return r
	}
	firstErr := t.Call()
	if !capture(1) {
		return r
	}
	r.First, r.Measured = Diff(snaps[0], snaps[1]), 1
	if t.WantError != "" {
		if r.Failure = ExpectedError(t.At, t.WantError, firstErr, "first call", r.First); r.Failure != "" {
			return r
		}
		secondErr := t.Call()
		if !capture(2) {
			return r
		}
		r.Repeat, r.Measured = Diff(snaps[1], snaps[2]), 2
		if r.Failure = ExpectedError(t.At, t.WantError, secondErr, "repeat", r.Repeat); r.Failure != "" {
			return r
		}
		r.Refused = true
		return r
	}
	if firstErr != "" {
		r.Failure = fmt.Sprintf("%s: the example did not reach the tool's work: %s", t.At, firstErr)
		return r
	}
	r.RepeatError = t.Call()
	if !capture(2) {
		return r
	}
	r.Repeat, r.Measured = Diff(snaps[1], snaps[2]), 2
	r.Evidence, r.Lies = Judge(t.Tool, t.Example, t.Effect, r.First, r.Repeat)
	if t.Hints != 0 && !Allows(t.Hints, t.Effect) {
		_, more := Judge(t.Tool, t.Example, t.Hints, r.First, r.Repeat)
		for _, l := range more {
			if !slices.ContainsFunc(r.Lies, func(o Lie) bool { return o.Rule == l.Rule && o.When == l.When }) {
				r.Lies = append(r.Lies, l)
			}
		}
	}
	return r
}
