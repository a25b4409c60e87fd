// Package manifest lists what the tools of a [mcpeffect.Registry] do, in
// one place: each tool with its effect, the four hints derived from it
// and the scope it requires, each outcome of a tool whose effect depends
// on its arguments, and the resources, resource templates and prompts
// declared with a scope. A server writes it for its README
// ([Manifest.WriteMarkdown]) or for a review that diffs it
// ([Manifest.WriteJSON]), which mcpeffect diff reads.
//
// A manifest written from what a server lists ([ToolOf]) also holds the
// content hash of each tool's definition ([Definition]), and can be signed
// with Ed25519 ([Sign]), in the spirit of SEP-3140's signed capability
// manifest: a host or a check in CI that verifies it ([Verify]) can tell
// when a server's tools are no longer what was signed, and which part of
// them changed.
package manifest

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpeffect/mcpeffect"
)

// A Manifest is the list of what a registry's tools do, and of the
// scopes its resources and prompts require.
type Manifest struct {
	// Resource is the canonical URI of the server the manifest is for
	// (RFC 8707), when it is served over HTTP, which binds a signed
	// manifest to it: a check of another server refuses it. It is empty
	// for a server run as a command, and in a manifest of a registry.
	Resource string `json:"resource,omitempty"`
	// ServerInfo is how the server introduced itself when the manifest
	// was written from it.
	ServerInfo *ServerInfo `json:"serverInfo,omitempty"`
	// IssuedAt is when the manifest was written from a server, in RFC
	// 3339.
	IssuedAt string `json:"issuedAt,omitempty"`

	Tools []Tool `json:"tools"`
	// Resources lists the resources and resource templates declared with
	// [mcpeffect.AddResource] and [mcpeffect.AddResourceTemplate], and
	// Prompts the prompts declared with [mcpeffect.AddPrompt], with the
	// scope each requires; any other requires read-only.
	Resources []Scoped `json:"resources,omitempty"`
	Prompts   []Scoped `json:"prompts,omitempty"`

	// Signature is the detached JWS that signs the manifest, set by
	// [Sign] and checked by [Verify]; empty in a manifest not signed.
	Signature string `json:"signature,omitempty"`
}

// ServerInfo is the name and version a server gave in its answer to
// initialize.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Tool returns the tool of m called name, or nil.
func (m *Manifest) Tool(name string) *Tool {
	for i := range m.Tools {
		if m.Tools[i].Name == name {
			return &m.Tools[i]
		}
	}
	return nil
}

// A Scoped is a resource, a resource template or a prompt of a
// [Manifest], with the scope that reading it requires.
type Scoped struct {
	// Name is the URI, the URI template or the prompt's name.
	Name              string          `json:"name"`
	Template          bool            `json:"template,omitempty"`
	Required          mcpeffect.Scope `json:"required"`
	RequiredScopeName string          `json:"requiredScopeName"`
}

// A Tool is one tool of a [Manifest]. For a tool whose effect depends on
// its arguments (see [mcpeffect.EffectRule]), Effect and the hints are
// the worst case, which the tool advertises, and Outcomes lists the
// effect of each of its calls.
type Tool struct {
	Name string `json:"name"`
	// Derived is the tool's effect, its hints and its scope: the worst
	// case over Outcomes, if it has any.
	Derived
	// Argument names the argument whose value selects the outcome, for a
	// rule of the common form ([mcpeffect.EffectByArgument]). It is empty
	// for the general form, whose outcomes have no Value, and for a tool
	// with one effect, which has no Outcomes. It is the "argument" of the
	// outcomes a tool publishes ([mcpeffect.OutcomesMetaKey]).
	Argument string    `json:"argument,omitempty"`
	Outcomes []Outcome `json:"outcomes,omitempty"`

	// Description, ContentHash and Digests are set in a manifest written
	// from what a server lists ([ToolOf]): the tool's description as the
	// server gave it, the hash of its definition ([Definition.Hash]) and
	// of each of its parts. A registry does not know them.
	Description string   `json:"description,omitempty"`
	ContentHash string   `json:"contentHash,omitempty"`
	Digests     *Digests `json:"digests,omitempty"`
}

// An Outcome is one outcome of a tool whose effect depends on its
// arguments, with the hints and the scope of its calls.
type Outcome struct {
	// Value is the value of the argument that selects the outcome, in the
	// common form.
	Value string `json:"value,omitempty"`
	Derived
}

// A Derived is an effect in a [Manifest], with the four hints derived
// from it and the scope it requires.
type Derived struct {
	Effect mcpeffect.Effect `json:"effect"`
	mcpeffect.Hints
	// Required is the least scope that may make the call, and
	// RequiredScopeName the scope string that grants it, as in
	// [mcpeffect.DeniedError].
	Required          mcpeffect.Scope `json:"required"`
	RequiredScopeName string          `json:"requiredScopeName"`
}

func derived(e mcpeffect.Effect, names mcpeffect.ScopeNames) Derived {
	need := e.Required()
	return Derived{Effect: e, Hints: e.Hints(), Required: need, RequiredScopeName: names.Name(need)}
}

// Of returns the manifest of every tool classified in r, sorted by name,
// and of the resources, templates and prompts declared with a scope,
// sorted too, with scope strings from names.
func Of(r *mcpeffect.Registry, names mcpeffect.ScopeNames) *Manifest {
	m := &Manifest{Tools: make([]Tool, 0, r.Len())}
	for name, e := range r.All() {
		t := Tool{Name: name, Derived: derived(e, names)}
		if rule, ok := r.Rule(name); ok {
			t.Argument = rule.Argument()
			for _, o := range rule.Outcomes() {
				t.Outcomes = append(t.Outcomes, Outcome{Value: o.Value, Derived: derived(o.Effect, names)})
			}
		}
		m.Tools = append(m.Tools, t)
	}
	scoped := func(name string, need mcpeffect.Scope, template bool) Scoped {
		return Scoped{Name: name, Template: template, Required: need, RequiredScopeName: names.Name(need)}
	}
	for uri, need := range r.Resources() {
		m.Resources = append(m.Resources, scoped(uri, need, false))
	}
	for tmpl, need := range r.ResourceTemplates() {
		m.Resources = append(m.Resources, scoped(tmpl, need, true))
	}
	slices.SortFunc(m.Resources, func(a, b Scoped) int { return strings.Compare(a.Name, b.Name) })
	for name, need := range r.Prompts() {
		m.Prompts = append(m.Prompts, scoped(name, need, false))
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
