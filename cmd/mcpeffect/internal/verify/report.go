package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/mcpeffect/mcpeffect/internal/effectproof"
)

// A Verdict is what the examples of a tool proved of its hints.
type Verdict string

// The verdicts.
const (
	// Proven: every example did what the hints allow, and together they
	// showed all the hints claim (or what they did not show is waived).
	Proven Verdict = "proven"
	// Lie: a call did what the hints say the tool does not.
	Lie Verdict = "lie"
	// Overcautious: the hints claim more than any example showed, such as
	// a destructive tool that never destroyed anything.
	Overcautious Verdict = "over-cautious"
	// Failed: an example could not be run as written (a fixture failed,
	// the call failed, an expected error did not come).
	Failed Verdict = "failed"
	// NotExamined: the tool has no example.
	NotExamined Verdict = "not examined"
)

// What one example came to, its Result.
const (
	ResultShown   = "shown"   // its calls did what the hints allow
	ResultLie     = "lie"     // they did not
	ResultRefused = "refused" // it failed, as expected, and changed nothing
	ResultFailed  = "failed"  // it could not be run as written
)

// A Report is what verify found.
type Report struct {
	Server connect.Server `json:"server"`
	// State names the sources of the state, as the examples file gives
	// them: "sqlite {dir}/db".
	State []string     `json:"state,omitempty"`
	Tools []ToolReport `json:"tools"`
	// LeftOut is what the state leaves out as bookkeeping, each with its
	// reason: what the proof cannot see.
	LeftOut []LeaveOut `json:"leftOut"`
	// Flags are the fields whose empty value the state shows as a
	// value, each with its reason.
	Flags []Flag `json:"flags,omitempty"`
	// Problems are mismatches of the examples file and the server, which
	// fail the proof.
	Problems []string `json:"problems,omitempty"`
	// Notes are worth reading, and fail nothing.
	Notes   []string        `json:"notes,omitempty"`
	Summary map[Verdict]int `json:"summary"`
}

// A ToolReport is the verdict on one tool.
type ToolReport struct {
	Name string `json:"name"`
	// Hints are the hints the tool advertises, missing ones absent.
	Hints host.Declared `json:"hints"`
	// Effect is what the hints amount to, as mcpeffect writes effects.
	Effect string `json:"effect,omitempty"`
	// Rule is the rule of the outcomes it publishes, for a tool whose
	// effect depends on its arguments: each example is held to the
	// outcome of its call, and each outcome must be shown.
	Rule    string  `json:"rule,omitempty"`
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
	// Claims are what the hints claim that no example showed.
	Claims []string `json:"claims,omitempty"`
	// Waived is the reason the claims are waived, if they are.
	Waived   string          `json:"waived,omitempty"`
	Examples []ExampleReport `json:"examples,omitempty"`

	missing bool // no example, and not skipped
}

// An ExampleReport is what one example came to.
type ExampleReport struct {
	Name string `json:"name"`
	// Result is shown, lie, refused (an expected error) or failed.
	Result string `json:"result"`
	// Effect is the effect its call was held to, for a tool with a rule:
	// the outcome its arguments select, or the one it declares.
	Effect string `json:"effect,omitempty"`
	// Error says why an example failed.
	Error string `json:"error,omitempty"`
	// RepeatError is the error of the repeat, which may fail, as a
	// deletion's does once the record is gone.
	RepeatError string `json:"repeatError,omitempty"`
	// First and Repeat are what its first call and its repeat changed in
	// the state, each once measured: nil for a call that was not made,
	// or whose state could not be captured.
	First  *CallReport `json:"first,omitempty"`
	Repeat *CallReport `json:"repeat,omitempty"`
	// Undo is the check of the tool's undo, for an example that asks for
	// it (Example Undo): run once the example's calls reached the tool's
	// work.
	Undo *UndoReport `json:"undo,omitempty"`
	Lies []LieReport `json:"lies,omitempty"`
}

// What the check of an undo came to, its Result.
const (
	UndoRestored    = "restored"     // the state was as before the call
	UndoNotRestored = "not restored" // it was not: a lie, among the example's Lies
	UndoFailed      = "failed"       // it could not be checked: its Error says why
)

