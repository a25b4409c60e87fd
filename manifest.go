package mcpeffect

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// A Manifest lists every tool of a [Registry] with its effect, the four
// hints derived from it and the scope it requires, and each outcome of a
// tool whose effect depends on its arguments; then the resources,
// resource templates and prompts declared with a scope. It is what a
// server's tools do, in one place, for a README (WriteMarkdown) or for a
// review that diffs it (WriteJSON).
type Manifest struct {
	Tools []ManifestTool `json:"tools"`
	// Resources lists the resources and resource templates declared with
	// [AddResource] and [AddResourceTemplate], and Prompts the prompts
	// declared with [AddPrompt], with the scope each requires; any other
	// requires read-only.
	Resources []ManifestScoped `json:"resources,omitempty"`
	Prompts   []ManifestScoped `json:"prompts,omitempty"`
}

// A ManifestScoped is a resource, a resource template or a prompt of a
// [Manifest], with the scope that reading it requires.
type ManifestScoped struct {
	// Name is the URI, the URI template or the prompt's name.
	Name              string `json:"name"`
	Template          bool   `json:"template,omitempty"`
	Required          Scope  `json:"required"`
	RequiredScopeName string `json:"requiredScopeName"`
}

// A ManifestTool is one tool of a [Manifest]. For a tool whose effect
// depends on its arguments (see [EffectRule]), Effect and the hints are
// the worst case, which the tool advertises, and Outcomes lists the
// effect of each of its calls.
type ManifestTool struct {
	Name string `json:"name"`
	// ManifestEffect is the tool's effect, its hints and its scope: the
	// worst case over Outcomes, if it has any.
	ManifestEffect
	// Argument names the argument whose value selects the outcome, for a
	// rule of the common form ([EffectByArgument]). It is empty for the
	// general form ([EffectByFunc]), whose outcomes have no Value, and for
	// a tool with one effect, which has no Outcomes. It is the
	// "argument" of the outcomes a tool publishes ([OutcomesMetaKey]).
	Argument string            `json:"argument,omitempty"`
	Outcomes []ManifestOutcome `json:"outcomes,omitempty"`
}

// A ManifestOutcome is one outcome of a tool whose effect depends on its
// arguments, with the hints and the scope of its calls.
type ManifestOutcome struct {
	// Value is the value of the argument that selects the outcome, in the
	// common form.
	Value string `json:"value,omitempty"`
	ManifestEffect
}

// A ManifestEffect is an effect in a [Manifest], with the four hints
// derived from it and the scope it requires.
type ManifestEffect struct {
	Effect          Effect `json:"effect"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
	// Required is the least scope that may make the call, and
	// RequiredScopeName the scope string that grants it, as in
	// [DeniedError].
	Required          Scope  `json:"required"`
	RequiredScopeName string `json:"requiredScopeName"`
}

func manifestEffect(e Effect, names ScopeNames) ManifestEffect {
	a := e.Annotations()
	return ManifestEffect{
		Effect:            e,
		ReadOnlyHint:      a.ReadOnlyHint,
		DestructiveHint:   *a.DestructiveHint,
		IdempotentHint:    a.IdempotentHint,
		OpenWorldHint:     *a.OpenWorldHint,
		Required:          e.required(),
		RequiredScopeName: names.Name(e.required()),
	}
}

// Manifest returns the manifest of every tool classified in r, sorted by
// name, and of the resources, templates and prompts declared with a
// scope, sorted too, with scope strings from names.
func (r *Registry) Manifest(names ScopeNames) *Manifest {
	tools := r.sorted()
	m := &Manifest{Tools: make([]ManifestTool, 0, len(tools))}
	for _, t := range tools {
		mt := ManifestTool{Name: t.name, ManifestEffect: manifestEffect(t.effect, names)}
		if t.rule != nil {
			mt.Argument = t.rule.arg
			for _, o := range t.rule.outcomes {
				mt.Outcomes = append(mt.Outcomes, ManifestOutcome{Value: o.Value, ManifestEffect: manifestEffect(o.Effect, names)})
			}
		}
		m.Tools = append(m.Tools, mt)
	}
	if sc := r.scoped.Load(); sc != nil {
		scoped := func(name string, need Scope, template bool) ManifestScoped {
			return ManifestScoped{Name: name, Template: template, Required: need, RequiredScopeName: names.Name(need)}
		}
		for _, uri := range slices.Sorted(maps.Keys(sc.resources)) {
			m.Resources = append(m.Resources, scoped(uri, sc.resources[uri], false))
		}
		for _, t := range sc.templates {
			m.Resources = append(m.Resources, scoped(t.template, t.need, true))
		}
		slices.SortFunc(m.Resources, func(a, b ManifestScoped) int { return strings.Compare(a.Name, b.Name) })
		for _, name := range slices.Sorted(maps.Keys(sc.prompts)) {
			m.Prompts = append(m.Prompts, scoped(name, sc.prompts[name], false))
		}
	}
	return m
}

// WriteJSON writes m as indented JSON, ending with a newline.
func (m *Manifest) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// WriteMarkdown writes m as a Markdown table, a row per tool, followed for
// a tool whose effect depends on its arguments by a row per outcome, such
// as "`pods` with `action` = `get`"; then, if any were declared, a table
// of the resources and prompts with their scopes.
func (m *Manifest) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| tool | effect | readOnlyHint | destructiveHint | idempotentHint | openWorldHint | scope |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, t := range m.Tools {
		effect := markdownText(t.Effect.String())
		if len(t.Outcomes) > 0 {
			effect += " (worst case)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %t | %t | %t | %t | `%s` |\n",
			t.Name, effect, t.ReadOnlyHint, t.DestructiveHint, t.IdempotentHint, t.OpenWorldHint, t.RequiredScopeName)
		for _, o := range t.Outcomes {
			when := "computed from its arguments"
			if t.Argument != "" {
				when = fmt.Sprintf("with `%s` = %s", t.Argument, markdownCode(o.Value))
			}
			fmt.Fprintf(&b, "| `%s` %s | %s | %t | %t | %t | %t | `%s` |\n",
				t.Name, when, markdownText(o.Effect.String()), o.ReadOnlyHint, o.DestructiveHint, o.IdempotentHint, o.OpenWorldHint, o.RequiredScopeName)
		}
	}
	if len(m.Resources)+len(m.Prompts) > 0 {
		b.WriteString("\n| resource or prompt | scope |\n| --- | --- |\n")
		for _, r := range m.Resources {
			kind := "resource"
			if r.Template {
				kind = "resource template"
			}
			fmt.Fprintf(&b, "| %s %s | `%s` |\n", kind, markdownCode(r.Name), r.RequiredScopeName)
		}
		for _, p := range m.Prompts {
			fmt.Fprintf(&b, "| prompt %s | `%s` |\n", markdownCode(p.Name), p.RequiredScopeName)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownText escapes the pipes of s for a table cell.
func markdownText(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// markdownCode returns s as inline code in a table cell, printable and
// without breaking the table; "" shows as (empty).
func markdownCode(s string) string {
	if s == "" {
		return "(empty)"
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	return "`" + strings.ReplaceAll(strings.ReplaceAll(s, "`", "'"), "|", `\|`) + "`"
}
