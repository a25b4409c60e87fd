package policy

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/mcpeffect/mcpeffect"
)

// RegoInput documents the input document of the Rego policy, which the
// caller of OPA builds from each MCP request: for a tools/call, the tool's
// name and its arguments as the client sent them; for a resources/read (or
// resources/subscribe), the URI; for a prompts/get, the prompt's name; for
// a completion/complete, the prompt's name or the template's URI; and
// always the scope strings of the caller's token.
const RegoInput = `{
  "method":    "tools/call" | "resources/read" | "resources/subscribe" | "prompts/get" | "completion/complete",
  "name":      the tool or the prompt,
  "uri":       the resource, or the resource template completed,
  "arguments": the arguments of a tools/call, an object,
  "scopes":    the scope strings of the caller's token, an array
}`

// RegoPackage is the package of the Rego policy: its decision is
// data.mcpeffect.allow.
const RegoPackage = "mcpeffect"

// WriteRego writes s as a Rego module (OPA v1 syntax) whose rule allow
// is true for exactly the requests mcpeffect allows, given the input
// described by [RegoInput].
func (s *Set) WriteRego(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# mcpeffect's decision for the tools, resources and prompts of %s, as a policy for OPA.\n", comment(s.Source))
	b.WriteString("# The effects are pinned: the hints the server sends at run time are not read.\n#\n# The input document:\n#\n")
	for _, line := range strings.Split(RegoInput, "\n") {
		b.WriteString("#   " + line + "\n")
	}
	b.WriteString("#\n# The decision is data." + RegoPackage + ".allow.\n")
	for _, t := range s.Tools {
		if t.Computed && t.DependsOnArguments() {
			fmt.Fprintf(&b, "# Tool %s computes its effect from its arguments with the server's own function: every call has its worst case here (%s).\n", comment(t.Name), t.Effect)
		}
	}
	fmt.Fprintf(&b, "package %s\n\n", RegoPackage)
	b.WriteString("default allow := false\n\n")

	table := func(name string, v any) {
		data, err := json.MarshalIndent(v, "", "\t")
		if err != nil {
			panic(err) // maps of strings and numbers
		}
		fmt.Fprintf(&b, "%s := %s\n\n", name, data)
	}
	levelOf := func(sc mcpeffect.Scope) int { return int(sc) }
	names := map[string]int{}
	for _, l := range levels {
		names[s.Names.Name(l)] = levelOf(l)
	}
	b.WriteString("# Each scope string grants its level and those below it.\n")
	table("scope_levels", names)
	b.WriteString(`level := max({n | some s in input.scopes; n := scope_levels[s]} | {0}) if {
	is_array(input.scopes)
} else := 0

`)
	type regoTool struct {
		Required int            `json:"required"`
		Argument string         `json:"argument,omitempty"`
		Fold     string         `json:"fold,omitempty"`
		Outcomes map[string]int `json:"outcomes,omitempty"`
	}
	tools := map[string]regoTool{}
	for _, t := range s.Tools {
		rt := regoTool{Required: levelOf(t.Required())}
		if !t.Computed && t.Argument != "" {
			rt.Argument = t.Argument
			rt.Fold = "^(?i:" + regexp.QuoteMeta(t.Argument) + ")$"
			rt.Outcomes = map[string]int{}
			for _, o := range t.Outcomes {
				rt.Outcomes[o.Value] = levelOf(o.Effect.Required())
			}
		}
		tools[t.Name] = rt
	}
	b.WriteString("# The tools: the scope each requires, 1 read-only, 2 non-destructive, 3 full; and for a tool\n")
	b.WriteString("# whose effect depends on one argument, the scope each of its values requires.\n")
	table("tools", tools)
	b.WriteString(`allow if {
	input.method == "tools/call"
	level >= tool_required(tools[input.name])
}

# A call names its outcome only with the argument, exactly once, as a
# string among the tool's values, and no other member that differs from it
# only in case (decoders disagree on which one wins): as mcpeffect reads
# it. Anything else is the tool's worst case.
tool_required(t) := n if {
	is_object(input.arguments)
	is_string(input.arguments[t.argument])
	count([k | some k, _ in input.arguments; k != t.argument; regex.match(t.fold, k)]) == 0
	n := t.outcomes[input.arguments[t.argument]]
} else := t.required

`)
	if s.Unscoped {
		b.WriteString(`# A live server does not publish the scopes of its resources and prompts:
# any caller with a scope is let through, and the server decides (write the
# policy from a manifest of the registry to decide here).
allow if {
	input.method in {"resources/read", "resources/subscribe", "prompts/get", "completion/complete"}
	level >= 1
}
`)
		_, err := io.WriteString(w, b.String())
		return err
	}
	resources := map[string]int{}
	for _, r := range s.Resources {
		resources[r.Name] = levelOf(r.Required)
	}
	type regoTemplate struct {
		Template string `json:"template"`
		Regexp   string `json:"regexp"`
		Required int    `json:"required"`
	}
	templates := make([]regoTemplate, len(s.Templates))
	for i, t := range s.Templates {
		templates[i] = regoTemplate{t.Template, t.Regexp, levelOf(t.Required)}
	}
	prompts := map[string]int{}
	for _, p := range s.Prompts {
		prompts[p.Name] = levelOf(p.Required)
	}
	b.WriteString("# The resources, resource templates (in the order mcpeffect tries them) and prompts declared\n# with a scope; any other requires read-only.\n")
	table("resources", resources)
	table("templates", templates)
	table("prompts", prompts)
	b.WriteString(`allow if {
	input.method in {"resources/read", "resources/subscribe"}
	level >= resource_required(input.uri)
}

allow if {
	input.method == "prompts/get"
	level >= prompt_required(input.name)
}

# A completion needs what its prompt needs, or for a URI the wider of the
# template it names and the resource it is.
allow if {
	input.method == "completion/complete"
	is_string(input.uri)
	level >= max({template_required(input.uri), resource_required(input.uri)})
}

allow if {
	input.method == "completion/complete"
	not input.uri
	level >= prompt_required(input.name)
}

resource_required(uri) := n if {
	n := resources[uri]
} else := n if {
	is_string(uri)
	matching := [i | some i, t in templates; regex.match(t.regexp, uri)]
	count(matching) > 0
	n := templates[min(matching)].required
} else := 1

template_required(tmpl) := t.required if {
	some t in templates
	t.template == tmpl
} else := 1

prompt_required(name) := n if {
	n := prompts[name]
} else := 1
`)
	_, err := io.WriteString(w, b.String())
	return err
}
