package audit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
)

// A DirectoryProfile holds the rules by which an app directory reviews an
// MCP server before listing it, as far as they can be checked from the
// server's tool list. A rule at the [Error] level is one the directory
// documents as a reason to reject a submission.
//
// What a tool list cannot show is not checked: whether hints match what
// the tools really do, whether a description is accurate or tries to steer
// the model, and a catch-all tool whose arguments choose between reading
// and writing in free text (SQL, GraphQL, a shell command, a URL) or only
// in its description.
type DirectoryProfile struct {
	Name  string // the name -profile takes: "claude-directory"
	Title string // for people: "Claude Connectors Directory"
	Rules []DirectoryRule
}

// A DirectoryRule is one rule of a [DirectoryProfile], with its source and
// the date it was read.
type DirectoryRule struct {
	Rule    Rule
	Level   Level
	Summary string
	// Source names where the rule was read: a URL, or a repository, path
	// and commit.
	Source string
	// Read is the date the source was read, YYYY-MM-DD.
	Read       string
	Confidence string
	// check returns the finding's message if the tool breaks the rule,
	// and "" if not.
	check func(t Tool, l connect.Listed) string
}

// directoryProfiles is every directory profile. The research behind it,
// with quotes, is in the project's notes on hosts (hosts.md, section 3,
// read 2026-11-30); where it quotes a survey, the survey checked the
// page on 2026-10-02, and the rule carries that date. The rules from
// Anthropic's directory checklist were read again on 2026-12-01.
var directoryProfiles = []DirectoryProfile{
	{
		Name:  "claude-directory",
		Title: "Claude Connectors Directory",
		Rules: []DirectoryRule{
			// claude.com/docs/connectors/building/review-criteria#provide-tool-annotations:
			// "Every tool must include a title and the applicable hint";
			// claude.com/docs/connectors/building/submission: "the portal
			// flags tools that are missing them". Via the survey, checked
			// 2026-10-02.
			{
				Rule: "claude-directory/title", Level: Error,
				Summary:    "a tool without a title (title, or annotations.title)",
				Source:     "https://claude.com/docs/connectors/building/review-criteria#provide-tool-annotations",
				Read:       "2026-10-02",
				Confidence: "medium",
				check: func(t Tool, _ connect.Listed) string {
					if strings.TrimSpace(t.Title) == "" {
						return "no title: every tool needs one (title, or annotations.title, where Anthropic's checklist asks for it)"
					}
					return ""
				},
			},
			// anthropics/claude-plugins-official @340e33ae
			// plugins/mcp-server-dev/skills/build-mcp-app/references/directory-checklist.md
			// L9: every tool sets "annotations.title plus the relevant
			// hints"; L4: "Each item is a hard review criterion". Read
			// 2026-12-01 (the file unchanged since f4b5494f, 2026-04-28);
			// not seen on a claude.com page itself. A tool with no title
			// at all breaks the rule above, and only that one.
			{
				Rule: "claude-directory/annotations-title", Level: Error,
				Summary:    "a title, but not in annotations.title",
				Source:     "anthropics/claude-plugins-official plugins/mcp-server-dev/skills/build-mcp-app/references/directory-checklist.md @340e33ae",
				Read:       "2026-12-01",
				Confidence: "low",
				check: func(t Tool, l connect.Listed) string {
					if strings.TrimSpace(t.Title) != "" && strings.TrimSpace(annotationsTitle(l.Annotations)) == "" {
						return "a title, but no annotations.title: Anthropic's directory checklist asks every tool for annotations.title"
					}
					return ""
				},
			},
			// claude.com/docs/connectors/building/mcp#tool-hints: "All MCP
			// tools must declare both of these annotations: readOnlyHint …
			// destructiveHint"; support.claude.com/en/articles/13145358
			// (Directory Policy §5). The review criteria ask for "the
			// applicable hint: readOnlyHint: true for read-only tools, and
			// destructiveHint: true for tools that modify or delete data".
			// Both readings need readOnlyHint, and destructiveHint on a
			// write: an error. Via the survey, checked 2026-10-02.
			{
				Rule: "claude-directory/hints", Level: Error,
				Summary:    "no readOnlyHint, or a write without destructiveHint",
				Source:     "https://claude.com/docs/connectors/building/mcp#tool-hints; https://claude.com/docs/connectors/building/review-criteria#provide-tool-annotations",
				Read:       "2026-10-02",
				Confidence: "medium",
				check: func(t Tool, _ connect.Listed) string {
					if isTrue(t.Declared.ReadOnly) {
						return missingHints(t, "readOnlyHint")
					}
					return missingHints(t, "readOnlyHint", "destructiveHint")
				},
			},
			// The same checklist, L9: "destructiveHint / idempotentHint
			// for writes". Read 2026-12-01.
			{
				Rule: "claude-directory/idempotent-hint", Level: Error,
				Summary:    "a write without idempotentHint",
				Source:     "anthropics/claude-plugins-official plugins/mcp-server-dev/skills/build-mcp-app/references/directory-checklist.md @340e33ae",
				Read:       "2026-12-01",
				Confidence: "low",
				check: func(t Tool, _ connect.Listed) string {
					if isTrue(t.Declared.ReadOnly) {
						return ""
					}
					if t.Declared.Idempotent == nil {
						return "a write without idempotentHint: Anthropic's directory checklist asks writes for destructiveHint and idempotentHint"
					}
					return ""
				},
			},
			// Only the hint page asks a read for destructiveHint as well:
			// a warning, as the pages disagree.
			{
				Rule: "claude-directory/read-destructive-hint", Level: Warning,
				Summary:    "a read without destructiveHint",
				Source:     "https://claude.com/docs/connectors/building/mcp#tool-hints",
				Read:       "2026-10-02",
				Confidence: "medium",
				check: func(t Tool, _ connect.Listed) string {
					if isTrue(t.Declared.ReadOnly) && t.Declared.Destructive == nil {
						return "a read without destructiveHint: the page on tool hints asks every tool for both hints, the review criteria only for the applicable one; declare destructiveHint false to satisfy both"
					}
					return ""
				},
			},
			// claude.com/docs/connectors/building/review-criteria#separate-read-and-write-tools:
			// "A single tool that accepts both safe HTTP methods … and
			// unsafe methods … is rejected." Via the survey, checked
			// 2026-10-02.
			{
				Rule: "claude-directory/catch-all", Level: Error,
				Summary:    "an argument that chooses between reading and writing",
				Source:     "https://claude.com/docs/connectors/building/review-criteria#separate-read-and-write-tools",
				Read:       "2026-10-02",
				Confidence: "medium",
				check: func(_ Tool, l connect.Listed) string {
					if c := catchAll(l.InputSchema); c != "" {
						return c + ": split it into a read-only tool and write tools"
					}
					return ""
				},
			},
			// anthropics/claude-plugins-official @340e33ae
			// plugins/mcp-server-dev/skills/build-mcp-app/references/directory-checklist.md
			// L10: tool names "≤ 64 characters, snake/kebab case"; L4:
			// "Each item is a hard review criterion". Read 2026-12-01; not
			// seen on a claude.com page itself.
			{
				Rule: "claude-directory/name-length", Level: Error,
				Summary:    "a name longer than 64 characters",
				Source:     "anthropics/claude-plugins-official plugins/mcp-server-dev/skills/build-mcp-app/references/directory-checklist.md @340e33ae",
				Read:       "2026-12-01",
				Confidence: "low",
				check: func(t Tool, _ connect.Listed) string {
					if n := utf8.RuneCountInString(t.Name); n > 64 {
						return fmt.Sprintf("the name has %d characters: at most 64", n)
					}
					return ""
				},
			},
			// The same checklist: "snake/kebab case". A warning: the
			// checklist does not say what else a name may hold.
			{
				Rule: "claude-directory/name-case", Level: Warning,
				Summary:    "a name not in snake_case or kebab-case",
				Source:     "anthropics/claude-plugins-official plugins/mcp-server-dev/skills/build-mcp-app/references/directory-checklist.md @340e33ae",
				Read:       "2026-12-01",
				Confidence: "low",
				check: func(t Tool, _ connect.Listed) string {
					if !snakeOrKebab(t.Name) {
						return "the name is not in snake_case or kebab-case (lower-case letters, digits, _ or -)"
					}
					return ""
				},
			},
			// The same checklist, L9, wants "openWorldHint: true if the
			// tool reaches an external system": a reviewer cannot tell
			// without it.
			{
				Rule: "claude-directory/open-world-hint", Level: Warning,
				Summary:    "openWorldHint not explicit",
				Source:     "anthropics/claude-plugins-official plugins/mcp-server-dev/skills/build-mcp-app/references/directory-checklist.md @340e33ae",
				Read:       "2026-12-01",
				Confidence: "low",
				check: func(t Tool, _ connect.Listed) string {
					return missingHints(t, "openWorldHint")
				},
			},
			// review-criteria#separate-read-and-write-tools, as above: a
			// name that says it reads and writes may be a catch-all, which
			// only its arguments or behaviour can show.
			{
				Rule: "claude-directory/read-and-write-name", Level: Warning,
				Summary:    "a name that says it both reads and writes",
				Source:     "https://claude.com/docs/connectors/building/review-criteria#separate-read-and-write-tools",
				Read:       "2026-10-02",
				Confidence: "medium",
				check: func(t Tool, _ connect.Listed) string {
					v := verbsOf(t.Name)
					if w := cmpOr(v.write, v.delete); v.read != "" && w != "" {
						return fmt.Sprintf("the name says %s and %s: if one call can do either, split it into a read-only tool and a write tool", v.read, w)
					}
					return ""
				},
			},
		},
	},
	{
		Name:  "chatgpt-directory",
		Title: "ChatGPT app directory",
		Rules: []DirectoryRule{
			// developers.openai.com/plugins/plugin-guidelines#correct-annotation:
			// "Set readOnlyHint, destructiveHint, and openWorldHint to
			// explicit boolean values"; …/plugins/deploy/submission-errors,
			// annotations_required: "Errors block submission". Via the
			// survey, checked 2026-10-02. openai/plugins @40aff304
			// plugins/openai-developers/skills/chatgpt-app-submission/SKILL.md:
			// "Missing or null hints are submission blockers" (read
			// 2026-11-30).
			{
				Rule: "chatgpt-directory/hints", Level: Error,
				Summary:    "readOnlyHint, destructiveHint or openWorldHint not explicit",
				Source:     "https://developers.openai.com/plugins/plugin-guidelines#correct-annotation; openai/plugins plugins/openai-developers/skills/chatgpt-app-submission/SKILL.md @40aff304",
				Read:       "2026-10-02",
				Confidence: "medium",
				check: func(t Tool, _ connect.Listed) string {
					return missingHints(t, "readOnlyHint", "destructiveHint", "openWorldHint")
				},
			},
			// developers.openai.com/plugins/deploy/app-review (FAQ):
			// destructiveHint true "even in only select modes, through
			// default parameters"; SKILL.md @40aff304: "including via some
			// modes or parameters". Via the survey, checked 2026-10-02.
			{
				Rule: "chatgpt-directory/destructive-mode", Level: Error,
				Summary:    "an argument that can choose a deletion, without destructiveHint true",
				Source:     "https://developers.openai.com/plugins/deploy/app-review; openai/plugins plugins/openai-developers/skills/chatgpt-app-submission/SKILL.md @40aff304",
				Read:       "2026-10-02",
				Confidence: "medium",
				check: func(t Tool, l connect.Listed) string {
					if isTrue(t.Declared.Destructive) {
						return ""
					}
					if m := destructiveMode(l.InputSchema); m != "" {
						return m + ", but destructiveHint is not true: it must be, if any mode destroys"
					}
					return ""
				},
			},
		},
	},
}

