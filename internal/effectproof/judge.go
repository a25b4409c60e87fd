package effectproof

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpeffect/mcpeffect"
)

// Evidence is what the examples of a tool showed, one example's or,
// merged with [Evidence.Merge], several's.
type Evidence struct {
	Reached       bool // a first call succeeded, reaching the tool's work
	Changed       bool // a call changed the state
	Destroyed     bool // a call changed or removed a value that existed
	RepeatChanged bool // a repeat changed the state
}

// Merge adds what other showed to o.
func (o *Evidence) Merge(other Evidence) {
	o.Reached = o.Reached || other.Reached
	o.Changed = o.Changed || other.Changed
	o.Destroyed = o.Destroyed || other.Destroyed
	o.RepeatChanged = o.RepeatChanged || other.RepeatChanged
}

// A Lie is a call whose changes its tool's classification does not allow:
// the message that says so, and the changes that break the rule.
type Lie struct {
	// When is "its first call" or "its repeat", or, for an undo that did
	// not restore the state (see [ProveUndo]), "its undo".
	When string
	// Rule is the rule broken: "read", "non-destructive" or "idempotent",
	// or "undo".
	Rule string
	// Changes are those the rule does not allow, every one of them;
	// Message shows at most MaxShownChanges.
	Changes []Change
	// Message names the tool, the example, and each record and field that
	// changed, with its value before and after.
	Message string
}

// Judge holds the two calls of one example of tool, which reached its
// work, to effect e: first is what the first call changed, second what
// the repeat with the same arguments changed. It returns what the example
// showed and every rule of e the calls broke:
//
//   - a read changes nothing;
//   - a write that is not destructive only adds: records, and values in
//     fields that were empty;
//   - an idempotent write's repeat changes nothing.
func Judge(tool, example string, e mcpeffect.Effect, first, second []Change) (Evidence, []Lie) {
	out := Evidence{
		Reached:       true,
		Changed:       len(first) > 0 || len(second) > 0,
		Destroyed:     slices.ContainsFunc(first, destroys) || slices.ContainsFunc(second, destroys),
		RepeatChanged: len(second) > 0,
	}
	calls := []struct {
		when    string
		changes []Change
	}{{"its first call", first}, {"its repeat", second}}
	var lies []Lie
	switch {
	case e&mcpeffect.Read != 0:
		for _, c := range calls {
			if len(c.changes) > 0 {
				lies = append(lies, Lie{When: c.when, Rule: "read", Changes: c.changes, Message: fmt.Sprintf(
					"tool %q is classified %s, but example %q changed the state on %s, which a read must not:%s",
					tool, e, example, c.when, Describe(c.changes))})
				break
			}
		}
	case e&mcpeffect.Destructive != mcpeffect.Destructive:
		for _, c := range calls {
			if lost := slices.DeleteFunc(slices.Clone(c.changes), adds); len(lost) > 0 {
				lies = append(lies, Lie{When: c.when, Rule: "non-destructive", Changes: lost, Message: fmt.Sprintf(
					"tool %q is classified %s, not destructive, but example %q changed or removed existing values on %s, which only a destructive write may:%s",
					tool, e, example, c.when, Describe(lost))})
				break
			}
		}
	}
	if e&mcpeffect.Idempotent == mcpeffect.Idempotent && len(second) > 0 {
		lies = append(lies, Lie{When: "its repeat", Rule: "idempotent", Changes: second, Message: fmt.Sprintf(
			"tool %q is classified %s, but example %q, repeated with the same arguments, changed the state again, which an idempotent write must not:%s",
			tool, e, example, Describe(second))})
	}
	return out, lies
}

// ExpectedError holds a call of an example that expects an error
// containing want to what it did: got is the text of the error the call
// met ("" if it succeeded), changes what it changed, when which call it
// was ("first call", "repeat"), and at names the tool and example. It
// returns "" if the call failed as expected and changed nothing, and
// otherwise the failure.
func ExpectedError(at, want, got, when string, changes []Change) string {
	switch {
	case got == "":
		return fmt.Sprintf("%s: the example expects an error containing %q, but its %s succeeded", at, want, when)
	case !strings.Contains(got, want):
		return fmt.Sprintf("%s: the example expects an error containing %q, but its %s failed with another: %s", at, want, when, got)
	case len(changes) > 0:
		return fmt.Sprintf("%s: its %s failed, as expected, but changed the state, which a refused call must not:%s", at, when, Describe(changes))
	}
	return ""
}

// Unshown returns what effect e of tool claims that the examples, whose
// evidence merged is all, did not show: a write that changed nothing, a
// destructive write that destroyed nothing, a write that is not
// idempotent whose repeats changed nothing. Hosts ask people before such
// calls for nothing. what qualifies the tool's calls, for a tool whose
// effect depends on its arguments; it is "" otherwise. A read claims
// nothing.
func Unshown(tool string, e mcpeffect.Effect, what string, all Evidence) []string {
	if e&mcpeffect.Write == 0 {
		return nil
	}
	var claims []string
	switch {
	case !all.Changed:
		claims = append(claims, fmt.Sprintf("tool %q%s is classified %s, but no example changed anything: "+
			"either the examples do not reach its write or it is a read", tool, what, e))
	default:
		if e&mcpeffect.Destructive == mcpeffect.Destructive && !all.Destroyed {
			claims = append(claims, fmt.Sprintf("tool %q%s is classified %s, but no example changed or removed an existing value: "+
				"hosts will ask people before calls that destroy nothing", tool, what, e))
		}
		if e&mcpeffect.Idempotent != mcpeffect.Idempotent && !all.RepeatChanged {
			claims = append(claims, fmt.Sprintf("tool %q%s is classified %s, not idempotent, but no example's repeat changed anything: "+
				"hosts will warn people against retrying calls that are safe to retry", tool, what, e))
		}
	}
	return claims
}

func destroys(c Change) bool { return c.Kind.Destroys() }
func adds(c Change) bool     { return !c.Kind.Destroys() }
