package audit

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/host"
)

func hints(t *testing.T, annotations string) host.Declared {
	t.Helper()
	h, err := host.ParseDeclared([]byte(annotations))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func profile(t *testing.T, hostName, mode string) HostProfile {
	t.Helper()
	for _, p := range HostProfiles() {
		if p.Host == hostName && p.Mode == mode {
			return p
		}
	}
	t.Fatalf("no profile %s/%s", hostName, mode)
	return HostProfile{}
}

// TestHostRules holds each profile's rule against the host's own rule as
// its source states it, a hint left out read as that host reads it.
func TestHostRules(t *testing.T) {
	for _, tc := range []struct {
		host, mode  string
		annotations string
		want        HostAction
		review      bool
	}{
		// VS Code: !readOnlyHint asks; !!openWorldHint reviews the result.
		{"vscode", "manual", `{}`, Asks, false},
		{"vscode", "manual", `{"readOnlyHint": true}`, Runs, false},
		{"vscode", "manual", `{"readOnlyHint": true, "openWorldHint": true}`, Runs, true},
		{"vscode", "manual", `{"readOnlyHint": false, "openWorldHint": true}`, Asks, true},
		{"vscode", "manual", `{"readOnlyHint": false, "destructiveHint": false}`, Asks, false},
		// destructiveHint is never read.
		{"vscode", "manual", `{"readOnlyHint": true, "destructiveHint": true}`, Runs, false},

		// Claude Code plan mode: readOnlyHint ?? false.
		{"claude-code", "plan", `{}`, AsksAlways, false},
		{"claude-code", "plan", `{"readOnlyHint": false}`, AsksAlways, false},
		{"claude-code", "plan", `{"readOnlyHint": true}`, Asks, false},

		// Codex auto: DH true asks; RO true runs; else DH ?? true || OW ?? true.
		{"codex", "auto", `{}`, Asks, false},
		{"codex", "auto", `{"readOnlyHint": true}`, Runs, false},
		{"codex", "auto", `{"readOnlyHint": true, "destructiveHint": true}`, Asks, false},
		{"codex", "auto", `{"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}`, Runs, false},
		{"codex", "auto", `{"readOnlyHint": false, "destructiveHint": false}`, Asks, false},
		{"codex", "auto", `{"readOnlyHint": false, "openWorldHint": false}`, Asks, false},
		{"codex", "auto", `{"destructiveHint": false, "openWorldHint": false}`, Runs, false},
		{"codex", "auto", `{"readOnlyHint": false, "destructiveHint": false, "openWorldHint": true}`, Asks, false},
		// Codex writes: readOnlyHint alone, and no approval is remembered.
		{"codex", "writes", `{"readOnlyHint": true, "destructiveHint": true}`, Runs, false},
		{"codex", "writes", `{"destructiveHint": false, "openWorldHint": false}`, AsksAlways, false},
		{"codex", "writes", `{}`, AsksAlways, false},
		// Codex with approval_policy never: what auto would ask about is
		// refused, the rest runs.
		{"codex", "never", `{}`, Refused, false},
		{"codex", "never", `{"readOnlyHint": true}`, Runs, false},
		{"codex", "never", `{"readOnlyHint": true, "destructiveHint": true}`, Refused, false},
		{"codex", "never", `{"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}`, Runs, false},
		{"codex", "never", `{"readOnlyHint": false, "destructiveHint": false}`, Refused, false},

		// Copilot code review keeps readOnlyHint true tools only.
		{"copilot", "code-review", `{"readOnlyHint": true}`, Runs, false},
		{"copilot", "code-review", `{}`, Refused, false},
		{"copilot", "code-review", `{"readOnlyHint": false}`, Refused, false},

		// Gemini CLI plan mode: readOnlyHint === true asks, the rest is denied.
		{"gemini-cli", "plan", `{"readOnlyHint": true}`, Asks, false},
		{"gemini-cli", "plan", `{"readOnlyHint": true, "destructiveHint": true}`, Asks, false},
		{"gemini-cli", "plan", `{}`, Refused, false},
		{"gemini-cli", "plan", `{"readOnlyHint": false}`, Refused, false},
		// Gemini CLI yolo mode allows everything.
		{"gemini-cli", "yolo", `{}`, Runs, false},
		{"gemini-cli", "yolo", `{"readOnlyHint": false, "destructiveHint": true}`, Runs, false},

		// Qwen Code plan mode blocks every MCP tool that would ask, read-only or not.
		{"qwen-code", "plan", `{"readOnlyHint": true}`, Refused, false},
		{"qwen-code", "plan", `{}`, Refused, false},

		// Claude Code auto mode: a classifier judges; bypassPermissions runs all.
		{"claude-code", "auto", `{"readOnlyHint": true}`, Judged, false},
		{"claude-code", "auto", `{}`, Judged, false},
		{"claude-code", "bypass", `{"readOnlyHint": false, "destructiveHint": true}`, Runs, false},
		{"claude-code", "default", `{"readOnlyHint": true}`, Asks, false},

		// goose Smart Approve: Some(true) runs, Some(false) asks, None: a model.
		{"goose", "smart", `{"readOnlyHint": true}`, Runs, false},
		{"goose", "smart", `{"readOnlyHint": false}`, Asks, false},
		{"goose", "smart", `{"destructiveHint": false}`, Judged, false},

		// Cursor's Ask mode refuses any tool without readOnlyHint true.
		{"cursor", "ask", `{"readOnlyHint": true}`, Asks, false},
		{"cursor", "ask", `{}`, Refused, false},
		{"cursor", "ask", `{"readOnlyHint": false, "destructiveHint": false}`, Refused, false},

		// Cursor's reads: readOnlyHint === true and destructiveHint !== true.
		{"cursor", "admin-reads", `{"readOnlyHint": true}`, Runs, false},
		{"cursor", "admin-reads", `{"readOnlyHint": true, "destructiveHint": true}`, Refused, false},
		{"cursor", "admin-reads", `{}`, Refused, false},

		// ChatGPT: a tool without readOnlyHint is a write, which asks; a
		// model decides whether a read asks.
		{"chatgpt", "developer", `{}`, Asks, false},
		{"chatgpt", "developer", `{"readOnlyHint": false}`, Asks, false},
		{"chatgpt", "developer", `{"readOnlyHint": true}`, Judged, false},

		// Claude Cowork: writes approved again in each task.
		{"claude-cowork", "team", `{"readOnlyHint": true}`, Asks, false},
		{"claude-cowork", "team", `{"readOnlyHint": false}`, AsksAlways, false},
	} {
		t.Run(fmt.Sprintf("%s/%s %s", tc.host, tc.mode, tc.annotations), func(t *testing.T) {
			o, review := profile(t, tc.host, tc.mode).ActionFor(hints(t, tc.annotations))
			if o != tc.want || review != tc.review {
				t.Errorf("outcome %s, reviews output %t; want %s, %t", o, review, tc.want, tc.review)
			}
		})
	}
}

// everyHints returns the 81 combinations of the four hints, each missing,
// false or true.
func everyHints() []host.Declared {
	values := []*bool{nil, new(bool), func() *bool { b := true; return &b }()}
	var out []host.Declared
	for _, ro := range values {
		for _, d := range values {
			for _, i := range values {
				for _, ow := range values {
					out = append(out, host.Declared{ReadOnly: ro, Destructive: d, Idempotent: i, OpenWorld: ow})
				}
			}
		}
	}
	return out
}

// TestHostProfiles checks what every profile must say: its source, the
// date it was read and its confidence; and that a host said to ignore the
// hints gives every tool the same outcome, and one that reads them does
// not.
func TestHostProfiles(t *testing.T) {
	date := regexp.MustCompile(`^20\d\d-[01]\d-[0-3]\d$`)
	seen := map[string]bool{}
	defaults := map[string]int{}
	for _, p := range HostProfiles() {
		id := p.Host + "/" + p.Mode
		if seen[id] {
			t.Errorf("%s: twice", id)
		}
		seen[id] = true
		if p.Default {
			defaults[p.Host]++
		}
		if p.HostName == "" || p.ModeName == "" || p.Source == "" || !date.MatchString(p.Read) ||
			!slices.Contains([]string{"high", "medium", "low"}, p.Confidence) || p.ActionFor == nil {
			t.Errorf("%s: incomplete profile %+v", id, p)
		}
		if p.Host != strings.ToLower(p.Host) || strings.ContainsAny(p.Host, ", ") {
			t.Errorf("%s: the name -host takes must be lower case, without commas or spaces", id)
		}
		outcomes := map[HostAction]bool{}
		for _, h := range everyHints() {
			o, _ := p.ActionFor(h)
			if o < Refused || o > Settings {
				t.Errorf("%s: invalid outcome %d", id, o)
			}
			outcomes[o] = true
		}
		if p.IgnoresHints != (len(outcomes) == 1) {
			t.Errorf("%s: IgnoresHints %t, but %d outcomes over every combination of hints", id, p.IgnoresHints, len(outcomes))
		}
		if p.IgnoresHints != (p.Instead != "") {
			t.Errorf("%s: Instead %q must say what decides exactly when the hints do not", id, p.Instead)
		}
		if p.IgnoresHints == (p.Rule != "") {
			t.Errorf("%s: Rule %q must say what the hints decide exactly when they do", id, p.Rule)
		}
	}
	for h, n := range defaults {
		if n > 1 {
			t.Errorf("host %s has %d default modes", h, n)
		}
	}
}

func TestHostSummary(t *testing.T) {
	tools := []connect.Listed{
		{Name: "get_note", Annotations: json.RawMessage(`{"readOnlyHint": true, "openWorldHint": false}`)},
		{Name: "search_web", Annotations: json.RawMessage(`{"readOnlyHint": true, "openWorldHint": true}`)},
		{Name: "fetch_page", Annotations: json.RawMessage(`{"readOnlyHint": false, "destructiveHint": false, "openWorldHint": true}`)},
		{Name: "create_note", Annotations: json.RawMessage(`{"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}`)},
		{Name: "legacy"},
	}
	profiles, err := SelectHosts("vscode, claude-code,cline,roo-code,goose")
	if err != nil {
		t.Fatal(err)
	}
	// No profile in the table leaves every tool to its own settings today;
	// the summary of one that does is held here.
	profiles = append(profiles, HostProfile{
		Host: "example", HostName: "Example", Mode: "default", ModeName: "default",
		ActionFor: always(Settings), IgnoresHints: true, Instead: "its auto-approve settings, by tool name",
		Source: "a test", Read: "2026-12-01", Confidence: "medium",
	})
	r, err := Review(connect.Server{}, tools, &Options{Hosts: profiles})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"vscode/manual":       "VS Code (manual approvals, read 2026-11-30): asks before 3 of 5 tools; runs 2 without asking; reviews the output of 2.",
		"vscode/allow-all":    "VS Code (Allow all, Autopilot or global auto-approve, read 2026-11-30): ignores the hints: runs every tool without asking (instead: the permission level the person chose).",
		"claude-code/plan":    "Claude Code (plan mode, read 2026-12-01, medium confidence): always asks before 3 of 5 tools, whatever was approved before; asks before 2.",
		"claude-code/auto":    "Claude Code (auto mode, read 2026-12-01, medium confidence): ignores the hints: leaves every tool to a language model (instead: its allow and deny rules, then a classifier model that reads each call's tool name and arguments, not its hints).",
		"claude-code/bypass":  "Claude Code (bypassPermissions mode, read 2026-12-01, medium confidence): ignores the hints: runs every tool without asking (instead: the mode alone, which --dangerously-skip-permissions sets).",
		"cline/default":       "Cline (default, read 2026-11-30): ignores the hints: asks before every tool (instead: the server's autoApprove list, by tool name).",
		"roo-code/default":    "Roo Code (default, read 2026-12-01): ignores the hints: asks before every tool (instead: auto-approval with alwaysAllowMcp, and the server's alwaysAllow list, by tool name).",
		"example/default":     "Example (default, read 2026-12-01, medium confidence): ignores the hints; what it does is set by its auto-approve settings, by tool name.",
		"goose/smart":         "goose (Smart Approve mode, read 2026-11-30): asks before 2 of 5 tools; leaves 1 to a language model's judgement; runs 2 without asking.",
		"claude-code/default": "Claude Code (manual and acceptEdits modes, read 2026-12-01, medium confidence): ignores the hints: asks before every tool (instead: the allow rules of its settings, permissions.allow).",
	}
	var got []string
	for _, h := range r.Hosts {
		got = append(got, h.Host+"/"+h.Mode)
		if w, ok := want[h.Host+"/"+h.Mode]; ok && h.Summary != w {
			t.Errorf("%s/%s:\n%s\nwant:\n%s", h.Host, h.Mode, h.Summary, w)
		}
		if len(h.Tools) != len(tools) {
			t.Errorf("%s/%s: %d tools, want %d", h.Host, h.Mode, len(h.Tools), len(tools))
		}
	}
	// The order of the table, whatever the order of the names.
	wantOrder := []string{"vscode/manual", "vscode/allow-all", "claude-code/auto", "claude-code/default", "claude-code/plan", "claude-code/bypass",
		"goose/auto", "goose/smart", "goose/approve", "cline/default", "roo-code/default", "example/default"}
	if !slices.Equal(got, wantOrder) {
		t.Errorf("profiles %v, want %v", got, wantOrder)
	}
	vs := r.Hosts[0]
	if vs.Counts != (HostCounts{Asks: 3, Runs: 2, ReviewsOutput: 2}) {
		t.Errorf("VS Code counts %+v", vs.Counts)
	}
	if o := vs.Tools[4]; o.Name != "legacy" || o.Action != Asks || o.ReviewsOutput {
		// A tool without annotations: VS Code asks, and reviews nothing,
		// as a missing openWorldHint is falsy.
		t.Errorf("VS Code, legacy: %+v", o)
	}
}

func TestSelectHosts(t *testing.T) {
	all, err := SelectHosts("all")
	if err != nil || len(all) != len(HostProfiles()) {
		t.Errorf("all: %d profiles, %v", len(all), err)
	}
	for _, bad := range []string{"", " , ", "vscode,nope", "VS Code"} {
		if _, err := SelectHosts(bad); err == nil {
			t.Errorf("SelectHosts(%q) succeeded", bad)
		}
	}
	if p, err := SelectHosts("CODEX"); err != nil || len(p) != 3 {
		t.Errorf("CODEX: %d profiles, %v; want its 3 modes", len(p), err)
	}
}

func TestOutcomeText(t *testing.T) {
	for o := Refused; o <= Settings; o++ {
		text, err := o.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back HostAction
		if err := back.UnmarshalText(text); err != nil || back != o {
			t.Errorf("%s: read back %s, %v", text, back, err)
		}
	}
	if _, err := HostAction(0).MarshalText(); err == nil {
		t.Error("HostAction(0) marshals")
	}
	var o HostAction
	if err := o.UnmarshalText([]byte("maybe")); err == nil {
		t.Error("unknown outcome read")
	}
}
