package mcpeffect

import (
	"fmt"
	"iter"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/yosida95/uritemplate/v3"
)

// Resources and prompts are read, not called: reading one changes nothing.
// But what they hold may be more than a read-only credential should see,
// so each has a required scope, read-only unless the server says more, and
// the zero Scope reads nothing, as it calls nothing. The registry keeps
// the scopes the server declares with AddResource, AddResourceTemplate and
// AddPrompt; Registry.Middleware enforces them on resources/read and
// prompts/get.

// scopedTable holds the scopes declared for resources and prompts. It is
// never changed once stored, as the table of tools.
type scopedTable struct {
	resources map[string]Scope // by URI
	templates []scopedTemplate // sorted by template, as go-sdk tries them
	prompts   map[string]Scope // by name
}

type scopedTemplate struct {
	template string
	re       *regexp.Regexp
	need     Scope
}

func (r *Registry) scopedTable() *scopedTable {
	if t := r.scoped.Load(); t != nil {
		return t
	}
	return &scopedTable{}
}

// updateScoped replaces the table of resources and prompts with the one
// change returns from a copy of it, or leaves it if change fails.
func (r *Registry) updateScoped(change func(t *scopedTable) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.scopedTable()
	next := &scopedTable{
		resources: maps.Clone(old.resources),
		templates: slices.Clone(old.templates),
		prompts:   maps.Clone(old.prompts),
	}
	if next.resources == nil {
		next.resources = map[string]Scope{}
	}
	if next.prompts == nil {
		next.prompts = map[string]Scope{}
	}
	if err := change(next); err != nil {
		return err
	}
	r.scoped.Store(next)
	return nil
}

// validNeed returns an error if need is not a scope that a resource or a
// prompt may require.
func validNeed(what string, need Scope) error {
	if need < ReadOnly || need > Full {
		return fmt.Errorf("mcpeffect: %s: required scope %s is not one of read-only, non-destructive or full", what, need)
	}
	return nil
}

// ResourceScope returns the least scope that may read the resource at
// uri: that declared with [AddResource] for uri itself, or else that of
// the first template declared with [AddResourceTemplate] that matches it,
// in the order go-sdk tries templates (by their text), or else [ReadOnly].
// It is what [Registry.Middleware] enforces on resources/read.
//
// Declare every resource and template of a server through mcpeffect: a
// resource added with go-sdk alone is not known here, so its URI may match
// a declared template and need that template's scope.
func (r *Registry) ResourceScope(uri string) Scope {
	t := r.scoped.Load()
	if t == nil {
		return ReadOnly
	}
	if need, ok := t.resources[uri]; ok {
		return need
	}
	for _, tmpl := range t.templates {
		if tmpl.re.MatchString(uri) {
			return tmpl.need
		}
	}
	return ReadOnly
}

// templateScope returns the scope declared for the resource template
// tmpl, or ReadOnly.
func (r *Registry) templateScope(tmpl string) Scope {
	t := r.scoped.Load()
	if t == nil {
		return ReadOnly
	}
	i, ok := slices.BinarySearchFunc(t.templates, tmpl, func(s scopedTemplate, tmpl string) int { return strings.Compare(s.template, tmpl) })
	if !ok {
		return ReadOnly
	}
	return t.templates[i].need
}

// PromptScope returns the least scope that may get the prompt called
// name: that declared with [AddPrompt], or [ReadOnly]. It is what
// [Registry.Middleware] enforces on prompts/get.
func (r *Registry) PromptScope(name string) Scope {
	if t := r.scoped.Load(); t != nil {
		if need, ok := t.prompts[name]; ok {
			return need
		}
	}
	return ReadOnly
}

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

// Resources returns every resource declared with [AddResource], with the
// scope reading it requires, sorted by URI.
func (r *Registry) Resources() iter.Seq2[string, Scope] {
	t := r.scopedTable()
	return sortedScopes(t.resources)
}

// ResourceTemplates returns every resource template declared with
// [AddResourceTemplate], with the scope it requires, sorted by template,
// the order in which go-sdk tries them.
func (r *Registry) ResourceTemplates() iter.Seq2[string, Scope] {
	t := r.scopedTable()
	return func(yield func(string, Scope) bool) {
		for _, tmpl := range t.templates {
			if !yield(tmpl.template, tmpl.need) {
				return
			}
		}
	}
}

// Prompts returns every prompt declared with [AddPrompt], with the scope
// getting it requires, sorted by name.
func (r *Registry) Prompts() iter.Seq2[string, Scope] {
	t := r.scopedTable()
	return sortedScopes(t.prompts)
}

func sortedScopes(m map[string]Scope) iter.Seq2[string, Scope] {
	keys := slices.Sorted(maps.Keys(m))
	return func(yield func(string, Scope) bool) {
		for _, k := range keys {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}
