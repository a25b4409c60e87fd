package policy

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpeffect/mcpeffect"
)

// The Cedar policies are written in the vocabulary of ToolHive's Cedar
// authorizer (github.com/stacklok/toolhive, pkg/authz/authorizers/cedar:
// core.go, entity.go; pkg/authz/middleware.go):
//
//   - the principal is Client::"<sub>", the action Action::"call_tool",
//     Action::"read_resource" or Action::"get_prompt", the resource
//     Tool::"<name>", Resource::"<uri>" (with the attribute uri) or
//     Prompt::"<name>";
//   - the context holds each claim of the token as "claim_<name>", each
//     scalar argument of a tools/call as "arg_<name>" (a non-scalar one
//     as "arg_<name>_present": true), and, for each claim listed in the
//     configuration's multi_valued_claims, "claimset_<name>": the claim's
//     strings as a set, whether the token holds them as one string with
//     spaces (scope, RFC 9068) or as an array (scp).
//
// So a scope is tested as membership of the set "claimset_<claim>", which
// a substring cannot fool, and the configuration lists the claim in
// multi_valued_claims. ToolHive denies a request for which any policy
// raises an error: every attribute is tested with has before it is read.

// A CedarOptions configures the Cedar policies.
type CedarOptions struct {
	// Claim is the token's claim that holds its scopes; "scope" if empty.
	Claim string
}

func (o CedarOptions) claim() string {
	if o.Claim == "" {
		return "scope"
	}
	return o.Claim
}

// ToolHiveConfig is ToolHive's authorization configuration, as its
// --authz-config flag reads it (pkg/authz/authorizers/config.go,
// pkg/authz/authorizers/cedar/core.go).
type ToolHiveConfig struct {
	Version string           `json:"version"`
	Type    string           `json:"type"`
	Cedar   CedarOptionsJSON `json:"cedar"`
}

// CedarOptionsJSON is the "cedar" member of a [ToolHiveConfig].
type CedarOptionsJSON struct {
	Policies          []string `json:"policies"`
	EntitiesJSON      string   `json:"entities_json"`
	MultiValuedClaims []string `json:"multi_valued_claims"`
}

