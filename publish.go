package mcpeffect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OutcomesMetaKey is the key, in the _meta of a tool, under which a tool
// added with [AddTool] or [AddToolHandler] publishes its
// outcomes in tools/list, so that an audit (mcpeffect audit) and people
// reading the listing can see what each call may do, not only the worst
// case that the tool's hints advertise. Its prefix is the reverse-DNS
// form of the project's home, github.com/mcpeffect, as the MCP
// specification asks of _meta keys that are not MCP's own (and as the
// MCP registry names namespaces proven on GitHub).
//
// The value is set from the rule that is enforced, when the tool is
// added, so that it cannot disagree with it. In the common form
// ([EffectByArgument]) it names the argument and gives each value
// (always present, "" included), its effect in text form (see
// [Effect.String]) and the four hints that effect derives, in the order of
// [EffectRule.Outcomes]:
//
//	"_meta": {"io.github.mcpeffect/outcomes": {
//	  "argument": "action",
//	  "outcomes": [
//	    {"value": "delete", "effect": "write|destructive|idempotent", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false},
//	    {"value": "get", "effect": "read", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
//	  ]
//	}}
//
// In the general form ([EffectByFunc]) "argument" and each "value" are
// absent: the outcomes are the effects the function may return. A reader
// must ignore members it does not know; a shape that readers of this one
// could not read would take a new key.
//
// The value is a claim by the server, for display. Hosts decide from the
// tool's hints, which are the worst case of these outcomes, and should
// keep doing so: nothing but the server's own enforcement stands behind
// the claim. (A host that wants the hints of one call before making it
// can ask a server that serves it with the tool-resolution extension; see
// [github.com/mcpeffect/mcpeffect/resolution.Serve].)
const OutcomesMetaKey = "io.github.mcpeffect/outcomes"

// A publishedOutcome is one outcome as a tool publishes it under
// [OutcomesMetaKey]: its value in the common form, its effect in text
// form and its [Hints].
type publishedOutcome struct {
	Value  *string `json:"value,omitempty"`
	Effect string  `json:"effect"`
	Hints
}

// publishedOutcomes returns the value of [OutcomesMetaKey] for rule, as
// the JSON types that a listing decodes into, so that code reading a
// tool's _meta in the same process sees what a client would.
func publishedOutcomes(rule *EffectRule) map[string]any {
	var v struct {
		Argument string             `json:"argument,omitempty"`
		Outcomes []publishedOutcome `json:"outcomes"`
	}
	v.Argument = rule.arg
	v.Outcomes = make([]publishedOutcome, 0, len(rule.outcomes))
	for _, o := range rule.outcomes {
		p := publishedOutcome{Effect: o.Effect.String(), Hints: o.Effect.Hints()}
		if rule.arg != "" {
			p.Value = &o.Value
		}
		v.Outcomes = append(v.Outcomes, p)
	}
	data, err := json.Marshal(v)
	var decoded map[string]any
	if err == nil {
		err = json.Unmarshal(data, &decoded)
	}
	if err != nil {
		// Strings and booleans only.
		panic(err)
	}
	return decoded
}

// withPublishedOutcomes returns the _meta of t as added to the registry,
// with rule's outcomes under [OutcomesMetaKey], or t's own if rule is nil.
// It returns an error if t's own _meta already holds the key with another
// value, or at all for a tool with one effect: a claim written by hand
// beside the rule that is enforced is the drift this package prevents.
func withPublishedOutcomes(t *mcp.Tool, rule *EffectRule) (mcp.Meta, error) {
	own, has := t.Meta[OutcomesMetaKey]
	if rule == nil {
		if has {
			return nil, fmt.Errorf("mcpeffect: AddTool: tool %q has one effect, but its _meta holds %q, which only a tool with a rule publishes, from the rule it enforces: leave it out", t.Name, OutcomesMetaKey)
		}
		return t.Meta, nil
	}
	v := publishedOutcomes(rule)
	if has && !sameJSON(own, v) {
		return nil, fmt.Errorf("mcpeffect: AddTool: tool %q: its _meta holds %q, which differs from the outcomes of its rule (%s): leave it out, AddTool sets it", t.Name, OutcomesMetaKey, rule)
	}
	meta := maps.Clone(t.Meta)
	if meta == nil {
		meta = mcp.Meta{}
	}
	meta[OutcomesMetaKey] = v
	return meta, nil
}

// sameJSON reports whether a and b encode to the same JSON.
func sameJSON(a, b any) bool {
	ja, err := json.Marshal(a)
	if err != nil {
		return false
	}
	jb, err := json.Marshal(b)
	return err == nil && bytes.Equal(ja, jb)
}
