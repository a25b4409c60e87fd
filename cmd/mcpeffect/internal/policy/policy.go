// Package policy writes mcpeffect's decision, for each tool, resource and
// prompt of a server and each scope, as the policy of a gateway that
// decides before the server does: Cedar for ToolHive's authorizer, Rego
// for OPA, CEL for agentgateway. The effects are written into the policy
// (pinned): a gateway that loads it never reads the hints the server
// sends, so a server that changes them after the export changes no
// decision.
//
// Each policy makes exactly the decision of [mcpeffect.Enforcer.Decide]
// for the requests its engine sees, except where its writer's
// documentation says it takes a worst case, which refuses what the
// server would allow, never the reverse. What a gateway passes on without
// a decision stays the server's: a member of the arguments given twice
// (every engine's JSON decoder reads it as one), completions (which
// ToolHive and agentgateway do not authorize), and the resources and
// prompts of a set read from a live server, which does not publish their
// scopes.
package policy

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/manifest"
	"github.com/yosida95/uritemplate/v3"
)

// A Set is what a policy decides: the tools, resources and prompts of a
// server with the scope each requires.
type Set struct {
	// Names are the scope strings of the tokens, as the server's
	// [mcpeffect.ScopeNames] maps them.
	Names mcpeffect.ScopeNames
	Tools []Tool
	// Resources are the resources declared with a scope, by URI;
	// Templates the resource templates, in the order in which mcpeffect
	// tries them ([mcpeffect.Registry.ResourceScope]); Prompts the
	// prompts. Any other resource or prompt requires read-only.
	Resources []Scoped
	Templates []Template
	Prompts   []Scoped
	// Unscoped says that the scopes of the resources and prompts are not
	// known: the set was read from a live server, which does not publish
	// them. The policy then leaves them to the server, letting any
	// caller with a scope through.
	Unscoped bool
	// Source says where the set was read from, for the policy's header.
	Source string
}

// A Tool is one tool of a [Set].
type Tool struct {
	Name   string
	Effect mcpeffect.Effect // the worst case, for a tool whose effect depends on its arguments
	// Argument is set for a tool whose effect depends on the value of one
	// argument ([mcpeffect.EffectByArgument]), and Outcomes for any tool
	// whose effect depends on its arguments: with their values in that
	// form.
	Argument string
	Outcomes []Outcome
	// Computed says that the tool's effect is computed from its
	// arguments by the server's own function ([mcpeffect.EffectByFunc]):
	// no policy can compute it, and every call has the worst case.
	Computed bool
}

// Required is the least scope that may make every call of t.
func (t Tool) Required() mcpeffect.Scope { return t.Effect.Required() }

// An Outcome is the effect of the calls of a tool whose argument has
// Value.
type Outcome struct {
	Value  string
	Effect mcpeffect.Effect
}

// A Scoped is a resource or a prompt, with the scope reading it requires.
type Scoped struct {
	Name     string
	Required mcpeffect.Scope
}

// A Template is a resource template, with the scope reading a resource
// it matches requires, and the regular expression (RE2, anchored) with
// which mcpeffect matches URIs to it.
type Template struct {
	Template string
	Regexp   string
	Required mcpeffect.Scope
}