// cmpOr returns the first of its arguments that is not "".
func cmpOr(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// missingHints says which of the hints named t's server left out, or ""
// if it declared them all.
func missingHints(t Tool, names ...string) string {
	var missing []string
	for _, name := range names {
		var h *bool
		switch name {
		case "readOnlyHint":
			h = t.Declared.ReadOnly
		case "destructiveHint":
			h = t.Declared.Destructive
		case "idempotentHint":
			h = t.Declared.Idempotent
		case "openWorldHint":
			h = t.Declared.OpenWorld
		}
		if h == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("%s must be explicit, true or false; missing: %s", joinAnd(names), strings.Join(missing, ", "))
}

func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func snakeOrKebab(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// The HTTP methods that only read, and those that may change something
// (RFC 9110, section 9.2.1).
var (
	safeMethods   = []string{"GET", "HEAD", "OPTIONS"}
	unsafeMethods = []string{"POST", "PUT", "PATCH", "DELETE"}
)

// A choice is an argument of a tool that takes one of a fixed set of
// values: a property of the input schema with an enum, or with oneOf or
// anyOf of consts, at the top level or as the items of an array.
type choice struct {
	property string
	values   []string
}

// choices returns the choices of an input schema, in the order of the
// property names. A schema that is not a JSON object has none.
func choices(schema json.RawMessage) []choice {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []choice
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	}) {
		var p struct {
			enumValues
			Items enumValues `json:"items"`
		}
		if json.Unmarshal(s.Properties[name], &p) != nil {
			continue
		}
		if v := append(p.values(), p.Items.values()...); len(v) > 0 {
			out = append(out, choice{name, v})
		}
	}
	return out
}

// enumValues holds the ways a JSON schema names the values it allows.
type enumValues struct {
	Enum  []any `json:"enum"`
	OneOf []struct {
		Const any `json:"const"`
	} `json:"oneOf"`
	AnyOf []struct {
		Const any `json:"const"`
	} `json:"anyOf"`
}

// values returns the string values e allows.
func (e enumValues) values() []string {
	var out []string
	for _, v := range e.Enum {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	for _, alts := range [][]struct {
		Const any `json:"const"`
	}{e.OneOf, e.AnyOf} {
		for _, a := range alts {
			if s, ok := a.Const.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// catchAll says how the input schema lets one tool both read and write,
// or returns "": an argument whose values mix safe and unsafe HTTP
// methods, or values that read (list, get) with values that write or
// delete (create, delete).
func catchAll(schema json.RawMessage) string {
	for _, c := range choices(schema) {
		var safe, unsafe, reads, writes []string
		for _, v := range c.values {
			switch up := strings.ToUpper(v); {
			case slices.Contains(safeMethods, up):
				safe = append(safe, v)
			case slices.Contains(unsafeMethods, up):
				unsafe = append(unsafe, v)
			}
			verbs := verbsOf(v)
			if verbs.readsOnly() {
				reads = append(reads, v)
			} else if verbs.write != "" || verbs.delete != "" {
				writes = append(writes, v)
			}
		}
		switch {
		case len(safe) > 0 && len(unsafe) > 0:
			return fmt.Sprintf("its %s argument takes both safe HTTP methods (%s) and unsafe ones (%s)",
				printable(c.property), quoteList(safe), quoteList(unsafe))
		case len(reads) > 0 && len(writes) > 0:
			return fmt.Sprintf("its %s argument chooses between reading (%s) and writing (%s)",
				printable(c.property), quoteList(reads), quoteList(writes))
		}
	}
	return ""
}

// destructiveMode says which argument of the input schema can choose a
// deletion (DELETE, or a value such as delete or remove), or returns "".
func destructiveMode(schema json.RawMessage) string {
	for _, c := range choices(schema) {
		for _, v := range c.values {
			if strings.EqualFold(v, "DELETE") || verbsOf(v).delete != "" {
				return fmt.Sprintf("its %s argument can be %s", printable(c.property), quoteList([]string{v}))
			}
		}
	}
	return ""
}

// quoteList quotes at most four values, for a message.
func quoteList(values []string) string {
	var q []string
	for i, v := range values {
		if i == 4 {
			q = append(q, "…")
			break
		}
		q = append(q, printable(v))
	}
	return strings.Join(q, ", ")
}

// DirectoryProfiles returns every directory profile.
func DirectoryProfiles() []DirectoryProfile {
	return slices.Clone(directoryProfiles)
}

// SelectDirectories returns the profiles named, separated by commas, or
// every profile for "all".
func SelectDirectories(names string) ([]DirectoryProfile, error) {
	var known []string
	for _, p := range directoryProfiles {
		known = append(known, p.Name)
	}
	want := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if n != "all" && !slices.Contains(known, n) {
			return nil, fmt.Errorf("unknown profile %q: want all, or one or more of %s", n, strings.Join(known, ", "))
		}
		want[n] = true
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("no profile named: want all, or one or more of %s", strings.Join(known, ", "))
	}
	var out []DirectoryProfile
	for _, p := range directoryProfiles {
		if want["all"] || want[p.Name] {
			out = append(out, p)
		}
	}
	return out, nil
}

// A DirectoryReport sums up what one directory profile found.
type DirectoryReport struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Read is the date of the oldest source among the profile's rules.
	Read string `json:"read"`
	// Rejected counts the tools with a finding at the error level: those
	// the directory would reject.
	Rejected int    `json:"rejected"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
	Summary  string `json:"summary"`
}

// checkDirectory adds the findings of profile p to r, for tools as
// listed, and sums them up.
func (r *Report) checkDirectory(p DirectoryProfile, tools []connect.Listed) {
	d := DirectoryReport{Name: p.Name, Title: p.Title}
	for _, rule := range p.Rules {
		if d.Read == "" || rule.Read < d.Read {
			d.Read = rule.Read
		}
	}
	for i, t := range r.Tools {
		rejected := false
		for _, rule := range p.Rules {
			msg := rule.check(t, tools[i])
			if msg == "" {
				continue
			}
			r.Findings = append(r.Findings, Finding{Tool: t.Name, Level: rule.Level, Rule: rule.Rule, Message: msg})
			if rule.Level == Error {
				d.Errors++
				rejected = true
			} else {
				d.Warnings++
			}
		}
		if rejected {
			d.Rejected++
		}
	}
	label := fmt.Sprintf("%s (rules read %s)", p.Title, d.Read)
	switch {
	case d.Rejected > 0:
		d.Summary = fmt.Sprintf("%s: would reject %d of %s (%s, %s).", label, d.Rejected, plural(len(r.Tools), "tool"),
			plural(d.Errors, "error"), plural(d.Warnings, "warning"))
	case d.Warnings > 0:
		d.Summary = fmt.Sprintf("%s: no rule it documents as a reason to reject is broken; %s.", label, plural(d.Warnings, "warning"))
	default:
		d.Summary = fmt.Sprintf("%s: no rule that can be checked from the tool list is broken.", label)
	}
	r.Directories = append(r.Directories, d)
}

// directoryRule returns the directory rule named r, if there is one.
func directoryRule(r Rule) (DirectoryRule, bool) {
	for _, p := range directoryProfiles {
		for _, rule := range p.Rules {
			if rule.Rule == r {
				return rule, true
			}
		}
	}
	return DirectoryRule{}, false
}
