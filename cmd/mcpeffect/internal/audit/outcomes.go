package audit

import (
	"fmt"
	"strings"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
)

// OutcomeName names an outcome o of t for people: action="get", or,
// in the general form, calls of effect write.
func (t Tool) OutcomeName(o connect.PublishedOutcome) string {
	return outcomeName(t.Argument, mcpeffect.Outcome{Value: o.Value, Effect: o.Effect})
}

// widerAxes returns the hints on which a call of effect e may do more
// than a tool of effect bound says its calls may, such as
// ["destructiveHint"], or none.
func widerAxes(e, bound mcpeffect.Effect) []string {
	var out []string
	for _, a := range axes {
		if a.wide(e) && !a.wide(bound) {
			out = append(out, a.hint)
		}
	}
	return out
}

// checkOutcomes returns the findings about the outcomes t publishes: one
// if they cannot be read (err), or one naming each outcome wider than
// the tool's hints.
func checkOutcomes(t Tool, err error) []Finding {
	if err != nil {
		return []Finding{{Tool: t.Name, Level: RuleOutcomesMalformed.Level(), Rule: RuleOutcomesMalformed,
			Message: fmt.Sprintf("the outcomes it publishes in _meta %q cannot be read: %v; they are not shown", mcpeffect.OutcomesMetaKey, err)}}
	}
	var wider []string
	for _, o := range t.Outcomes {
		if w := widerAxes(o.Effect, t.Effect); len(w) > 0 {
			what := "some calls are"
			if t.Argument != "" {
				what = t.OutcomeName(o) + " is"
			}
			wider = append(wider, fmt.Sprintf("%s %s (beyond %s)", what, o.Effect, strings.Join(w, ", ")))
		}
	}
	if len(wider) == 0 {
		return nil
	}
	return []Finding{{Tool: t.Name, Level: RuleOutcomeWider.Level(), Rule: RuleOutcomeWider,
		Message: fmt.Sprintf("its hints say %s, but it publishes outcomes that may do more: %s; hosts decide from the hints, and would not ask as they should",
			t.Effect, strings.Join(wider, "; "))}}
}