// FromManifest returns the set of m, with the scope strings names. A
// manifest written from a live server (it has ServerInfo) does not know
// the scopes of the resources and prompts.
func FromManifest(m *manifest.Manifest, names mcpeffect.ScopeNames, source string) (*Set, error) {
	if err := names.Validate(); err != nil {
		return nil, err
	}
	s := &Set{Names: names, Source: source, Unscoped: m.ServerInfo != nil}
	seen := map[string]bool{}
	for _, mt := range m.Tools {
		if seen[mt.Name] {
			return nil, fmt.Errorf("tool %q is listed twice", mt.Name)
		}
		seen[mt.Name] = true
		if !mt.Effect.Valid() {
			return nil, fmt.Errorf("tool %q: effect %v is not valid", mt.Name, mt.Effect)
		}
		t := Tool{Name: mt.Name, Effect: mt.Effect, Argument: mt.Argument}
		if len(mt.Outcomes) > 0 {
			values := map[string]bool{}
			effects := make([]mcpeffect.Effect, 0, len(mt.Outcomes))
			for _, o := range mt.Outcomes {
				if !o.Effect.Valid() {
					return nil, fmt.Errorf("tool %q: outcome %q: effect %v is not valid", mt.Name, o.Value, o.Effect)
				}
				if t.Argument != "" && values[o.Value] {
					return nil, fmt.Errorf("tool %q: the value %q of %q is given twice", mt.Name, o.Value, t.Argument)
				}
				values[o.Value] = true
				t.Outcomes = append(t.Outcomes, Outcome{o.Value, o.Effect})
				effects = append(effects, o.Effect)
			}
			if w := worstOf(effects); w != mt.Effect {
				return nil, fmt.Errorf("tool %q: its effect is %v, but the worst case of its outcomes is %v", mt.Name, mt.Effect, w)
			}
			t.Computed = t.Argument == ""
		}
		s.Tools = append(s.Tools, t)
	}
	slices.SortFunc(s.Tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	for _, r := range m.Resources {
		if !valid(r.Required) {
			return nil, fmt.Errorf("resource %q: scope %v is not valid", r.Name, r.Required)
		}
		if !r.Template {
			s.Resources = append(s.Resources, Scoped{r.Name, r.Required})
			continue
		}
		u, err := uritemplate.New(r.Name)
		if err != nil {
			return nil, fmt.Errorf("resource template %q: %w", r.Name, err)
		}
		s.Templates = append(s.Templates, Template{r.Name, u.Regexp().String(), r.Required})
	}
	slices.SortFunc(s.Resources, func(a, b Scoped) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Templates, func(a, b Template) int { return strings.Compare(a.Template, b.Template) })
	for _, p := range m.Prompts {
		if !valid(p.Required) {
			return nil, fmt.Errorf("prompt %q: scope %v is not valid", p.Name, p.Required)
		}
		s.Prompts = append(s.Prompts, Scoped{p.Name, p.Required})
	}
	slices.SortFunc(s.Prompts, func(a, b Scoped) int { return strings.Compare(a.Name, b.Name) })
	return s, nil
}

func valid(s mcpeffect.Scope) bool { return s >= mcpeffect.ReadOnly && s <= mcpeffect.Full }

// worstOf is the worst case of effects, as mcpeffect computes it for a
// rule: what its tool advertises. The Registry computes it the same way;
// a rule of these effects says so.
func worstOf(effects []mcpeffect.Effect) mcpeffect.Effect {
	return mcpeffect.EffectByFunc(func(struct{}) mcpeffect.Effect { return 0 }, effects...).Worst()
}

// levels are the scopes that may be granted, from least to most.
var levels = []mcpeffect.Scope{mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full}

// granting returns the scope strings that grant s or more: a token with
// any of them may make a call that requires s.
func (s *Set) granting(need mcpeffect.Scope) []string {
	var out []string
	for _, l := range levels {
		if l >= need {
			out = append(out, s.Names.Name(l))
		}
	}
	return out
}

// DependsOnArguments reports whether some calls of t require less than
// its worst case: a policy that cannot read the argument that selects
// them refuses them, where the server would let them through.
func (t Tool) DependsOnArguments() bool {
	for _, o := range t.Outcomes {
		if o.Effect.Required() < t.Required() {
			return true
		}
	}
	return false
}

// narrower returns the outcomes of t that require less than its worst
// case, grouped by the scope they require, from least to most.
func (t Tool) narrower() map[mcpeffect.Scope][]string {
	out := map[mcpeffect.Scope][]string{}
	for _, o := range t.Outcomes {
		if need := o.Effect.Required(); need < t.Required() {
			out[need] = append(out[need], o.Value)
		}
	}
	return out
}

// maxVariants bounds the spellings of an argument's name that a Cedar
// policy lists to tell a call whose arguments name it in another case.
const maxVariants = 256

// foldVariants returns every spelling of name that strings.EqualFold
// takes for it, other than name itself (as mcpeffect reads the argument
// of a rule: a key that differs from it only in case makes the call
// uncertain), and whether there are at most max of them.
func foldVariants(name string, max int) ([]string, bool) {
	spellings := []string{""}
	for _, r := range name {
		orbit := []rune{r}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			orbit = append(orbit, f)
		}
		if len(spellings)*len(orbit) > max+1 {
			return nil, false
		}
		next := make([]string, 0, len(spellings)*len(orbit))
		for _, s := range spellings {
			for _, o := range orbit {
				next = append(next, s+string(o))
			}
		}
		spellings = next
	}
	return slices.DeleteFunc(spellings, func(s string) bool { return s == name }), true
}
