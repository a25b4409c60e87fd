package effectproof

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

func TestAllows(t *testing.T) {
	const (
		read = mcpeffect.Read
		w    = mcpeffect.Write
		wi   = mcpeffect.Idempotent
		d    = mcpeffect.Destructive
		di   = mcpeffect.Destructive | mcpeffect.Idempotent
	)
	for _, tt := range []struct {
		wide, narrow mcpeffect.Effect
		want         bool
	}{
		{read, read, true}, {w, read, true}, {di, read, true},
		{read, w, false}, {read, di, false},
		{w, wi, true}, {wi, w, false}, {d, w, true}, {w, d, false},
		{d, di, true}, {di, d, false}, {di, wi, true}, {wi, di, false},
		{w | mcpeffect.OpenWorld, w, true},
	} {
		if got := Allows(tt.wide, tt.narrow); got != tt.want {
			t.Errorf("Allows(%s, %s) = %t, want %t", tt.wide, tt.narrow, got, tt.want)
		}
	}
}

func TestCallEffect(t *testing.T) {
	byAction := mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{"get": mcpeffect.Read, "set": mcpeffect.Destructive | mcpeffect.Idempotent})
	byFunc := mcpeffect.EffectByFunc(func(struct{}) mcpeffect.Effect { return 0 }, mcpeffect.Read, mcpeffect.Write).EffectRule
	worst := byAction.Worst()
	for _, tt := range []struct {
		name     string
		rule     *mcpeffect.EffectRule
		raw      string
		declared mcpeffect.Effect
		want     bool // an error expected
		effect   mcpeffect.Effect
		failure  string
	}{
		{name: "one effect", raw: `{}`, effect: mcpeffect.Write},
		{name: "one effect, declared", raw: `{}`, declared: mcpeffect.Read, failure: "is set, but the tool has one effect"},
		{name: "selected", rule: byAction, raw: `{"action":"get"}`, effect: mcpeffect.Read},
		{name: "selected and declared alike", rule: byAction, raw: `{"action":"get"}`, declared: mcpeffect.Read, effect: mcpeffect.Read},
		{name: "selected, declared otherwise", rule: byAction, raw: `{"action":"get"}`, declared: worst, failure: "but the tool's rule gives read"},
		{name: "no value", rule: byAction, raw: `{}`, failure: "do not give the effect of the call with certainty"},
		{name: "no value, declared", rule: byAction, raw: `{}`, declared: mcpeffect.Read, effect: mcpeffect.Read},
		{name: "the general form, declared", rule: byFunc, raw: `{"x":1}`, declared: mcpeffect.Write, effect: mcpeffect.Write},
		{name: "the general form, not an outcome", rule: byFunc, raw: `{"x":1}`, declared: mcpeffect.Idempotent, failure: "not one of the outcomes"},
		{name: "an error expected", rule: byFunc, raw: `{}`, want: true, effect: byFunc.Worst()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, failure := CallEffect("at", mcpeffect.Write, tt.rule, json.RawMessage(tt.raw), tt.declared, tt.want, "Example.Effect")
			switch {
			case tt.failure != "":
				if !strings.HasPrefix(failure, "at: ") || !strings.Contains(failure, tt.failure) {
					t.Errorf("failure %q, want one saying %q", failure, tt.failure)
				}
			case failure != "":
				t.Errorf("failure %q, want none", failure)
			case e != tt.effect:
				t.Errorf("effect %s, want %s", e, tt.effect)
			}
		})
	}
}

func TestRuleClaims(t *testing.T) {
	rule := mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
		"get": mcpeffect.Read, "add": mcpeffect.Write, "drop": mcpeffect.Destructive | mcpeffect.Idempotent,
	})
	byEffect := map[mcpeffect.Effect]*Evidence{
		mcpeffect.Read:  {Reached: true},
		mcpeffect.Write: {Reached: true, Changed: true}, // its repeats changed nothing
	}
	claims, missing := RuleClaims("t", rule, byEffect, "Example.Effect")
	if len(claims) != 1 || !strings.Contains(claims[0], `tool "t", with arguments of effect write, is classified write, not idempotent`) {
		t.Errorf("claims = %q, want the one of the outcome add", claims)
	}
	if len(missing) != 1 || !strings.Contains(missing[0], "no example of its outcome write|destructive|idempotent") {
		t.Errorf("missing = %q, want the outcome drop", missing)
	}
}
