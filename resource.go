package mcpeffect

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// AddResource declares that reading res needs scope need, and adds it to
// s with [mcp.Server.AddResource]. Like a tool added with [AddTool], the
// handler runs only behind [Registry.Middleware], which refuses a caller
// whose scope is narrower; it checks again that the caller's scope allows
// need, since it knows which resource is read.
//
// It panics if res or h is nil, if need is not ReadOnly, NonDestructive or
// Full, if the URI is already declared with another scope, and where
// go-sdk panics (an invalid URI).
func AddResource(s *mcp.Server, r *Registry, res *mcp.Resource, need Scope, h mcp.ResourceHandler) {
	if res == nil || h == nil {
		panic("mcpeffect: AddResource: nil resource or handler")
	}
	if err := r.DeclareResource(res.URI, need); err != nil {
		panic(err)
	}
	s.AddResource(res, resourceHandler(fmt.Sprintf("resource %q", res.URI), need, h))
}

// AddResourceTemplate is [AddResource] for a resource template: reading a
// URI that it matches needs scope need, unless a resource declared for
// that URI itself, or a template before it, says otherwise (see
// [Registry.ResourceScope]). It panics where AddResource does, and on a
// template that is not valid.
func AddResourceTemplate(s *mcp.Server, r *Registry, t *mcp.ResourceTemplate, need Scope, h mcp.ResourceHandler) {
	if t == nil || h == nil {
		panic("mcpeffect: AddResourceTemplate: nil template or handler")
	}
	if err := r.DeclareResourceTemplate(t.URITemplate, need); err != nil {
		panic(err)
	}
	s.AddResourceTemplate(t, resourceHandler(fmt.Sprintf("resource template %q", t.URITemplate), need, h))
}

// resourceHandler wraps h, the handler of the resource or template that
// what names, so that it runs only for a caller whose scope allows need.
func resourceHandler(what string, need Scope, h mcp.ResourceHandler) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		info := callerInfo(ctx)
		if info == nil {
			return nil, notEnforced(what, "read")
		}
		if d := info.enf.readDenial(need, info.scope, info.sourced, "", req.Params.URI); d != nil {
			return nil, info.enf.denied(ctx, d)
		}
		return h(ctx, req)
	}
}

// AddPrompt declares that getting prompt p needs scope need, and adds it
// to s with [mcp.Server.AddPrompt], as [AddResource] does for a resource.
// It panics if p or h is nil, if need is not ReadOnly, NonDestructive or
// Full, or if the prompt is already declared with another scope.
func AddPrompt(s *mcp.Server, r *Registry, p *mcp.Prompt, need Scope, h mcp.PromptHandler) {
	if p == nil || h == nil {
		panic("mcpeffect: AddPrompt: nil prompt or handler")
	}
	if err := r.DeclarePrompt(p.Name, need); err != nil {
		panic(err)
	}
	name := p.Name
	s.AddPrompt(p, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		info := callerInfo(ctx)
		if info == nil {
			return nil, notEnforced(fmt.Sprintf("prompt %q", name), "given")
		}
		if d := info.enf.readDenial(need, info.scope, info.sourced, name, ""); d != nil {
			return nil, info.enf.denied(ctx, d)
		}
		return h(ctx, req)
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
