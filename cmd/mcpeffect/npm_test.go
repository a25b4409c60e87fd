package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/internal/testing/nodetest"
)

// npmServers is where the MCP reference servers the tests audit are
// installed, at the exact versions of its package-lock.json: the tests
// install them there themselves (see nodetest).
const npmServers = "testdata/npmservers"

// npmServer returns the arguments that make audit run the reference
// server pkg (server-filesystem, ...) with node, and its args. Without
// node or the packages, the test is skipped, unless
// MCPEFFECT_REQUIRE_NODE says it must run, as CI does.
func npmServer(t *testing.T, pkg string, args ...string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs node")
	}
	script := filepath.Join("node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	node := nodetest.Packages(t, npmServers, script)
	return append([]string{"--", node, filepath.Join(npmServers, script)}, args...)
}

// TestAuditNPMServers audits the reference servers of the MCP project, as
// published on npm, with every host and directory profile. The outcomes
// asserted are the hosts' rules applied by hand to each tool's hints as
// the server sends them (see mcpeffect help hosts for each rule's source).
func TestAuditNPMServers(t *testing.T) {
	type outcome struct {
		host, mode, tool string
		want             audit.HostAction
		review           bool
	}
	for _, tc := range []struct {
		name     string
		args     func(t *testing.T) []string
		server   string
		summary  audit.Summary // errors and warnings left out: profiles add them
		outcomes []outcome
		// rules: findings expected, by tool; and tools that must have none.
		findings map[string][]audit.Rule
	}{
		{
			name: "filesystem",
			args: func(t *testing.T) []string { return npmServer(t, "server-filesystem", t.TempDir()) },
			// read_file declares readOnlyHint true and openWorldHint false,
			// no destructiveHint nor idempotentHint; write_file false,
			// true, true, false; create_directory false, false, true, false.
			server:  "secure-filesystem-server",
			summary: audit.Summary{Tools: 14, Reads: 10, Writes: 4, Destructive: 3, Idempotent: 2},
			outcomes: []outcome{
				{"vscode", "manual", "read_file", audit.Runs, false},
				{"vscode", "manual", "write_file", audit.Asks, false},
				{"claude-code", "plan", "read_file", audit.Asks, false},
				{"claude-code", "plan", "write_file", audit.AsksAlways, false},
				// Codex: readOnlyHint true and no destructiveHint true: runs;
				// a write declaring destructiveHint false and openWorldHint
				// false: runs as well.
				{"codex", "auto", "read_file", audit.Runs, false},
				{"codex", "auto", "write_file", audit.Asks, false},
				{"codex", "auto", "create_directory", audit.Runs, false},
				{"copilot", "code-review", "write_file", audit.Refused, false},
				{"gemini-cli", "plan", "create_directory", audit.Refused, false},
				{"cursor", "admin-reads", "read_file", audit.Runs, false},
			},
			findings: map[string][]audit.Rule{
				// A read without destructiveHint: ChatGPT's directory rejects
				// it, Claude's pages disagree. Titles are given as the
				// tool's title only, and Anthropic's checklist asks for
				// annotations.title.
				"read_file":  {"claude-directory/annotations-title", "claude-directory/read-destructive-hint", "chatgpt-directory/hints"},
				"write_file": {"claude-directory/annotations-title"},
			},
		},
		{
			name: "memory",
			args: func(t *testing.T) []string {
				t.Setenv("MEMORY_FILE_PATH", filepath.Join(t.TempDir(), "memory.jsonl"))
				return npmServer(t, "server-memory")
			},
			// Every tool declares all four hints, and a title, though not
			// in annotations.title, where Anthropic's checklist asks for
			// it.
			server:  "memory-server",
			summary: audit.Summary{Tools: 9, Reads: 3, Writes: 6, Destructive: 3, Idempotent: 3},
			outcomes: []outcome{
				{"vscode", "manual", "create_entities", audit.Asks, false},
				{"vscode", "manual", "read_graph", audit.Runs, false},
				{"codex", "auto", "create_entities", audit.Runs, false},
				{"codex", "auto", "delete_entities", audit.Asks, false},
				{"codex", "writes", "create_entities", audit.AsksAlways, false},
				{"goose", "smart", "delete_entities", audit.Asks, false},
				{"claude-cowork", "team", "delete_entities", audit.AsksAlways, false},
			},
			findings: map[string][]audit.Rule{
				"create_entities": {"claude-directory/annotations-title"},
				"read_graph":      {"claude-directory/annotations-title"},
				"delete_entities": {"claude-directory/annotations-title"},
			},
		},
		{
			name: "everything",
			args: func(t *testing.T) []string { return npmServer(t, "server-everything") },
			// gzip-file-as-resource: readOnlyHint false, destructiveHint
			// false, idempotentHint true, openWorldHint true; echo: a read
			// with every hint.
			server:  "mcp-servers/everything",
			summary: audit.Summary{Tools: 14, Reads: 10, Writes: 4, Destructive: 0, Idempotent: 1, OpenWorld: 1},
			outcomes: []outcome{
				{"vscode", "manual", "gzip-file-as-resource", audit.Asks, true},
				{"vscode", "manual", "echo", audit.Runs, false},
				{"codex", "auto", "gzip-file-as-resource", audit.Asks, false},
				{"codex", "auto", "toggle-simulated-logging", audit.Runs, false},
				{"chatgpt", "developer", "toggle-simulated-logging", audit.Asks, false},
				{"copilot", "code-review", "echo", audit.Runs, false},
			},
			findings: map[string][]audit.Rule{"echo": {"claude-directory/annotations-title"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, r := auditJSON(t, append([]string{"-host", "all", "-profile", "all"}, tc.args(t)...)...)
			if r.Server.Name != tc.server {
				t.Errorf("server %+v, want %s", r.Server, tc.server)
			}
			got := r.Summary
			got.Errors, got.Warnings = 0, 0
			if got != tc.summary {
				t.Errorf("summary %+v, want %+v", got, tc.summary)
			}
			if (code == exitFindings) != (r.Summary.Errors > 0) {
				t.Errorf("exit %d with %d errors", code, r.Summary.Errors)
			}
			for _, o := range tc.outcomes {
				found := false
				for _, h := range r.Hosts {
					if h.Host != o.host || h.Mode != o.mode {
						continue
					}
					for _, ht := range h.Tools {
						if ht.Name == o.tool {
							found = true
							if ht.Action != o.want || ht.ReviewsOutput != o.review {
								t.Errorf("%s/%s, %s: %s (output reviewed %t), want %s (%t)", o.host, o.mode, o.tool, ht.Action, ht.ReviewsOutput, o.want, o.review)
							}
						}
					}
				}
				if !found {
					t.Errorf("%s/%s, %s: not in the report", o.host, o.mode, o.tool)
				}
			}
			for tool, want := range tc.findings {
				var rules []audit.Rule
				for _, f := range r.Findings {
					if f.Tool == tool {
						rules = append(rules, f.Rule)
					}
				}
				if !slices.Equal(rules, want) {
					t.Errorf("%s: findings %v, want %v", tool, rules, want)
				}
			}
		})
	}
}
