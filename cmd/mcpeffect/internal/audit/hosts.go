package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpeffect/mcpeffect/host"
)

// A HostAction is what a host does with a call to a tool before it sends
// it, as far as the tool's hints decide: refuse it, ask, run it. It is
// not an outcome of a tool's rule (mcpeffect.Outcome), what a call does.
type HostAction uint8

// The actions, from the most to the least careful.
const (
	// Refused: the tool cannot be called in this mode (excluded, disabled
	// or denied).
	Refused HostAction = iota + 1
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

var actionNames = [...]string{Refused: "refused", AsksAlways: "asks-always", Asks: "asks", Judged: "judged", Runs: "runs", Settings: "settings"}

// String returns the action's name in -json: "refused", "asks-always",
// "asks", "judged", "runs" or "settings".
func (o HostAction) String() string {
	if int(o) < len(actionNames) && actionNames[o] != "" {
		return actionNames[o]
	}
	return fmt.Sprintf("HostAction(%d)", uint8(o))
}

// MarshalText implements [encoding.TextMarshaler].
func (o HostAction) MarshalText() ([]byte, error) {
	if o < Refused || o > Settings {
		return nil, fmt.Errorf("cannot marshal invalid host action %d", uint8(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler].
func (o *HostAction) UnmarshalText(text []byte) error {
	for i, name := range actionNames {
		if name != "" && name == string(text) {
			*o = HostAction(i)
			return nil
		}
	}
	return fmt.Errorf("unknown host action %q", text)
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
	// Rule says in a few words, for people, what ActionFor does with the
	// hints; a profile that ignores them says what decides in Instead.
	Rule string

	// ActionFor returns what the host does with a call to a tool whose
	// server declared hints h (a hint left out is nil, and the function
	// reads it as that host does), and whether the host has a person
	// review the tool's result before the model reads it.
	ActionFor func(h host.Declared) (o HostAction, reviewsOutput bool)
	// IgnoresHints says that the hints change nothing in this mode:
	// ActionFor gives every tool the same action, and Instead says what
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
	// documentation, code quoted by a survey that names its commit, or
	// code read in copies that name no commit of the host's own
	// repository, "low" for issue and forum threads, changelogs,
	// third-party readings of binaries, and pages whose rule could not be
	// found again.
	Confidence string
}

func isTrue(b *bool) bool { return b != nil && *b }

func valueOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// always returns an ActionFor function that gives every tool the action o.
func always(o HostAction) func(host.Declared) (HostAction, bool) {
	return func(host.Declared) (HostAction, bool) { return o, false }
}

// hostProfiles is every profile: one row a host and mode, with its rule,
// its source and the date it was read. The research behind the rows read
// 2026-11-30 is in the project's notes on hosts (hosts.md); the rows read
// 2026-12-01 were read again from the source each names. "Survey" is a
// survey of MCP hosts whose evidence was checked on 2026-10-02, used
// where it names commits and quotes, and marked so.
var hostProfiles = []HostProfile{
	// microsoft/vscode src/vs/workbench/contrib/mcp/common/mcpLanguageModelToolContribution.ts
	// @027907cb (and @b801fe97, same logic): canRequestPreApproval =
	// !annotations?.readOnlyHint; confirmResults = !!annotations?.openWorldHint.
	// Docs: microsoft/vscode-docs docs/agents/run/approvals.md @0ac7ccf9.
	// Read 2026-11-30.
	{
		Host: "vscode", HostName: "VS Code", Mode: "manual", ModeName: "manual approvals", Default: true,
		Rule: "readOnlyHint true runs; any other tool asks; openWorldHint true has the result reviewed",
		ActionFor: func(h host.Declared) (HostAction, bool) {
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
		ActionFor:    always(Runs),
		IgnoresHints: true,
		Instead:      "the permission level the person chose",
		Source:       "microsoft/vscode-docs docs/agents/run/approvals.md @0ac7ccf9",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// code.claude.com/docs/en/permission-modes: "In auto mode, a second
	// model, the classifier, reviews actions instead of you"; from v2.1.283
	// auto is "the built-in starting permission mode for interactive
	// terminal and VS Code sessions". npm
	// @anthropic-ai/claude-code-linux-x64@2.1.333 (published 2026-11-30),
	// binary sha256 d8b4eb85b7df544a…: an MCP tool's
	// toAutoClassifierInput passes the classifier its name and its
	// arguments, not its annotations. Read 2026-12-01.
	{
		Host: "claude-code", HostName: "Claude Code", Mode: "auto", ModeName: "auto mode", Default: true,
		ActionFor:    always(Judged),
		IgnoresHints: true,
		Instead:      "its allow and deny rules, then a classifier model that reads each call's tool name and arguments, not its hints",
		Notes: []string{
			"the starting mode of interactive terminal and VS Code sessions from v2.1.283; earlier, only on Pro, Max and Team plans",
			"a call the classifier blocks is refused, and Claude is told why; some calls fall back to asking a person",
		},
		Source:     "https://code.claude.com/docs/en/permission-modes; npm @anthropic-ai/claude-code-linux-x64@2.1.333 (binary sha256 d8b4eb85b7df544a…)",
		Read:       "2026-12-01",
		Confidence: "medium",
	},
	// npm @anthropic-ai/claude-code-linux-x64@2.1.333, binary sha256
	// d8b4eb85b7df544a…: an MCP tool's isReadOnly is readOnlyHint ?? false,
	// and its permission check answers "passthrough" (ask, unless a rule
	// allows it) whatever its hints. Read 2026-12-01; the same held in
	// 2.1.332, read 2026-11-30.
	{
		Host: "claude-code", HostName: "Claude Code", Mode: "default", ModeName: "manual and acceptEdits modes",
		ActionFor:    always(Asks),
		IgnoresHints: true,
		Instead:      "the allow rules of its settings, permissions.allow",
		Notes: []string{
			"readOnlyHint true only lets calls run in parallel",
			"it reads a missing destructiveHint or openWorldHint as false, the opposite of the specification",
			"a server can ask for a prompt on every call with _meta[\"anthropic/requiresUserInteraction\"]",
		},
		Source:     "npm @anthropic-ai/claude-code-linux-x64@2.1.333 (binary sha256 d8b4eb85b7df544a…); code.claude.com/docs/en/mcp",
		Read:       "2026-12-01",
		Confidence: "medium",
	},
	// Same binary, the plan-mode gate: mode plan, an MCP tool, !isReadOnly
	// and a permission check that answered "passthrough" → {behavior:
	// "ask", message: "Cannot call X while in plan mode.", decisionReason
	// mode plan}. The changelog's "Fixed plan mode not auto-allowing
	// read-only tool calls" matches no path for MCP tools in this binary:
	// the check of a readOnlyHint true tool still answers "passthrough".
	// While auto mode is active, plan mode keeps its classifier (the
	// binary's test for the classifier counts mode plan with auto mode
	// active), where a read may run unasked: the fix may concern that.
	// Issues makeplane/plane-mcp-server#198, anthropics/claude-code#78085
	// and #12368 (headless: denied). Read 2026-12-01.
	{
		Host: "claude-code", HostName: "Claude Code", Mode: "plan", ModeName: "plan mode",
		Rule: "readOnlyHint true asks; any other tool always asks, whatever rule allows it",
		ActionFor: func(h host.Declared) (HostAction, bool) {
			if isTrue(h.ReadOnly) {
				return Asks, false
			}
			return AsksAlways, false
		},
		Notes: []string{
			"a tool that is not readOnlyHint true gets \"Cannot call <tool> while in plan mode\" as a prompt even where an allow rule matches; a headless run (-p, dontAsk) denies it",
			"a readOnlyHint true tool is not run on its hint alone: it still needs an allow rule or a click (the changelog's fix of plan mode \"auto-allowing read-only tool calls\" is not seen to reach MCP tools)",
			"this is plan mode entered from the manual mode: entered from auto mode, plan mode keeps auto mode's classifier, which may run a call without a prompt",
		},
		Source:     "npm @anthropic-ai/claude-code-linux-x64@2.1.333 (binary sha256 d8b4eb85b7df544a…), plan-mode gate; makeplane/plane-mcp-server#198; anthropics/claude-code#78085",
		Read:       "2026-12-01",
		Confidence: "medium",
	},
	// code.claude.com/docs/en/permission-modes: bypassPermissions skips
	// every permission prompt; writes to protected paths are the one
	// exception. Read 2026-12-01.
	{
		Host: "claude-code", HostName: "Claude Code", Mode: "bypass", ModeName: "bypassPermissions mode",
		ActionFor:    always(Runs),
		IgnoresHints: true,
		Instead:      "the mode alone, which --dangerously-skip-permissions sets",
		Notes:        []string{"deny rules still apply; writes to protected paths (.git, .claude) still ask"},
		Source:       "https://code.claude.com/docs/en/permission-modes",
		Read:         "2026-12-01",
		Confidence:   "medium",
	},
	// openai/codex codex-rs/core/src/mcp_tool_call.rs,
	// requires_mcp_tool_approval: DH == true → ask; RO == true → no ask;
	// else DH.unwrap_or(true) || OW.unwrap_or(true), the annotations
	// object read as Option, so a tool without one asks: annotations None
	// leaves destructive_hint None, and unwrap_or(true) asks (@002500f2,
	// read again 2026-12-01, and the newer copies). Read 2026-11-30.
	{
		Host: "codex", HostName: "Codex", Mode: "auto", ModeName: "approval_mode auto", Default: true,
		Rule: "destructiveHint true asks; else readOnlyHint true runs; else destructiveHint or openWorldHint true or missing asks, and the rest runs",
		ActionFor: func(h host.Declared) (HostAction, bool) {
			if codexAutoAsks(h) {
				return Asks, false
			}
			return Runs, false
		},
		Notes: []string{
			"a missing destructiveHint or openWorldHint counts as true; destructiveHint true asks even for a read-only tool",
			"a write that declares destructiveHint false and openWorldHint false runs without asking",
			"a tool with no annotations object at all asks: requires_mcp_tool_approval takes the object as an Option, and a missing one leaves every hint missing",
			"in the newer code read 2026-12-01, \"Allow for this session\" and \"always allow\" are kept in this mode only",
			"per tool, approval_mode prompt asks every time and approve never asks, whatever the hints",
		},
		Source:     "openai/codex codex-rs/core/src/mcp_tool_call.rs @002500f2 (requires_mcp_tool_approval)",
		Read:       "2026-11-30",
		Confidence: "high",
	},
	// openai/codex codex-rs/core/src/mcp_tool_call.rs:
	// requires_mcp_tool_approval_for_mode(Writes) =
	// !readOnlyHint.unwrap_or(false); normalize_approval_decision_for_mode
	// turns "for this session" and "always" into a single approval in
	// Prompt and Writes (test prompting_modes_do_not_allow_persistent_remember,
	// mcp_tool_call_tests.rs). Read 2026-12-01 in copies of the newer source
	// held by the search index; openai/codex's own snapshot was too large
	// to fetch.
	{
		Host: "codex", HostName: "Codex", Mode: "writes", ModeName: "approval_mode writes",
		Rule: "readOnlyHint true runs; any other tool asks, every time",
		ActionFor: func(h host.Declared) (HostAction, bool) {
			if isTrue(h.ReadOnly) {
				return Runs, false
			}
			return AsksAlways, false
		},
		Notes: []string{
			"destructiveHint is not read: a read-only tool runs even if it says it is destructive",
			"an approval for the session or for always is taken as a single one: every call of a tool that is not read-only asks again",
			"a tool set to approval_mode approve in the configuration runs without asking: that is another mode, not a saved answer",
		},
		Source:     "openai/codex codex-rs/core/src/mcp_tool_call.rs (requires_mcp_tool_approval_for_mode, normalize_approval_decision_for_mode); codex-rs/core/src/mcp_tool_call_tests.rs (prompting_modes_do_not_allow_persistent_remember)",
		Read:       "2026-12-01",
		Confidence: "medium",
	},
	// openai/codex codex-rs/codex-mcp/src/mcp/mod.rs @f16549fc,
	// mcp_permission_prompt_is_auto_approved: approval_policy Never and a
	// DangerFullAccess or ExternalSandbox policy approve the prompt; under
	// Never otherwise, mcp_tool_call.rs refuses the call with "MCP tool
	// call requires approval, but approval policy is never" (copies of the
	// newer source, and runs of codex exec 0.153 to 0.157 reported in
	// public code). Read 2026-12-01.
	{
		Host: "codex", HostName: "Codex", Mode: "never", ModeName: "approval_policy never",
		Rule: "what approval_mode auto asks about is refused; the rest runs",
		ActionFor: func(h host.Declared) (HostAction, bool) {
			if codexAutoAsks(h) {
				return Refused, false
			}
			return Runs, false
		},
		Notes: []string{
			"the call approval_mode auto would ask about is refused: \"MCP tool call requires approval, but approval policy is never\"",
			"with a danger-full-access or external sandbox every call runs instead, whatever the hints",
			"approval_mode approve on the server or the tool runs it; with writes, every tool that is not read-only is refused",
			"codex exec runs with this policy unless told otherwise",
		},
		Source:     "openai/codex codex-rs/codex-mcp/src/mcp/mod.rs @f16549fc (mcp_permission_prompt_is_auto_approved); codex-rs/core/src/mcp_tool_call.rs",
		Read:       "2026-12-01",
		Confidence: "medium",
	},
	// github/docs configure-mcp-servers.md @e0679b20, read 2026-12-01: the
	// sentence the survey quoted from @87cce24 ("Copilot code review
	// excludes tools when this annotation is missing or set to false") is
	// no longer on the page, nor is any rule on readOnlyHint; it says the
	// tools key allowlists tools and recommends read-only ones. The rule
	// rests on the survey's quote and the GitHub changelog of 2026-07-29.
	{
		Host: "copilot", HostName: "GitHub Copilot", Mode: "code-review", ModeName: "code review",
		Rule: "readOnlyHint true runs; any other tool is left out",
		ActionFor: func(h host.Declared) (HostAction, bool) {
			if isTrue(h.ReadOnly) {
				return Runs, false
			}
			return Refused, false
		},
		Notes: []string{
			"code review runs unattended: it uses only readOnlyHint true tools, and leaves out every other",
			"the current documentation no longer states this rule: it says only that the tools key allowlists tools, and recommends read-only ones",
		},
		Source:     "github/docs @87cce24, configure MCP servers (via the survey); GitHub changelog 2026-07-29; not in github/docs content/copilot/how-tos/copilot-on-github/customize-copilot/configure-mcp-servers.md @e0679b20",
		Read:       "2026-12-01",
		Confidence: "low",
	},
	// github/docs @1ff8128e, Copilot coding agent and MCP: "will not ask
	// for your approval"; the tools key allowlists by name. The same holds
	// in configure-mcp-servers.md @e0679b20. Read 2026-11-30.
	{
		Host: "copilot", HostName: "GitHub Copilot", Mode: "cloud-agent", ModeName: "cloud coding agent", Default: true,
		ActionFor:    always(Runs),
		IgnoresHints: true,
		Instead:      "the repository's tools allowlist, by name: a tool not on it is not offered",
		Source:       "github/docs @1ff8128e, extending Copilot coding agent with MCP",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// google-gemini/gemini-cli @5411f113 (snapshot of 2026-08-21, the
	// newest to be had on 2026-12-01): packages/core/src/policy/config.ts
	// L638 (no rule matches: ask when interactive, else deny), L564–600
	// (trust and mcp.allowed, non-plan modes only); tools/mcp-tool.ts L207
	// (trust in a trusted folder: no question). Read 2026-12-01.
	{
		Host: "gemini-cli", HostName: "Gemini CLI", Mode: "default", ModeName: "default mode", Default: true,
		ActionFor:    always(Asks),
		IgnoresHints: true,
		Instead:      "its policy rules, the server's trust setting and mcp.allowed; without them it asks, or denies when not interactive",
		Notes:        []string{"a user's policy rule may match on any hint (toolAnnotations), but no shipped rule does in this mode"},
		Source:       "google-gemini/gemini-cli packages/core/src/policy/config.ts, policy-engine.ts, tools/mcp-tool.ts @5411f113",
		Read:         "2026-12-01",
		Confidence:   "high",
	},
	// google-gemini/gemini-cli @5411f113 policies/plan.toml L76–81 deny all
	// (priority 40), L86–93 toolAnnotations={readOnlyHint=true} → ask_user
	// (priority 50, interactive only); tools/mcp-client.ts L1367
	// isReadOnly = readOnlyHint === true; tools/mcp-tool.ts L207–208: a
	// server with trust true in a trusted folder needs no confirmation, so
	// the question is skipped. Read 2026-12-01.
	{
		Host: "gemini-cli", HostName: "Gemini CLI", Mode: "plan", ModeName: "plan mode",
		Rule: "readOnlyHint true asks; any other tool is denied",
		ActionFor: func(h host.Declared) (HostAction, bool) {
			if isTrue(h.ReadOnly) {
				return Asks, false
			}
			return Refused, false
		},
		Notes: []string{
			"a non-interactive run in plan mode denies every MCP tool",
			"a readOnlyHint true tool of a server with trust: true, in a trusted folder, runs without the question; a user's policy rule can also turn it into allow",
		},
		Source:     "google-gemini/gemini-cli packages/core/src/policy/policies/plan.toml, tools/mcp-client.ts, tools/mcp-tool.ts @5411f113",
		Read:       "2026-12-01",
		Confidence: "high",
	},
	// google-gemini/gemini-cli @5411f113 policies/yolo.toml L51–56:
	// toolName "*" → allow (priority 998, mode yolo). Read 2026-12-01.
	{
		Host: "gemini-cli", HostName: "Gemini CLI", Mode: "yolo", ModeName: "yolo mode",
		ActionFor:    always(Runs),
		IgnoresHints: true,
		Instead:      "the mode, set with --yolo: every tool is allowed",
		Notes:        []string{"rules of a higher tier still win: excluded tools and servers, and admin and user deny rules"},
		Source:       "google-gemini/gemini-cli packages/core/src/policy/policies/yolo.toml @5411f113",
		Read:         "2026-12-01",
		Confidence:   "high",
	},
	// QwenLM/qwen-code packages/core/src/core/permissionFlow.ts @0f870dd9:
	// isPlanModeBlocked is true in plan mode for any tool whose
	// confirmation is not of type "info"; tools/mcp-tool.ts @03977054: an
	// MCP tool's default permission is "ask" (or "allow" for trust true in
	// a trusted folder), its confirmation of type "mcp", and readOnlyHint
	// only sets its kind (Kind.Read), which the plan-mode check does not
	// read. A tool allowed by a rule or by trust runs before the check.
	// Read 2026-12-01 in the search index's copies (the snapshot was too
	// large to fetch).
	{
		Host: "qwen-code", HostName: "Qwen Code", Mode: "plan", ModeName: "plan mode",
		ActionFor:    always(Refused),
		IgnoresHints: true,
		Instead:      "its permission rules and the server's trust: a tool they allow runs, and any other MCP tool is blocked as \"a non-read-only tool call\", readOnlyHint or not",
		Notes:        []string{"readOnlyHint true makes the tool's kind Read, which no plan-mode check reads"},
		Source:       "QwenLM/qwen-code packages/core/src/core/permissionFlow.ts @0f870dd9, packages/core/src/tools/mcp-tool.ts @03977054",
		Read:         "2026-12-01",
		Confidence:   "medium",
	},
	// aaif-goose/goose crates/goose/src/permission/permission_inspector.rs
	// @81aef283: Auto → allow. Read 2026-11-30.
	{
		Host: "goose", HostName: "goose", Mode: "auto", ModeName: "Autonomous mode", Default: true,
		ActionFor:    always(Runs),
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
		Rule: "readOnlyHint true runs; false asks; missing, a language model judges",
		ActionFor: func(h host.Declared) (HostAction, bool) {
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
		ActionFor:    always(Asks),
		IgnoresHints: true,
		Instead:      "a permission the person set for each tool; without one it asks",
		Source:       "aaif-goose/goose crates/goose/src/permission/permission_inspector.rs @81aef283 (test approve_ignores_annotation)",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// Third-party readings of the Cursor agent's bundle
	// (cursor-agent-exec dist/main.js), in public code read 2026-12-01:
	// McpPermissionDeniedError, when the session is read-only, answers "You
	// are in ask mode and cannot run non read-only tools."; and
	// sourcebot-dev/sourcebot#1013 (merged 2026-03-17): its MCP tools did
	// not work in Ask mode until they declared readOnlyHint true.
	{
		Host: "cursor", HostName: "Cursor", Mode: "ask", ModeName: "Ask mode",
		Rule: "readOnlyHint true asks; any other tool is refused",
		ActionFor: func(h host.Declared) (HostAction, bool) {
			if isTrue(h.ReadOnly) {
				return Asks, false
			}
			return Refused, false
		},
		Notes: []string{
			"a tool without readOnlyHint true is refused: \"You are in ask mode and cannot run non read-only tools.\"",
			"a readOnlyHint true tool goes through Cursor's usual MCP approval, which asks unless the person set it to run",
			"whether Ask mode also reads destructiveHint, as the admin allowlist of reads does, was not established",
		},
		Source:     "third-party readings of the Cursor agent bundle (cursor-agent-exec dist/main.js, McpPermissionDeniedError); sourcebot-dev/sourcebot#1013",
		Read:       "2026-12-01",
		Confidence: "low",
	},
	// Cursor 3.23.12 app bundle, function Igv (the survey's reading,
	// checked 2026-10-02): declared read = annotations exist &&
	// destructiveHint !== true && readOnlyHint === true. No newer source
	// was found on 2026-12-01.
	{
		Host: "cursor", HostName: "Cursor", Mode: "admin-reads", ModeName: "admin allowlist of reads",
		Rule: "readOnlyHint true and destructiveHint not true runs; any other tool is disabled",
		ActionFor: func(h host.Declared) (HostAction, bool) {
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
	// confirmation"; "We respect the readOnlyHint tool annotation".
	// community.openai.com/t/action-confirmation-for-read-only-tool/1381879
	// (an OpenAI answer, read 2026-12-01): read-only is no automatic
	// exemption from the confirmation dialogs, "which are model-driven".
	{
		Host: "chatgpt", HostName: "ChatGPT", Mode: "developer", ModeName: "developer mode", Default: true,
		Rule: "readOnlyHint true is left to a model; any other tool asks",
		ActionFor: func(h host.Declared) (HostAction, bool) {
			if isTrue(h.ReadOnly) {
				return Judged, false
			}
			return Asks, false
		},
		Notes: []string{
			"a tool without readOnlyHint true is a write, which asks",
			"whether a readOnlyHint true tool asks is decided by a model, from the whole conversation: it may ask every time",
			"the person may remember an answer for the rest of a conversation",
		},
		Source:     "https://developers.openai.com/api/docs/guides/developer-mode#how-to-use; https://community.openai.com/t/action-confirmation-for-read-only-tool/1381879",
		Read:       "2026-12-01",
		Confidence: "low",
	},
	// support.claude.com/en/articles/13455879 (Connector tool approvals,
	// via the survey, checked 2026-10-02): with "Allow 'Always allow' for
	// connector tools" off (the default), write tools are approved per task
	// and saved always-allow is not honoured; "Read-only tools are exempt
	// only when the connector annotates them as read-only." Read again
	// 2026-12-01: the stored copies of the page no longer show that
	// section.
	{
		Host: "claude-cowork", HostName: "Claude Cowork", Mode: "team", ModeName: "Team and Enterprise defaults", Default: true,
		Rule: "readOnlyHint true asks; any other tool asks again in every task",
		ActionFor: func(h host.Declared) (HostAction, bool) {
			if isTrue(h.ReadOnly) {
				return Asks, false
			}
			return AsksAlways, false
		},
		Notes: []string{
			"a tool that is not readOnlyHint true is approved again in each task: \"Allow for all tasks\" is greyed out, and saved always-allow is not honoured",
			"a readOnlyHint true tool may be allowed for all tasks",
			"the page read again on 2026-12-01 no longer shows this section",
		},
		Source:     "https://support.claude.com/en/articles/13455879-use-claude-cowork-on-team-and-enterprise-plans#h_1bd1fa754d (via the survey)",
		Read:       "2026-10-02",
		Confidence: "low",
	},
	// cline/cline @21cb8d25 (snapshot of 2026-08-22)
	// apps/vscode/src/services/mcp/McpHub.ts L888–898: auto-approved iff the
	// name is in mcpServers[s].autoApprove; no annotation is read anywhere.
	// Read 2026-11-30.
	{
		Host: "cline", HostName: "Cline", Mode: "default", ModeName: "default", Default: true,
		ActionFor:    always(Asks),
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
		ActionFor:    always(Asks),
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
		ActionFor:    always(Asks),
		IgnoresHints: true,
		Instead:      "its always_allow and always_deny settings, by name",
		Source:       "zed-industries/zed crates/agent/src/tools/context_server_registry.rs @00400088",
		Read:         "2026-11-30",
		Confidence:   "high",
	},
	// RooCodeInc/Roo-Code @cb836567 (snapshot of 2026-04-14, the newest to
	// be had) src/core/auto-approval/index.ts L62, L92–103: a tool call is
	// approved iff auto-approval is on, alwaysAllowMcp is set and the tool
	// is on its server's alwaysAllow list; no annotation is read anywhere
	// in src. Read 2026-12-01.
	{
		Host: "roo-code", HostName: "Roo Code", Mode: "default", ModeName: "default", Default: true,
		ActionFor: always(Asks), IgnoresHints: true,
		Instead: "auto-approval with alwaysAllowMcp, and the server's alwaysAllow list, by tool name",
		Source:  "RooCodeInc/Roo-Code src/core/auto-approval/index.ts @cb836567", Read: "2026-12-01", Confidence: "high",
	},
	// opencode.ai/v1/docs/permissions: each permission rule is allow, ask
	// or deny, by tool name or pattern, and without any OpenCode allows
	// all operations (the docs' own words since
	// packages/web/src/content/docs/permissions.mdx @16ccb394); --auto
	// approves what would ask. The repository snapshot could not be had.
	// Read 2026-12-01.
	{
		Host: "opencode", HostName: "OpenCode", Mode: "default", ModeName: "default", Default: true,
		ActionFor: always(Runs), IgnoresHints: true,
		Instead: "its permission config, by tool name or pattern: a tool that no rule names is allowed",
		Source:  "https://opencode.ai/v1/docs/permissions/", Read: "2026-12-01", Confidence: "medium",
	},
	// Kilo-Org/kilocode src/core/auto-approval/index.ts @0f7263b5 (the
	// search index's copy): the same rule as Roo Code's, by name; no
	// annotation is read. Read 2026-12-01.
	{
		Host: "kilo-code", HostName: "Kilo Code", Mode: "default", ModeName: "VS Code extension", Default: true,
		ActionFor: always(Asks), IgnoresHints: true,
		Instead: "auto-approval with alwaysAllowMcp, and the server's alwaysAllow list, by tool name",
		Source:  "Kilo-Org/kilocode src/core/auto-approval/index.ts @0f7263b5", Read: "2026-12-01", Confidence: "medium",
	},
	// jetbrains.com/help/junie/user-approval.html: "execution of MCP tools
	// [is] considered to be sensitive", and "Junie by default requires
	// explicit approval"; the Action Allowlist and Brave Mode lift it.
	// Read 2026-12-01.
	{
		Host: "junie", HostName: "JetBrains Junie", Mode: "default", ModeName: "default", Default: true,
		ActionFor: always(Asks), IgnoresHints: true,
		Instead: "its Action Allowlist; Brave Mode runs every action without asking",
		Source:  "https://www.jetbrains.com/help/junie/user-approval.html", Read: "2026-12-01", Confidence: "medium",
	},
	// Google Antigravity docs (via the survey, checked 2026-10-02):
	// "unconfigured MCP tools run in Ask mode"; no hint is documented. No
	// page could be read again on 2026-12-01.
	{
		Host: "antigravity", HostName: "Google Antigravity", Mode: "default", ModeName: "default", Default: true,
		ActionFor: always(Asks), IgnoresHints: true, Instead: "the mode configured for each tool",
		Source: "Google Antigravity documentation (via the survey)", Read: "2026-10-02", Confidence: "low",
	},
}

// codexAutoAsks is Codex's rule in approval_mode auto: destructiveHint
// true asks; else readOnlyHint true runs; else a missing destructiveHint
// or openWorldHint counts as true, and either asks.
func codexAutoAsks(h host.Declared) bool {
	return isTrue(h.Destructive) ||
		!isTrue(h.ReadOnly) && (valueOr(h.Destructive, true) || valueOr(h.OpenWorld, true))
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
	Name   string     `json:"name"`
	Action HostAction `json:"outcome"`
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
// it is made: HostAction is always the tool's own. WithOwnHints is what it
// would do with the outcome's hints, which it could only learn by asking
// the server to resolve the call, and no host profile does.
type HostToolOutcome struct {
	// Value is the outcome's value, as in [connect.PublishedOutcome].
	Value         string     `json:"value,omitempty"`
	Action        HostAction `json:"outcome"`
	ReviewsOutput bool       `json:"reviewsOutput,omitempty"`
	WithOwnHints  HostAction `json:"withOwnHints"`
	// OwnReviewsOutput is ReviewsOutput with the outcome's own hints.
	OwnReviewsOutput bool `json:"ownReviewsOutput,omitempty"`
}

// HostCounts counts the tools of each action, and those whose output is
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

func (c *HostCounts) of(o HostAction) *int {
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
			o, review := p.ActionFor(t.Declared)
			ht := HostTool{Name: t.Name, Action: o, ReviewsOutput: review}
			for _, po := range t.Outcomes {
				own, ownReview := p.ActionFor(po.Declared)
				ht.Outcomes = append(ht.Outcomes, HostToolOutcome{Value: po.Value, Action: o, ReviewsOutput: review, WithOwnHints: own, OwnReviewsOutput: ownReview})
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
	if h.IgnoresHints && h.Tools[0].Action == Settings {
		return fmt.Sprintf("%s: ignores the hints; what it does is set by %s.", h.label(), h.Instead)
	}
	if h.IgnoresHints {
		var what string
		switch o := h.Tools[0].Action; o {
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