// An UndoReport is what the check of a tool's undo (SEP-3172) came to:
// on an instance of its own, the example's call, then the undo with its
// arguments bound from the call, and the state held to the one before the
// call.
type UndoReport struct {
	// Tool is the undo the tool publishes.
	Tool string `json:"tool"`
	// Arguments are the undo's, as JSON, bound from the call; absent if
	// they could not be.
	Arguments string `json:"arguments,omitempty"`
	// Result is restored, not restored or failed.
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
	// Call is what the example's call changed on the undo's instance,
	// once measured.
	Call *CallReport `json:"call,omitempty"`
	// Left is what the undo did not restore, for one that did not: each
	// record and field from its value before the call (before) to its
	// value after the undo (after).
	Left *CallReport `json:"left,omitempty"`
}

// A CallReport is what one call changed in the state.
type CallReport struct {
	// Count is how many records and fields it changed; 0 is a call that
	// changed nothing.
	Count int `json:"count"`
	// Destroyed says it changed or removed a value that existed, among
	// all its changes, those shown or not.
	Destroyed bool `json:"destroyed,omitempty"`
	// Changes are the first of them, at most effectproof.MaxShownChanges,
	// by record and field.
	Changes []ChangeReport `json:"changes,omitempty"`
}

func callReport(changes []effectproof.Change) *CallReport {
	c := &CallReport{Count: len(changes), Destroyed: slices.ContainsFunc(changes, func(c effectproof.Change) bool { return c.Kind.Destroys() })}
	for _, ch := range changes[:min(len(changes), effectproof.MaxShownChanges)] {
		c.Changes = append(c.Changes, changeReport(ch))
	}
	return c
}

// String says in one line what the call changed, showing at most max of
// its changes: "nothing", or the changes separated by "; ".
func (c *CallReport) String(max int) string {
	if c.Count == 0 {
		return "nothing"
	}
	var parts []string
	for _, ch := range c.Changes[:min(len(c.Changes), max)] {
		parts = append(parts, ch.String())
	}
	if more := c.Count - len(parts); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}

// A LieReport is one rule of the hints that a call broke, or an undo
// that did not restore what the call changed.
type LieReport struct {
	// Rule is read, non-destructive or idempotent; or undo.
	Rule string `json:"rule"`
	// When is the call: its first call or its repeat; or its undo.
	When    string         `json:"when"`
	Message string         `json:"message"`
	Changes []ChangeReport `json:"changes"`
}

// A ChangeReport is one record or field changed: values as JSON, made
// printable and cut as the text shows them; "empty" for none.
type ChangeReport struct {
	Kind   string `json:"kind"`
	Record string `json:"record"`
	Field  string `json:"field,omitempty"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// String describes the change as a failure does: record "k", field
// "f": before → after.
func (c ChangeReport) String() string {
	switch c.Kind {
	case effectproof.RecordAdded.String():
		return fmt.Sprintf("record %q added: %s", c.Record, c.After)
	case effectproof.RecordRemoved.String():
		return fmt.Sprintf("record %q removed; it was %s", c.Record, c.Before)
	}
	return fmt.Sprintf("record %q, field %q: %s → %s", c.Record, c.Field, c.Before, c.After)
}

func changeReport(c effectproof.Change) ChangeReport {
	return ChangeReport{
		Kind:   c.Kind.String(),
		Record: effectproof.Printable(c.Key, effectproof.MaxShownValue),
		Field:  effectproof.Printable(c.Field, effectproof.MaxShownValue),
		Before: effectproof.Shown(c.Before),
		After:  effectproof.Shown(c.After),
	}
}

func (r *Report) count() {
	r.Summary = map[Verdict]int{}
	for _, t := range r.Tools {
		r.Summary[t.Verdict]++
	}
}

// Tool returns the report on the tool called name, or nil.
func (r *Report) Tool(name string) *ToolReport {
	for i := range r.Tools {
		if r.Tools[i].Name == name {
			return &r.Tools[i]
		}
	}
	return nil
}

// Failing reports whether the proof failed: a tool that is not proven,
// other than one skipped with a reason, or a problem.
func (r *Report) Failing() bool {
	if len(r.Problems) > 0 {
		return true
	}
	for _, t := range r.Tools {
		switch {
		case t.Verdict == NotExamined && !t.missing:
		case t.Verdict != Proven:
			return true
		}
	}
	return false
}
