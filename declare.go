package mcpeffect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/yosida95/uritemplate/v3"
)

// The declarations of this file are those of AddResource,
// AddResourceTemplate, AddPrompt, and AddTool with an EffectRule, without
// the go-sdk server: an adapter for another SDK (package mcpgo, for mcp-go) adds the
// resource, prompt or tool to its own server, declares it here, and has
// each operation decided by [Enforcer.Decide].

// DeclareResource declares that reading the resource at uri needs scope
// need, as [AddResource] does. It returns an error if need is not
// ReadOnly, NonDestructive or Full, or if uri is already declared with
// another scope; declaring it again with the same scope changes nothing.
func (r *Registry) DeclareResource(uri string, need Scope) error {
	return r.updateScoped(func(t *scopedTable) error {
		if err := validNeed(fmt.Sprintf("resource %q", uri), need); err != nil {
			return err
		}
		if old, ok := t.resources[uri]; ok && old != need {
			return fmt.Errorf("mcpeffect: resource %q already requires the %s scope", uri, old)
		}
		t.resources[uri] = need
		return nil
	})
}

// DeclareResourceTemplate declares that reading a URI that the resource
// template tmpl (RFC 6570) matches needs scope need, as
// [AddResourceTemplate] does (see [Registry.ResourceScope] for which
// declaration a URI gets). It returns the errors of
// [Registry.DeclareResource], and one for a template that is not valid.
func (r *Registry) DeclareResourceTemplate(tmpl string, need Scope) error {
	parsed, err := uritemplate.New(tmpl)
	if err != nil {
		return fmt.Errorf("mcpeffect: resource template %q is invalid: %w", tmpl, err)
	}
	return r.updateScoped(func(tab *scopedTable) error {
		if err := validNeed(fmt.Sprintf("resource template %q", tmpl), need); err != nil {
			return err
		}
		i, found := slices.BinarySearchFunc(tab.templates, tmpl, func(s scopedTemplate, tmpl string) int { return strings.Compare(s.template, tmpl) })
		if found {
			if old := tab.templates[i].need; old != need {
				return fmt.Errorf("mcpeffect: resource template %q already requires the %s scope", tmpl, old)
			}
			return nil
		}
		tab.templates = slices.Insert(tab.templates, i, scopedTemplate{tmpl, parsed.Regexp(), need})
		return nil
	})
}

// DeclarePrompt declares that getting the prompt called name needs scope
// need, as [AddPrompt] does. It returns the errors of
// [Registry.DeclareResource], for the prompt.
func (r *Registry) DeclarePrompt(name string, need Scope) error {
	return r.updateScoped(func(t *scopedTable) error {
		if err := validNeed(fmt.Sprintf("prompt %q", name), need); err != nil {
			return err
		}
		if old, ok := t.prompts[name]; ok && old != need {
			return fmt.Errorf("mcpeffect: prompt %q already requires the %s scope", name, old)
		}
		t.prompts[name] = need
		return nil
	})
}

// AddRule classifies the tool called name by rule, an effect that
// depends on the arguments (see [EffectRule]), as [AddTool] does with a
// rule:
// [Enforcer.Decide] then computes the effect of each call from the raw
// arguments it is given, which must be those the tool's handler acts on.
// It returns the errors of [Registry.Add], and one for a nil rule or one
// that cannot be used; a name already classified by the same rule is
// accepted.
func (r *Registry) AddRule(name string, rule *EffectRule) error {
	if rule == nil {
		return ruleErrorf(ErrInvalidEffect, "mcpeffect: tool %q: nil rule", name)
	}
	return r.addRule(name, &toolRule{rule: rule, raw: true})
}
