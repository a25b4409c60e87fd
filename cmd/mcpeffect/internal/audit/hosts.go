package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpeffect/mcpeffect/host"
)

// An Outcome is what a host does with a call to a tool before it sends
// it, as far as the tool's hints decide.
type Outcome uint8

// The outcomes, from the most to the least careful.
const (
	// Refused: the tool cannot be called in this mode (excluded, disabled
	// or denied).
	Refused Outcome = iota + 1
	// AsksAlways: the host asks a person, and no approval saved before (an
	// allow rule, "always allow") spares the question.
	AsksAlways
	// Asks: the host asks a person, unless they saved an approval for
	// the tool before.
	Asks
	// Judged: a language model decides at call time.
	Judged
	// Runs: the host calls the tool without asking.
	Runs
	// Settings: the host's own settings decide, by the tool's name,
	// whatever its hints.
	Settings
)

var outcomeNames = [...]string{Refused: "refused", AsksAlways: "asks-always", Asks: "asks", Judged: "judged", Runs: "runs", Settings: "settings"}

// String returns the outcome's name in -json: "refused", "asks-always",
// "asks", "judged", "runs" or "settings".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && outcomeNames[o] != "" {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// MarshalText implements [encoding.TextMarshaler].
func (o Outcome) MarshalText() ([]byte, error) {
	if o < Refused || o > Settings {
		return nil, fmt.Errorf("cannot marshal invalid outcome %d", uint8(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler].
func (o *Outcome) UnmarshalText(text []byte) error {
	for i, name := range outcomeNames {
		if name != "" && name == string(text) {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("unknown outcome %q", text)
}

// A HostProfile is what one host, in one of its modes, does with a tool
// from the tool's hints, as the host's code or documentation shows it.
// Profiles go stale as hosts change: each names its source and the date it
// was read, and the report shows them.
type HostProfile struct {
	Host     string // the name -host takes: "vscode"
	HostName string // for people: "VS Code"
	Mode     string // the mode's short name: "manual"
	ModeName string // for people: "manual approvals"
	Default  bool   // the mode a host starts in, unless set otherwise

	// Decide returns what the host does with a call to a tool whose
	// server declared hints h (a hint left out is nil, and the function
	// reads it as that host does), and whether the host has a person
	// review the tool's result before the model reads it.
	Decide func(h host.Hints) (o Outcome, reviewsOutput bool)
	// IgnoresHints says that the hints change nothing in this mode:
	// Decide gives every tool the same outcome, and Instead says what
	// decides.
	IgnoresHints bool
	Instead      string

	// Notes says what else matters, for people: exceptions, settings.
	Notes []string
	// Source names where the rule was read: a repository, path and
	// commit, or a URL.
	Source string
	// Read is the date the source was read, YYYY-MM-DD.
	Read string
	// Confidence is "high" where the code was read, "medium" for official
	// documentation or code quoted by a survey that names its commit,
	// "low" for issue threads, changelogs and third-party readings of
	// binaries.
	Confidence string
}

func isTrue(b *bool) bool { return b != nil && *b }

func valueOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// always returns a Decide function that gives every tool outcome o.
func always(o Outcome) func(host.Hints) (Outcome, bool) {
	return func(host.Hints) (Outcome, bool) { return o, false }
}

// hostProfiles is every profile: one row a host and mode, with its rule,
// its source and the date it was read. The research behind it, with
// quotes, is in the project's notes on hosts (hosts.md, read 2026-11-30);
// "survey" is a survey of MCP hosts whose evidence was checked on
// 2026-10-02, used where it names commits and quotes, and marked so.
var hostProfiles = []HostProfile{
	// microsoft/vscode src/vs/workbench/contrib/mcp/common/mcpLanguageModelToolContribution.ts
	// @027907cb (and @b801fe97, same logic): canRequestPreApproval =
	// !annotations?.readOnlyHint; confirmResults = !!annotations?.openWorldHint.
	// Docs: microsoft/vscode-docs docs/agents/run/approvals.md @0ac7ccf9.
	// Read 2026-11-30.
	{
		Host: "vscode", HostName: "VS Code", Mode: "manual", ModeName: "manual approvals", Default: true,
		Decide: func(h host.Hints) (Outcome, bool) {
			// JavaScript truthiness: a missing readOnlyHint asks, a missing
			// openWorldHint asks for no review.
			if isTrue(h.ReadOnly) {
				return Runs, isTrue(h.OpenWorld)
			}
			return Asks, isTrue(h.OpenWorld)
		},
		Notes: []string{
			"destructiveHint and idempotentHint are never read",
			"the result of a tool with openWorldHint true is shown to the person to review before it enters the chat (post-approval)",
			"approvals saved for the session, the workspace or always skip the question; chat.tools.eligibleForAutoApproval set to false for a tool always asks",
			"newer code skips confirmation for sandboxed MCP servers, whatever their hints (medium confidence)",
		},
		Source:     "microsoft/vscode src/vs/workbench/contrib/mcp/common/mcpLanguageModelToolContribution.ts @027907cb; microsoft/vscode-docs docs/agents/run/approvals.md @0ac7ccf9",
		Read:       "2026-11-30",
		Confidence: "high",
	},
	// microsoft/vscode-docs docs/agents/run/approvals.md @0ac7ccf9: the
	// "Allow all" permission level, Autopilot, chat.tools.global.autoApprove.
	// Read 2026-11-30.
	{
		Host: "vscode", HostName: "VS Code", Mode: "allow-all", ModeName: "Allow all, Autopilot or global auto-approve",
		Decide:       always(Runs),
		IgnoresHints: true,
		Instead:      "the permission level the person chose",
		Source:       "microsoft/vscode-docs docs/agents/run/approvals.md @0ac7ccf9",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// npm @anthropic-ai/claude-code-linux-x64@2.1.332 (published
	// 2026-11-24), bundle sha256 a2df1f41bb002509…: isReadOnly =
	// readOnlyHint ?? false; no branch allows a call on the hint alone
	// outside plan mode. Read 2026-11-30.
	{
		Host: "claude-code", HostName: "Claude Code", Mode: "default", ModeName: "default and acceptEdits modes", Default: true,
		Decide:       always(Asks),
		IgnoresHints: true,
		Instead:      "the allow rules of its settings, permissions.allow",
		Notes: []string{
			"readOnlyHint true only lets calls run in parallel",
			"it reads a missing destructiveHint or openWorldHint as false, the opposite of the specification",
			"a server can ask for a prompt on every call with _meta[\"anthropic/requiresUserInteraction\"]",
		},
		Source:     "npm @anthropic-ai/claude-code-linux-x64@2.1.332 (bundle sha256 a2df1f41bb002509…); code.claude.com/docs/en/mcp",
		Read:       "2026-11-30",
		Confidence: "medium",
	},
	// Same bundle, the plan-mode gate: mode plan, an MCP tool, !isReadOnly
	// → {behavior: "ask", message: "Cannot call X while in plan mode."},
	// before allow rules are read. Issues makeplane/plane-mcp-server#198,
	// anthropics/claude-code#78085 and #12368 (headless: denied).
	// Read 2026-11-30.
	{
		Host: "claude-code", HostName: "Claude Code", Mode: "plan", ModeName: "plan mode",
		Decide: func(h host.Hints) (Outcome, bool) {
			if isTrue(h.ReadOnly) {
				return Asks, false
			}
			return AsksAlways, false
		},
		Notes: []string{
			"a tool that is not readOnlyHint true gets \"Cannot call <tool> while in plan mode\" as a prompt even where an allow rule matches; a headless run (-p, dontAsk) denies it",
			"a readOnlyHint true tool is not run on its hint alone: it still needs an allow rule or a click",
		},
		Source:     "npm @anthropic-ai/claude-code-linux-x64@2.1.332 (bundle sha256 a2df1f41bb002509…), plan-mode gate; makeplane/plane-mcp-server#198; anthropics/claude-code#78085",
		Read:       "2026-11-30",
		Confidence: "high",
	},
	// openai/codex codex-rs/core/src/mcp_tool_call.rs @002500f2,
	// requires_mcp_tool_approval: DH == true → ask; RO == true → no ask;
	// else DH.unwrap_or(true) || OW.unwrap_or(true). Test
	// approval_required_when_annotations_are_absent @ca466061
	// (codex-rs/core/src/mcp_tool_call_tests.rs, via the survey).
	// Read 2026-11-30.
	{
		Host: "codex", HostName: "Codex", Mode: "auto", ModeName: "approval_mode auto", Default: true,
		Decide: func(h host.Hints) (Outcome, bool) {
			ask := isTrue(h.Destructive) ||
				!isTrue(h.ReadOnly) && (valueOr(h.Destructive, true) || valueOr(h.OpenWorld, true))
			if ask {
				return Asks, false
			}
			return Runs, false
		},
		Notes: []string{
			"a missing destructiveHint or openWorldHint counts as true; destructiveHint true asks even for a read-only tool",
			"a write that declares destructiveHint false and openWorldHint false runs without asking",
			"no prompt at all with full access (approval_policy never and a danger-full-access or external sandbox)",
			"older code (@002500f2) did not ask for a tool of a custom server with no annotations object at all; newer code (@ca466061) asks",
			"per tool, approval_mode prompt asks every time and approve never asks, whatever the hints",
		},
		Source:     "openai/codex codex-rs/core/src/mcp_tool_call.rs @002500f2; codex-rs/core/src/mcp_tool_call_tests.rs @ca466061",
		Read:       "2026-11-30",
		Confidence: "high",
	},
	// openai/codex mcp_tool_call.rs @ca466061 L2463–2493 (survey, checked
	// 2026-10-02) and an index copy read 2026-11-30:
	// requires_mcp_tool_approval_for_mode(Writes) = !readOnlyHint.unwrap_or(false).
	{
		Host: "codex", HostName: "Codex", Mode: "writes", ModeName: "approval_mode writes",
		Decide: func(h host.Hints) (Outcome, bool) {
			if isTrue(h.ReadOnly) {
				return Runs, false
			}
			return Asks, false
		},
		Notes:      []string{"destructiveHint is not read: a read-only tool runs even if it says it is destructive"},
		Source:     "openai/codex codex-rs/core/src/mcp_tool_call.rs @ca466061 (requires_mcp_tool_approval_for_mode)",
		Read:       "2026-11-30",
		Confidence: "medium",
	},
	// docs.github.com …/configure-mcp-servers (github/docs@87cce24 L91,
	// quoted by the survey, checked 2026-10-02): "Copilot code review
	// excludes tools when this annotation is missing or set to false";
	// GitHub changelog 2026-07-29.
	{
		Host: "copilot", HostName: "GitHub Copilot", Mode: "code-review", ModeName: "code review",
		Decide: func(h host.Hints) (Outcome, bool) {
			if isTrue(h.ReadOnly) {
				return Runs, false
			}
			return Refused, false
		},
		Notes:      []string{"code review runs unattended: it uses only readOnlyHint true tools, and leaves out every other"},
		Source:     "github/docs @87cce24, configure MCP servers for Copilot code review (via the survey); GitHub changelog 2026-07-29",
		Read:       "2026-10-02",
		Confidence: "medium",
	},
	// github/docs @1ff8128e, Copilot coding agent and MCP: "will not ask
	// for your approval"; the tools key allowlists by name. Read 2026-11-30.
	{
		Host: "copilot", HostName: "GitHub Copilot", Mode: "cloud-agent", ModeName: "cloud coding agent", Default: true,
		Decide:       always(Runs),
		IgnoresHints: true,
		Instead:      "the repository's tools allowlist, by name: a tool not on it is not offered",
		Source:       "github/docs @1ff8128e, extending Copilot coding agent with MCP",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// google-gemini/gemini-cli @5411f113 (snapshot of 2026-08-21):
	// policy/config.ts L638 (no rule matches: ask when interactive, else
	// deny), L564–600 (trust and mcp.allowed, non-plan modes only).
	// Read 2026-11-30.
	{
		Host: "gemini-cli", HostName: "Gemini CLI", Mode: "default", ModeName: "default mode", Default: true,
		Decide:       always(Asks),
		IgnoresHints: true,
		Instead:      "its policy rules, the server's trust setting and mcp.allowed; without them it asks, or denies when not interactive",
		Notes:        []string{"a user's policy rule may match on any hint (toolAnnotations), but no shipped rule does in this mode"},
		Source:       "google-gemini/gemini-cli policy/config.ts, policy/policy-engine.ts @5411f113",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// google-gemini/gemini-cli @5411f113 policies/plan.toml: deny all
	// (priority 40), then toolAnnotations={readOnlyHint=true} → ask_user
	// (priority 50, interactive only); tools/mcp-client.ts L1366
	// isReadOnly = readOnlyHint === true. Read 2026-11-30.
	{
		Host: "gemini-cli", HostName: "Gemini CLI", Mode: "plan", ModeName: "plan mode",
		Decide: func(h host.Hints) (Outcome, bool) {
			if isTrue(h.ReadOnly) {
				return Asks, false
			}
			return Refused, false
		},
		Notes: []string{
			"a non-interactive run in plan mode denies every MCP tool",
			"a user's policy rule can turn the question about a read-only tool into allow",
		},
		Source:     "google-gemini/gemini-cli policies/plan.toml, tools/mcp-client.ts @5411f113",
		Read:       "2026-11-30",
		Confidence: "high",
	},
	// aaif-goose/goose crates/goose/src/permission/permission_inspector.rs
	// @81aef283: Auto → allow. Read 2026-11-30.
	{
		Host: "goose", HostName: "goose", Mode: "auto", ModeName: "Autonomous mode", Default: true,
		Decide:       always(Runs),
		IgnoresHints: true,
		Instead:      "the mode alone",
		Notes:        []string{"other security inspectors may still stop a call"},
		Source:       "aaif-goose/goose crates/goose/src/permission/permission_inspector.rs @81aef283",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// Same file: SmartApprove → the user's per-tool permission, else
	// read_only_hint == Some(true) → allow; config/permission.rs:
	// Some(false) → ask; None → detect_read_only_requests (an LLM).
	// Read 2026-11-30.
	{
		Host: "goose", HostName: "goose", Mode: "smart", ModeName: "Smart Approve mode",
		Decide: func(h host.Hints) (Outcome, bool) {
			switch {
			case h.ReadOnly == nil:
				return Judged, false
			case *h.ReadOnly:
				return Runs, false
			}
			return Asks, false
		},
		Notes:      []string{"a permission the person set for the tool comes first; without readOnlyHint, a language model judges whether the call reads"},
		Source:     "aaif-goose/goose crates/goose/src/permission/permission_inspector.rs, config/permission.rs @81aef283",
		Read:       "2026-11-30",
		Confidence: "high",
	},
	// Same file, test approve_ignores_annotation. Read 2026-11-30.
	{
		Host: "goose", HostName: "goose", Mode: "approve", ModeName: "Manual Approval mode",
		Decide:       always(Asks),
		IgnoresHints: true,
		Instead:      "a permission the person set for each tool; without one it asks",
		Source:       "aaif-goose/goose crates/goose/src/permission/permission_inspector.rs @81aef283 (test approve_ignores_annotation)",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// Cursor 3.23.12 app bundle, function Igv (the survey's reading,
	// checked 2026-10-02; not re-checked): declared read = annotations
	// exist && destructiveHint !== true && readOnlyHint === true.
	{
		Host: "cursor", HostName: "Cursor", Mode: "admin-reads", ModeName: "admin allowlist of reads",
		Decide: func(h host.Hints) (Outcome, bool) {
			if isTrue(h.ReadOnly) && !isTrue(h.Destructive) {
				return Runs, false
			}
			return Refused, false
		},
		Notes: []string{
			"any other tool is disabled by the admin policy",
			"Cursor's public docs say MCP tools ask by default and do not mention hints; the same test sorts tools into reads and writes in the person's settings",
		},
		Source:     "Cursor 3.23.12 application bundle, function Igv (via the survey)",
		Read:       "2026-10-02",
		Confidence: "low",
	},
	// developers.openai.com/api/docs/guides/developer-mode#how-to-use (via
	// the survey, checked 2026-10-02): "Write actions by default require
	// confirmation"; "We respect the readOnlyHint tool annotation … Tools
	// without this hint are treated as write actions."
	{
		Host: "chatgpt", HostName: "ChatGPT", Mode: "developer", ModeName: "developer mode", Default: true,
		Decide: func(h host.Hints) (Outcome, bool) {
			if isTrue(h.ReadOnly) {
				return Runs, false
			}
			return Asks, false
		},
		Notes:      []string{"the person may remember an answer for the rest of a conversation"},
		Source:     "https://developers.openai.com/api/docs/guides/developer-mode#how-to-use",
		Read:       "2026-10-02",
		Confidence: "medium",
	},
	// support.claude.com/en/articles/13455879 (Connector tool approvals,
	// via the survey, checked 2026-10-02): with "Allow 'Always allow' for
	// connector tools" off (the default), write tools are approved per task
	// and saved always-allow is not honoured; "Read-only tools are exempt
	// only when the connector annotates them as read-only."
	{
		Host: "claude-cowork", HostName: "Claude Cowork", Mode: "team", ModeName: "Team and Enterprise defaults", Default: true,
		Decide: func(h host.Hints) (Outcome, bool) {
			if isTrue(h.ReadOnly) {
				return Asks, false
			}
			return AsksAlways, false
		},
		Notes: []string{
			"a tool that is not readOnlyHint true is approved again in each task: \"Allow for all tasks\" is greyed out, and saved always-allow is not honoured",
			"a readOnlyHint true tool may be allowed for all tasks",
		},
		Source:     "https://support.claude.com/en/articles/13455879-use-claude-cowork-on-team-and-enterprise-plans#h_1bd1fa754d",
		Read:       "2026-10-02",
		Confidence: "medium",
	},
	// cline/cline @21cb8d25 (snapshot of 2026-08-22)
	// apps/vscode/src/services/mcp/McpHub.ts L888–898: auto-approved iff the
	// name is in mcpServers[s].autoApprove; no annotation is read anywhere.
	// Read 2026-11-30.
	{
		Host: "cline", HostName: "Cline", Mode: "default", ModeName: "default", Default: true,
		Decide:       always(Asks),
		IgnoresHints: true,
		Instead:      "the server's autoApprove list, by tool name",
		Source:       "cline/cline apps/vscode/src/services/mcp/McpHub.ts @21cb8d25",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// continuedev/continue @d0a3c0b6 (snapshot of 2026-06-18)
	// core/config/profile/doLoadConfig.ts L213–226: MCP tools get
	// readonly false, annotations dropped; GUI default policy
	// allowedWithPermission. Read 2026-11-30.
	{
		Host: "continue", HostName: "Continue", Mode: "default", ModeName: "IDE extension", Default: true,
		Decide:       always(Asks),
		IgnoresHints: true,
		Instead:      "its tool policies, by name",
		Notes:        []string{"MCP tools stay available in plan mode; the CLI allows every tool when headless"},
		Source:       "continuedev/continue core/config/profile/doLoadConfig.ts, gui/src/redux/selectors/selectActiveTools.ts @d0a3c0b6",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// zed-industries/zed @00400088 crates/agent/src/tools/context_server_registry.rs:
	// kind() is always ToolKind::Other; run() always calls
	// authorize_third_party_tool. Read 2026-11-30.
	{
		Host: "zed", HostName: "Zed", Mode: "default", ModeName: "agent panel", Default: true,
		Decide:       always(Asks),
		IgnoresHints: true,
		Instead:      "its always_allow and always_deny settings, by name",
		Source:       "zed-industries/zed crates/agent/src/tools/context_server_registry.rs @00400088",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// The survey's reading of their code (checked 2026-10-02): approval by
	// tool name only, no reference to a hint. What each does by default
	// was not established.
	{
		Host: "roo-code", HostName: "Roo Code", Mode: "default", ModeName: "default", Default: true,
		Decide: always(Settings), IgnoresHints: true, Instead: "its auto-approve settings, by tool name",
		Source: "RooCodeInc/Roo-Code (via the survey)", Read: "2026-10-02", Confidence: "medium",
	},
	{
		Host: "opencode", HostName: "OpenCode", Mode: "default", ModeName: "default", Default: true,
		Decide: always(Settings), IgnoresHints: true, Instead: "its permission settings, by tool name",
		Source: "sst/opencode (via the survey)", Read: "2026-10-02", Confidence: "medium",
	},
	{
		Host: "kilo-code", HostName: "Kilo Code", Mode: "default", ModeName: "default", Default: true,
		Decide: always(Settings), IgnoresHints: true, Instead: "its auto-approve settings, by tool name",
		Source: "Kilo-Org/kilocode (via the survey)", Read: "2026-10-02", Confidence: "medium",
	},
	// JetBrains Junie docs (via the survey, checked 2026-10-02): "requires
	// user approval for … MCP tools"; no hint is documented.
	{
		Host: "junie", HostName: "JetBrains Junie", Mode: "default", ModeName: "default", Default: true,
		Decide: always(Asks), IgnoresHints: true, Instead: "its own approval settings",
		Source: "JetBrains Junie documentation (via the survey)", Read: "2026-10-02", Confidence: "medium",
	},
	// Google Antigravity docs (via the survey, checked 2026-10-02):
	// "unconfigured MCP tools run in Ask mode"; no hint is documented.
	{
		Host: "antigravity", HostName: "Google Antigravity", Mode: "default", ModeName: "default", Default: true,
		Decide: always(Asks), IgnoresHints: true, Instead: "the mode configured for each tool",
		Source: "Google Antigravity documentation (via the survey)", Read: "2026-10-02", Confidence: "medium",
	},
}

// HostProfiles returns every host profile, in the order reports list
// them.
func HostProfiles() []HostProfile {
	return slices.Clone(hostProfiles)
}

// HostNames returns the names -host takes, each once, in the order of
// [HostProfiles].
func HostNames() []string {
	var names []string
	for _, p := range hostProfiles {
		if !slices.Contains(names, p.Host) {
			names = append(names, p.Host)
		}
	}
	return names
}

// SelectHosts returns the profiles of the hosts named, in the order of
// [HostProfiles]: every mode of each host named, or every profile for
// "all". Names are separated by commas, and case does not matter.
func SelectHosts(names string) ([]HostProfile, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if n != "all" && !slices.Contains(HostNames(), n) {
			return nil, fmt.Errorf("unknown host %q: want all, or one or more of %s", n, strings.Join(HostNames(), ", "))
		}
		want[n] = true
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("no host named: want all, or one or more of %s", strings.Join(HostNames(), ", "))
	}
	var out []HostProfile
	for _, p := range hostProfiles {
		if want["all"] || want[p.Host] {
			out = append(out, p)
		}
	}
	return out, nil
}

// A HostReport is what one host profile does with each tool of a report.
type HostReport struct {
	Host         string      `json:"host"`
	HostName     string      `json:"hostName"`
	Mode         string      `json:"mode"`
	ModeName     string      `json:"modeName"`
	Default      bool        `json:"default,omitempty"`
	IgnoresHints bool        `json:"ignoresHints,omitempty"`
	Instead      string      `json:"instead,omitempty"`
	Notes        []string    `json:"notes,omitempty"`
	Source       string      `json:"source"`
	Read         string      `json:"read"`
	Confidence   string      `json:"confidence"`
	Tools        []HostTool  `json:"tools"`
	Counts       HostCounts  `json:"counts"`
	Summary      string      `json:"summary"`
	profile      HostProfile // for the text report
}

// A HostTool is what a host does with one tool.
type HostTool struct {
	Name    string  `json:"name"`
	Outcome Outcome `json:"outcome"`
	// ReviewsOutput says that a person reviews the tool's result before
	// the model reads it.
	ReviewsOutput bool `json:"reviewsOutput,omitempty"`
	// Outcomes holds, for a tool that publishes the outcomes of its calls
	// (see [Tool]), what the host does with a call of each, in the same
	// order.
	Outcomes []HostToolOutcome `json:"outcomes,omitempty"`
}

// A HostToolOutcome is what a host does with the calls of one published
// outcome of a tool. The host decides from the tool's hints, the worst
// case of its outcomes, since it cannot know the outcome of a call before
// it is made: Outcome is always the tool's own. WithOwnHints is what it
// would do with the outcome's hints, which it could only learn by asking
// the server to resolve the call, and no host profile does.
type HostToolOutcome struct {
	// Value is the outcome's value, as in [PublishedOutcome].
	Value         string  `json:"value,omitempty"`
	Outcome       Outcome `json:"outcome"`
	ReviewsOutput bool    `json:"reviewsOutput,omitempty"`
	WithOwnHints  Outcome `json:"withOwnHints"`
	// OwnReviewsOutput is ReviewsOutput with the outcome's own hints.
	OwnReviewsOutput bool `json:"ownReviewsOutput,omitempty"`
}

// HostCounts counts the tools of each outcome, and those whose output is
// reviewed.
type HostCounts struct {
	Refused       int `json:"refused"`
	AsksAlways    int `json:"asksAlways"`
	Asks          int `json:"asks"`
	Judged        int `json:"judged"`
	Runs          int `json:"runs"`
	Settings      int `json:"settings"`
	ReviewsOutput int `json:"reviewsOutput"`
}

func (c *HostCounts) of(o Outcome) *int {
	switch o {
	case Refused:
		return &c.Refused
	case AsksAlways:
		return &c.AsksAlways
	case Asks:
		return &c.Asks
	case Judged:
		return &c.Judged
	case Runs:
		return &c.Runs
	}
	return &c.Settings
}

// AddHosts adds to r what each profile does with each of its tools.
func (r *Report) AddHosts(profiles []HostProfile) {
	for _, p := range profiles {
		hr := HostReport{
			Host: p.Host, HostName: p.HostName, Mode: p.Mode, ModeName: p.ModeName, Default: p.Default,
			IgnoresHints: p.IgnoresHints, Instead: p.Instead, Notes: p.Notes,
			Source: p.Source, Read: p.Read, Confidence: p.Confidence,
			Tools:   []HostTool{},
			profile: p,
		}
		for _, t := range r.Tools {
			o, review := p.Decide(t.Declared)
			ht := HostTool{Name: t.Name, Outcome: o, ReviewsOutput: review}
			for _, po := range t.Outcomes {
				own, ownReview := p.Decide(po.Hints)
				ht.Outcomes = append(ht.Outcomes, HostToolOutcome{Value: po.Value, Outcome: o, ReviewsOutput: review, WithOwnHints: own, OwnReviewsOutput: ownReview})
			}
			hr.Tools = append(hr.Tools, ht)
			*hr.Counts.of(o)++
			if review {
				hr.Counts.ReviewsOutput++
			}
		}
		hr.Summary = hr.summary(len(r.Tools))
		r.Hosts = append(r.Hosts, hr)
	}
}

// label names the host and mode, the date its profile was read, and its
// confidence unless high.
func (h *HostReport) label() string {
	s := fmt.Sprintf("%s (%s, read %s", h.HostName, h.ModeName, h.Read)
	if h.Confidence != "high" {
		s += ", " + h.Confidence + " confidence"
	}
	return s + ")"
}

// summary says in one line what the host does with the n tools, such as
// "VS Code (manual approvals, read 2026-11-30): asks before 50 of 84
// tools; runs 34 without asking; reviews the output of 3."
func (h *HostReport) summary(n int) string {
	c := h.Counts
	if n == 0 {
		return h.label() + ": no tools."
	}
	if h.IgnoresHints && h.Tools[0].Outcome == Settings {
		return fmt.Sprintf("%s: ignores the hints; what it does is set by %s.", h.label(), h.Instead)
	}
	if h.IgnoresHints {
		var what string
		switch o := h.Tools[0].Outcome; o {
		case Runs:
			what = "runs every tool without asking"
		case Asks:
			what = "asks before every tool"
		case AsksAlways:
			what = "always asks before every tool"
		case Refused:
			what = "refuses every tool"
		default:
			what = "leaves every tool to a language model"
		}
		return fmt.Sprintf("%s: ignores the hints: %s (instead: %s).", h.label(), what, h.Instead)
	}
	var parts []string
	first := true
	add := func(count int, format string) {
		if count == 0 {
			return
		}
		num := fmt.Sprint(count)
		if first {
			num = fmt.Sprintf("%d of %s", count, plural(n, "tool"))
			first = false
		}
		parts = append(parts, fmt.Sprintf(format, num))
	}
	add(c.Refused, "refuses %s")
	add(c.AsksAlways, "always asks before %s, whatever was approved before")
	add(c.Asks, "asks before %s")
	add(c.Judged, "leaves %s to a language model's judgement")
	add(c.Runs, "runs %s without asking")
	if c.ReviewsOutput > 0 {
		parts = append(parts, fmt.Sprintf("reviews the output of %d", c.ReviewsOutput))
	}
	return h.label() + ": " + strings.Join(parts, "; ") + "."
}
