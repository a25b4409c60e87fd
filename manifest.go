package mcpeffect

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// A Manifest lists every tool of a [Registry] with its effect, the four
// hints derived from it and the scope it requires: what a server's tools
// do, in one place, for a README (WriteMarkdown) or for a review that diffs
// it (WriteJSON).
type Manifest struct {
	Tools []ManifestTool `json:"tools"`
}

// A ManifestTool is one tool of a [Manifest].
type ManifestTool struct {
	Name            string `json:"name"`
	Effect          Effect `json:"effect"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
	// Required is the least scope that may call the tool, and
	// RequiredScopeName the scope string that grants it, as in
	// [DeniedError].
	Required          Scope  `json:"required"`
	RequiredScopeName string `json:"requiredScopeName"`
}

// Manifest returns the manifest of every tool classified in r, sorted by
// name, with scope strings from names.
func (r *Registry) Manifest(names ScopeNames) *Manifest {
	tools := r.sorted()
	m := &Manifest{Tools: make([]ManifestTool, 0, len(tools))}
	for _, t := range tools {
		a := t.effect.Annotations()
		m.Tools = append(m.Tools, ManifestTool{
			Name:              t.name,
			Effect:            t.effect,
			ReadOnlyHint:      a.ReadOnlyHint,
			DestructiveHint:   *a.DestructiveHint,
			IdempotentHint:    a.IdempotentHint,
			OpenWorldHint:     *a.OpenWorldHint,
			Required:          t.effect.required(),
			RequiredScopeName: names.Name(t.effect.required()),
		})
	}
	return m
}

// WriteJSON writes m as indented JSON, ending with a newline.
func (m *Manifest) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// WriteMarkdown writes m as a Markdown table, a row per tool.
func (m *Manifest) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| tool | effect | readOnlyHint | destructiveHint | idempotentHint | openWorldHint | scope |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, t := range m.Tools {
		fmt.Fprintf(&b, "| `%s` | %s | %t | %t | %t | %t | `%s` |\n",
			t.Name, strings.ReplaceAll(t.Effect.String(), "|", `\|`),
			t.ReadOnlyHint, t.DestructiveHint, t.IdempotentHint, t.OpenWorldHint, t.RequiredScopeName)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
