package policy

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpeffect/mcpeffect"
)

// The CEL rules are written in the vocabulary of agentgateway's MCP
// authorization (github.com/agentgateway/agentgateway,
// crates/agentgateway/src/mcp/rbac.rs, crates/agentgateway/src/mcp/mod.rs,
// crates/agentgateway/src/http/authorization.rs): each rule of
// mcpAuthorization is an expression over mcp.tool.name, mcp.prompt.name
// and mcp.resource.name (a resource's URI), and jwt, the claims of the
// token; a request is allowed if one rule is true, and a rule that raises
// an error counts as false. The rules see no arguments, so a tool whose
// effect depends on its arguments is given its worst case.

// A CELOptions configures the CEL rules.
type CELOptions struct {
	// Claim is the token's claim that holds its scopes, one string with
	// spaces as RFC 9068 writes it; "scope" if empty.
	Claim string
}

func (o CELOptions) claim() string {
	if o.Claim == "" {
		return "scope"
	}
	return o.Claim
}

// CELRule is one rule of agentgateway's mcpAuthorization, with the
// comment that says what it allows.
type CELRule struct {
	Comment string
	Expr    string
}

// CEL returns the rules of s: for each scope, one over the tools it
// grants, and where there are any, one over the prompts and one over the
// resources it grants.
func (s *Set) CEL(o CELOptions) []CELRule {
	claim := "jwt." + o.claim()
	if !celIdent(o.claim()) {
		claim = "jwt[" + celString(o.claim()) + "]"
	}
	granted := func(l mcpeffect.Scope) string {
		names := s.granting(l)
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = celString(n)
		}
		return fmt.Sprintf("%s.split(\" \").exists(s, s in [%s])", claim, strings.Join(quoted, ", "))
	}
	var rules []CELRule
	for _, l := range levels {
		var names []string
		for _, t := range s.Tools {
			if t.Required() == l {
				names = append(names, celString(t.Name))
			}
		}
		if len(names) > 0 {
			rules = append(rules, CELRule{fmt.Sprintf("tools that require %s (%s)", l, s.Names.Name(l)),
				fmt.Sprintf("%s && mcp.tool.name in [%s]", granted(l), strings.Join(names, ", "))})
		}
	}
	if s.Unscoped {
		return append(rules,
			CELRule{"a live server does not publish the scopes of its prompts and resources: any caller with a scope, and the server decides", granted(mcpeffect.ReadOnly) + " && mcp.prompt.name.size() >= 0"},
			CELRule{"", granted(mcpeffect.ReadOnly) + " && mcp.resource.name.size() >= 0"})
	}
	// Any prompt not declared requires read-only; a rule for each scope
	// that some prompt requires.
	promptLevels := []mcpeffect.Scope{mcpeffect.ReadOnly}
	for _, p := range s.Prompts {
		promptLevels = append(promptLevels, p.Required)
	}
	for _, l := range levels {
		if !slicesContains(promptLevels, l) {
			continue
		}
		var out []string
		for _, p := range s.Prompts {
			if p.Required > l {
				out = append(out, celString(p.Name))
			}
		}
		expr := "mcp.prompt.name.size() >= 0"
		if len(out) > 0 {
			expr = fmt.Sprintf("!(mcp.prompt.name in [%s])", strings.Join(out, ", "))
		}
		rules = append(rules, CELRule{fmt.Sprintf("prompts that require %s", l), granted(l) + " && " + expr})
	}
	resourceLevels := []mcpeffect.Scope{mcpeffect.ReadOnly}
	var exact []string
	for _, r := range s.Resources {
		exact = append(exact, celString(r.Name))
		resourceLevels = append(resourceLevels, r.Required)
	}
	for _, t := range s.Templates {
		resourceLevels = append(resourceLevels, t.Required)
	}
	for _, l := range levels {
		if !slicesContains(resourceLevels, l) {
			continue
		}
		var parts, in []string
		for _, r := range s.Resources {
			if r.Required <= l {
				in = append(in, celString(r.Name))
			}
		}
		if len(in) > 0 {
			parts = append(parts, fmt.Sprintf("mcp.resource.name in [%s]", strings.Join(in, ", ")))
		}
		// Any other URI requires the scope of the first template that
		// matches it, or read-only: a chain of conditions in that order.
		chain := "true"
		for i := len(s.Templates) - 1; i >= 0; i-- {
			t := s.Templates[i]
			chain = fmt.Sprintf("(mcp.resource.name.matches(%s) ? %t : %s)", celString(t.Regexp), t.Required <= l, chain)
		}
		switch {
		case len(exact) > 0:
			parts = append(parts, fmt.Sprintf("!(mcp.resource.name in [%s]) && %s", strings.Join(exact, ", "), chain))
		case chain == "true":
			parts = append(parts, "mcp.resource.name.size() >= 0")
		default:
			parts = append(parts, chain)
		}
		rules = append(rules, CELRule{fmt.Sprintf("resources that require %s", l), granted(l) + " && (" + strings.Join(parts, " || ") + ")"})
	}
	return rules
}

// WriteAgentgateway writes s as the mcpAuthorization policy of an
// agentgateway configuration, in YAML.
func (s *Set) WriteAgentgateway(w io.Writer, o CELOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# mcpeffect's decision for the tools, resources and prompts of %s,\n", comment(s.Source))
	b.WriteString("# as agentgateway's MCP authorization: one rule per scope. The effects are\n# pinned: the hints the server sends at run time are not read.\n")
	worst := []string{}
	for _, t := range s.Tools {
		if t.DependsOnArguments() {
			worst = append(worst, "#   "+comment(fmt.Sprintf("%s: %s (its %s calls need less; the server lets them through)", t.Name, t.Effect, narrowerText(t))))
		}
	}
	if len(worst) > 0 {
		b.WriteString("#\n# agentgateway's rules see no arguments: these tools, whose effect depends on\n# their arguments, are given their worst case here:\n" + strings.Join(worst, "\n") + "\n")
	}
	b.WriteString("mcpAuthorization:\n  rules:\n")
	for _, r := range s.CEL(o) {
		if r.Comment != "" {
			fmt.Fprintf(&b, "  # %s\n", comment(r.Comment))
		}
		fmt.Fprintf(&b, "  - '%s'\n", strings.ReplaceAll(r.Expr, "'", "''"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func narrowerText(t Tool) string {
	var parts []string
	for _, l := range levels {
		for _, v := range t.narrower()[l] {
			if t.Computed {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s=%s", t.Argument, v))
		}
	}
	if t.Computed || len(parts) == 0 {
		return "computed"
	}
	return strings.Join(parts, ", ")
}

// celString returns s as a CEL string literal.
func celString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func celIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