// Cedar returns the Cedar policies of s, one a string, as ToolHive takes
// them: each parsed on its own.
func (s *Set) Cedar(o CedarOptions) []string {
	claimset := "claimset_" + o.claim()
	granted := func(need mcpeffect.Scope) string {
		names := s.granting(need)
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = cedarString(n)
		}
		return fmt.Sprintf("context has %s && context[%s].containsAny([%s])", cedarString(claimset), cedarString(claimset), strings.Join(quoted, ", "))
	}
	var out []string
	head := func(action, resource string) string {
		return fmt.Sprintf("permit (\n  principal,\n  action == Action::%s,\n  resource%s\n)\n", cedarString(action), resource)
	}
	for _, t := range s.Tools {
		var b strings.Builder
		fmt.Fprintf(&b, "// tool %s: %s, pinned (the hints sent at run time are not read)\n", comment(t.Name), t.Effect)
		if t.DependsOnArguments() {
			if t.Computed {
				b.WriteString("// its effect is computed from its arguments by the server's own function: every call has the worst case here\n")
			} else {
				fmt.Fprintf(&b, "// its effect depends on its argument %s: this is its worst case, and the policies after it the narrower outcomes\n", comment(t.Argument))
			}
		}
		fmt.Fprintf(&b, "@id(%s)\n", cedarString("mcpeffect:tool:"+t.Name))
		b.WriteString(head("call_tool", " == Tool::"+cedarString(t.Name)))
		fmt.Fprintf(&b, "when { %s };", granted(t.Required()))
		out = append(out, b.String())
		if t.Computed || !t.DependsOnArguments() {
			continue
		}
		variants, ok := foldVariants(t.Argument, maxVariants)
		if !ok {
			out[len(out)-1] = "// its argument " + comment(t.Argument) + " has too many spellings in other cases to tell from it: every call has the worst case here\n" + out[len(out)-1]
			continue
		}
		arg := cedarString("arg_" + t.Argument)
		var guard strings.Builder
		for _, v := range variants {
			// mcpeffect takes a call that gives the argument in another
			// case as uncertain, the worst case: so must the policy.
			fmt.Fprintf(&guard, " &&\n  !(context has %s) && !(context has %s)", cedarString("arg_"+v), cedarString("arg_"+v+"_present"))
		}
		groups := t.narrower()
		for _, need := range levels {
			values := groups[need]
			if len(values) == 0 {
				continue
			}
			quoted := make([]string, len(values))
			for i, v := range values {
				quoted[i] = cedarString(v)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "// tool %s with %s = %s: it requires %s\n", comment(t.Name), comment(t.Argument), comment(strings.Join(values, ", ")), need)
			fmt.Fprintf(&b, "@id(%s)\n", cedarString(fmt.Sprintf("mcpeffect:tool:%s:%s", t.Name, need)))
			b.WriteString(head("call_tool", " == Tool::"+cedarString(t.Name)))
			fmt.Fprintf(&b, "when {\n  context has %s && [%s].contains(context[%s])%s &&\n  %s\n};", arg, strings.Join(quoted, ", "), arg, guard.String(), granted(need))
			out = append(out, b.String())
		}
	}
	if s.Unscoped {
		for _, a := range []string{"read_resource", "get_prompt"} {
			out = append(out, "// a live server does not publish the scopes of its resources and prompts: any caller with a scope\n// is let through, and the server decides (write the policy from a manifest of the registry to decide here)\n"+
				fmt.Sprintf("@id(%s)\n", cedarString("mcpeffect:"+a))+head(a, "")+fmt.Sprintf("when { %s };", granted(mcpeffect.ReadOnly)))
		}
		return out
	}
	exact := make([]string, len(s.Resources))
	for i, r := range s.Resources {
		exact[i] = "Resource::" + cedarString(r.Name)
		out = append(out, fmt.Sprintf("// resource %s: it requires %s\n@id(%s)\n", comment(r.Name), r.Required, cedarString("mcpeffect:resource:"+r.Name))+
			head("read_resource", " == "+exact[i])+fmt.Sprintf("when { %s };", granted(r.Required)))
	}
	// Any other URI requires the scope of the first template that
	// matches it, or read-only. Cedar matches with like, whose * matches
	// more than a template's expression: a URI is held to the widest
	// scope of the templates whose pattern matches it.
	resourceLevels := []mcpeffect.Scope{mcpeffect.ReadOnly}
	for _, t := range s.Templates {
		if !slicesContains(resourceLevels, t.Required) {
			resourceLevels = append(resourceLevels, t.Required)
		}
	}
	for _, l := range levels {
		if !slicesContains(resourceLevels, l) {
			continue
		}
		var unless []string
		if len(exact) > 0 {
			unless = append(unless, "resource in ["+strings.Join(exact, ", ")+"]")
		}
		var which []string
		for _, t := range s.Templates {
			if t.Required > l {
				unless = append(unless, "(resource has uri && resource.uri like "+cedarLike(t.Template)+")")
			}
			if t.Required == l {
				which = append(which, t.Template)
			}
		}
		what := "any other resource"
		if len(which) > 0 {
			what = "resources of the templates " + comment(strings.Join(which, ", "))
		}
		p := fmt.Sprintf("// %s: they require %s\n@id(%s)\n", what, l, cedarString(fmt.Sprintf("mcpeffect:resources:%s", l))) +
			head("read_resource", "") + fmt.Sprintf("when { %s }", granted(l))
		if len(unless) > 0 {
			p += "\nunless {\n  " + strings.Join(unless, " ||\n  ") + "\n}"
		}
		out = append(out, p+";")
	}
	var wider []string
	for _, p := range s.Prompts {
		if p.Required == mcpeffect.ReadOnly {
			continue
		}
		wider = append(wider, "Prompt::"+cedarString(p.Name))
		out = append(out, fmt.Sprintf("// prompt %s: it requires %s\n@id(%s)\n", comment(p.Name), p.Required, cedarString("mcpeffect:prompt:"+p.Name))+
			head("get_prompt", " == Prompt::"+cedarString(p.Name))+fmt.Sprintf("when { %s };", granted(p.Required)))
	}
	p := fmt.Sprintf("// any other prompt: it requires read-only\n@id(%s)\n", cedarString("mcpeffect:prompts")) + head("get_prompt", "") + fmt.Sprintf("when { %s }", granted(mcpeffect.ReadOnly))
	if len(wider) > 0 {
		p += "\nunless { resource in [" + strings.Join(wider, ", ") + "] }"
	}
	return append(out, p+";")
}

// WriteToolHive writes s as ToolHive's authorization configuration.
func (s *Set) WriteToolHive(w io.Writer, o CedarOptions) error {
	c := ToolHiveConfig{Version: "1.0", Type: "cedarv1", Cedar: CedarOptionsJSON{
		Policies:          s.Cedar(o),
		EntitiesJSON:      "[]",
		MultiValuedClaims: []string{o.claim()},
	}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(c)
}

func slicesContains(s []mcpeffect.Scope, v mcpeffect.Scope) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// cedarString returns s as a Cedar string literal: printable ASCII as it
// is, the quote and the backslash escaped, anything else as \u{...}.
func cedarString(s string) string {
	return `"` + cedarEscape(s, false) + `"`
}

// cedarLike returns the like pattern of a URI template: its literal text,
// with a * for each expression.
func cedarLike(tmpl string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(cedarEscape(tmpl, true))
			break
		}
		b.WriteString(cedarEscape(tmpl[:i], true))
		b.WriteByte('*')
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			break
		}
		tmpl = tmpl[i+j+1:]
	}
	return `"` + b.String() + `"`
}

func cedarEscape(s string, like bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case like && r == '*':
			b.WriteString(`\*`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, `\u{%x}`, r)
		}
	}
	return b.String()
}

// comment returns s for a comment of a policy: printable ASCII, anything
// else escaped, so that no name can end the comment's line.
func comment(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0x20 && r < 0x7f {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\u{%x}`, r)
		}
	}
	return b.String()
}
