package manifest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Definition is what a model and a host read of a tool before they call
// it, each part in its canonical JSON (see [Canonical]): its description,
// its input and output schemas, its annotations and the outcomes it
// publishes ([mcpeffect.OutcomesMetaKey]). A part the tool does not have
// is nil. A server that changes any of them after a person or a gateway
// approved the tool changes what was approved: the content hash of a
// [Tool] in a signed manifest holds them, as SEP-3140 holds a
// declaration's.
//
// The title, the icons and the rest of _meta are left out: SEP-3140 counts
// a changed title or icon as no material change.
type Definition struct {
	Name         string
	Description  json.RawMessage
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Annotations holds the four hints only, as go-sdk's client decodes
	// them: readOnlyHint and idempotentHint always (false when the
	// server left them out, which go-sdk cannot tell apart),
	// destructiveHint and openWorldHint when the server sent them.
	Annotations json.RawMessage
	Outcomes    json.RawMessage
}

// DefinitionOf returns the definition of t, a tool as go-sdk lists it on
// a client (its schemas decoded into maps) or as a server adds it (its
// schemas of any type that writes as JSON). It returns an error if a part
// cannot be written as JSON, or holds a number JCS cannot write.
func DefinitionOf(t *mcp.Tool) (Definition, error) {
	if t == nil {
		return Definition{}, fmt.Errorf("mcpeffect: no tool")
	}
	d := Definition{Name: t.Name}
	part := func(what string, v any) (json.RawMessage, error) {
		c, err := canonicalOf(v)
		if err != nil {
			return nil, fmt.Errorf("mcpeffect: tool %q: %s: %w", t.Name, what, err)
		}
		if string(c) == "null" {
			return nil, nil
		}
		return c, nil
	}
	var err error
	if t.Description != "" {
		if d.Description, err = part("description", t.Description); err != nil {
			return Definition{}, err
		}
	}
	if d.InputSchema, err = part("input schema", t.InputSchema); err != nil {
		return Definition{}, err
	}
	if d.OutputSchema, err = part("output schema", t.OutputSchema); err != nil {
		return Definition{}, err
	}
	if a := t.Annotations; a != nil {
		hints := map[string]bool{"readOnlyHint": a.ReadOnlyHint, "idempotentHint": a.IdempotentHint}
		if a.DestructiveHint != nil {
			hints["destructiveHint"] = *a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			hints["openWorldHint"] = *a.OpenWorldHint
		}
		if d.Annotations, err = part("annotations", hints); err != nil {
			return Definition{}, err
		}
	}
	if o, ok := t.Meta[mcpeffect.OutcomesMetaKey]; ok {
		if d.Outcomes, err = part("outcomes", o); err != nil {
			return Definition{}, err
		}
	}
	return d, nil
}

// Hash returns the content hash of d: the SHA-256 of the canonical JSON
// of an object of its name and of the parts it has ("description",
// "inputSchema", "outputSchema", "annotations", "outcomes"), written as
// SEP-3140 writes hashes, "sha256-" and the digest in unpadded base64url.
func (d Definition) Hash() string {
	obj := map[string]json.RawMessage{"name": mustString(d.Name)}
	for _, p := range d.parts() {
		if p.value != nil {
			obj[p.key] = p.value
		}
	}
	c, err := canonicalOf(obj)
	if err != nil {
		// Every part is canonical JSON already, and the name a string.
		panic(err)
	}
	return hashOf(c)
}

// Digests returns the hash of each part of d that it has, so that a
// change can be told apart: a description rewritten, a schema widened.
func (d Definition) Digests() *Digests {
	var g Digests
	for _, p := range d.parts() {
		if p.value != nil {
			*p.digest(&g) = hashOf(p.value)
		}
	}
	return &g
}

// A part is one part of a Definition: its member in the hashed object,
// its name for people, and its field in Digests.
type part struct {
	key, name string
	value     json.RawMessage
	digest    func(*Digests) *string
}

func (d Definition) parts() []part {
	return []part{
		{"description", "description", d.Description, func(g *Digests) *string { return &g.Description }},
		{"inputSchema", "input schema", d.InputSchema, func(g *Digests) *string { return &g.InputSchema }},
		{"outputSchema", "output schema", d.OutputSchema, func(g *Digests) *string { return &g.OutputSchema }},
		{"annotations", "annotations", d.Annotations, func(g *Digests) *string { return &g.Annotations }},
		{"outcomes", "outcomes", d.Outcomes, func(g *Digests) *string { return &g.Outcomes }},
	}
}

// Digests are the hashes of the parts of a tool's [Definition], written
// as [Definition.Hash] writes them; a part the tool does not have has
// none ("").
type Digests struct {
	Description  string `json:"description,omitempty"`
	InputSchema  string `json:"inputSchema,omitempty"`
	OutputSchema string `json:"outputSchema,omitempty"`
	Annotations  string `json:"annotations,omitempty"`
	Outcomes     string `json:"outcomes,omitempty"`
}

// Changed returns the parts whose digests differ between g and h, for
// people: "description", "input schema", "output schema", "annotations"
// and "outcomes", in that order; nil if none. A nil Digests has no part.
func (g *Digests) Changed(h *Digests) []string {
	var a, b Digests
	if g != nil {
		a = *g
	}
	if h != nil {
		b = *h
	}
	var out []string
	for _, p := range (Definition{}).parts() {
		if *p.digest(&a) != *p.digest(&b) {
			out = append(out, p.name)
		}
	}
	return out
}

// hashOf returns the SEP-3140 form of the SHA-256 of data.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256-" + base64.RawURLEncoding.EncodeToString(sum[:])
}

func mustString(s string) json.RawMessage {
	data, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return data
}

// ToolOf returns the [Tool] of a manifest for t, a tool as a server lists
// it, whose effect is e (for a server built with mcpeffect, the effect its
// hints derive from) and whose rule, if its effect depends on its
// arguments, is rule: with its description, and the content hash and
// digests of its definition. Scope strings come from names. A rule's
// outcomes make the tool's Outcomes, and its worst case, which must be e,
// the tool's effect.
func ToolOf(t *mcp.Tool, e mcpeffect.Effect, rule *mcpeffect.EffectRule, names mcpeffect.ScopeNames) (Tool, error) {
	d, err := DefinitionOf(t)
	if err != nil {
		return Tool{}, err
	}
	if !e.Valid() {
		return Tool{}, fmt.Errorf("mcpeffect: tool %q: effect %v is not valid", t.Name, e)
	}
	mt := Tool{Name: t.Name, Description: t.Description, Derived: derived(e, names), ContentHash: d.Hash(), Digests: d.Digests()}
	if rule != nil {
		if w := rule.Worst(); w != e {
			return Tool{}, fmt.Errorf("mcpeffect: tool %q: its hints say %v, but the worst case of its outcomes is %v", t.Name, e, w)
		}
		mt.Argument = rule.Argument()
		for _, o := range rule.Outcomes() {
			mt.Outcomes = append(mt.Outcomes, Outcome{Value: o.Value, Derived: derived(o.Effect, names)})
		}
	}
	return mt, nil
}
