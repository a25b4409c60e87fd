package effectproof

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcpeffect/mcpeffect"
)

// CallEffect returns the effect that one example's call of a tool is held
// to, or, as its second result, why the example cannot be judged: a
// message that begins with at.
//
// e is the tool's effect and rule its rule, nil for a tool of one effect,
// whose calls are all held to e. For a tool with a rule, the call is held
// to the outcome its arguments raw select (see
// [mcpeffect.EffectRule.CallEffect]); where they do not select one with
// certainty, as in the general form, to declared, the effect the example
// says its call has, which must then be one of the rule's outcomes and,
// where the arguments give one, that one. A call expected to fail
// (wantError) changes nothing whatever its effect. field names where an
// example declares its effect, for the messages ("Example.Effect").
func CallEffect(at string, e mcpeffect.Effect, rule *mcpeffect.EffectRule, raw json.RawMessage, declared mcpeffect.Effect, wantError bool, field string) (mcpeffect.Effect, string) {
	switch {
	case rule == nil && declared != 0:
		return e, fmt.Sprintf("%s: %s is set, but the tool has one effect, %s: leave it unset", at, field, e)
	case rule == nil:
		return e, ""
	}
	got, certain := rule.CallEffect(raw)
	switch {
	case wantError:
		if declared != 0 {
			got = declared
		}
		return got, ""
	case declared == 0 && !certain:
		return e, fmt.Sprintf("%s: the example's arguments %s do not give the effect of the call with certainty (see EffectRule.CallEffect): set %s", at, Shown(string(raw)), field)
	case declared == 0:
		return got, ""
	case certain && got != declared:
		return e, fmt.Sprintf("%s: %s says %s, but the tool's rule gives %s for the arguments %s", at, field, declared, got, Shown(string(raw)))
	case !slices.ContainsFunc(rule.Outcomes(), func(o mcpeffect.Outcome) bool { return o.Effect == declared }):
		return e, fmt.Sprintf("%s: %s is %s, which is not one of the outcomes the tool's rule declares (%s)", at, field, declared, rule)
	}
	return declared, ""
}

// RuleClaims returns, for a tool with rule, what each of the rule's
// outcomes claims that the examples held to it did not show (see
// [Unshown]), and, in missing, a failure for each outcome that no example
// held to it reached. byEffect holds the examples' evidence merged by the
// effect they were held to. field is as for [CallEffect].
func RuleClaims(tool string, rule *mcpeffect.EffectRule, byEffect map[mcpeffect.Effect]*Evidence, field string) (claims, missing []string) {
	var effects []mcpeffect.Effect
	for _, o := range rule.Outcomes() {
		if !slices.Contains(effects, o.Effect) {
			effects = append(effects, o.Effect)
		}
	}
	for _, oe := range effects {
		all := byEffect[oe]
		if all == nil || !all.Reached {
			missing = append(missing, fmt.Sprintf("tool %q has no example of its outcome %s that reaches its work: give one, with %s set in the general form", tool, oe, field))
			continue
		}
		claims = append(claims, Unshown(tool, oe, fmt.Sprintf(", with arguments of effect %s,", oe), *all)...)
	}
	return claims, missing
}

// Allows reports whether effect wide allows every change that effect
// narrow allows: then a call that breaks wide's rules breaks narrow's
// too. It is the order of [mcpeffect.Effect.Within] on what the effects
// allow the state, where reaching an open world changes nothing.
func Allows(wide, narrow mcpeffect.Effect) bool {
	return (narrow &^ mcpeffect.OpenWorld).Within(wide &^ mcpeffect.OpenWorld)
}
