package audit

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// presetServer returns a server whose tools all carry the four hints as
// mcp-go's mcp.NewTool presets them, as a server whose author never set
// them lists them: readOnlyHint false, destructiveHint true,
// idempotentHint false, openWorldHint true.
func presetServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "preset", Version: "0.1"}, nil)
	yes := true
	for _, name := range []string{"get_note", "list_notes", "create_note"} {
		mcp.AddTool(s, &mcp.Tool{Name: name, Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}}, noop)
	}
	return s
}

// TestHintsNeverSet lists a server whose every tool declares the worst
// case, through the real protocol, and holds what the audit says of it and
// what hosts do with it: ask before every call.
func TestHintsNeverSet(t *testing.T) {
	ctx := t.Context()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := presetServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	server, tools, err := connect.List(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := SelectHosts("vscode,codex,claude-code")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Review(server, tools, &Options{Hosts: profiles})
	if err != nil {
		t.Fatal(err)
	}
	var flagged []string
	for _, f := range r.Findings {
		if f.Rule != RuleHintsNeverSet {
			continue
		}
		flagged = append(flagged, f.Tool)
		if f.Level != Warning || !strings.Contains(f.Message, "all 3 tools") || !strings.Contains(f.Message, "probably never set") || !strings.Contains(f.Message, "ask before every call") {
			t.Errorf("%s: %s %q", f.Tool, f.Level, f.Message)
		}
	}
	if want := []string{"create_note", "get_note", "list_notes"}; !slices.Equal(flagged, want) { // go-sdk lists by name
		t.Errorf("flagged %v, want every tool %v", flagged, want)
	}
	// The names that read contradict the hints as well: get_note and
	// list_notes say they read, and are not read-only.
	if r.Summary.Warnings != 5 || r.Summary.Errors != 0 {
		t.Errorf("summary %+v: want 5 warnings (3 hints-never-set, 2 read-name-not-read-only)", r.Summary)
	}
	// Hosts that read hints ask before every call; Claude Code's plan
	// mode forces the question whatever was approved before.
	for _, h := range r.Hosts {
		want := map[string]HostAction{"vscode/manual": Asks, "codex/auto": Asks, "codex/writes": AsksAlways, "codex/never": Refused, "claude-code/plan": AsksAlways}[h.Host+"/"+h.Mode]
		if want == 0 {
			continue
		}
		for _, ht := range h.Tools {
			if ht.Action != want {
				t.Errorf("%s/%s, %s: %s, want %s", h.Host, h.Mode, ht.Name, ht.Action, want)
			}
		}
	}
}

// TestHintsNeverSetOnly holds what the rule leaves out: a server with one
// tool, a tool that differs, a hint left out rather than at its worst.
func TestHintsNeverSetOnly(t *testing.T) {
	const worst = `{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}`
	tool := func(name, annotations string) connect.Listed {
		return connect.Listed{Name: name, Annotations: json.RawMessage(annotations)}
	}
	for _, tc := range []struct {
		name  string
		tools []connect.Listed
		want  int
	}{
		{"two tools, both worst", []connect.Listed{tool("a", worst), tool("b", worst)}, 2},
		{"one tool", []connect.Listed{tool("a", worst)}, 0},
		{"one read", []connect.Listed{tool("a", worst), tool("b", `{"readOnlyHint": true, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}`)}, 0},
		{"one idempotent", []connect.Listed{tool("a", worst), tool("b", `{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": true}`)}, 0},
		{"one closed-world", []connect.Listed{tool("a", worst), tool("b", `{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}`)}, 0},
		{"a hint left out", []connect.Listed{tool("a", worst), tool("b", `{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false}`)}, 0},
		{"no annotations", []connect.Listed{tool("a", worst), {Name: "b"}}, 0},
		{"null hints", []connect.Listed{tool("a", worst), tool("b", `{"readOnlyHint": null, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}`)}, 0},
		{"no tools", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Review(connect.Server{}, tc.tools, nil)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range r.Findings {
				if f.Rule == RuleHintsNeverSet {
					n++
				}
			}
			if n != tc.want {
				t.Errorf("%d %s findings, want %d", n, RuleHintsNeverSet, tc.want)
			}
		})
	}
}
