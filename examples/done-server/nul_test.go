package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestNULInEveryStringArgument sends each string argument of each of
// Done's tools, as its schema lists them (nested in arrays and objects
// too), with a NUL in it, the other arguments valid: PostgreSQL refuses
// a NUL in text, SQLite keeps it, and Done must refuse it the same way on
// both, before the store, with an error that names the argument, never
// with its internal error. A tool that keeps no text (the connectors'
// files) may take it.
func TestNULInEveryStringArgument(t *testing.T) {
	e := newEnv(t)
	var log syncBuffer
	e.done.logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cs := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	s := e.newSeed(cs)
	// The tools of a run's progress are its agent's to call.
	runner := e.connect(e.mint("runner", store.Agent, mcpeffect.Full))
	callers := map[string]*mcp.ClientSession{"report_run_progress": runner, "complete_run": runner}
	tokens := must[tokensResult](t, cs, "list_tokens", args{})
	links := must[calendarLinkResult](t, cs, "create_calendar_link", args{}).Link
	trash := must[trashResult](t, cs, "list_trash", args{})
	valid := map[string]any{
		"task_id": s.task, "parent_id": s.task, "depends_on": s.other, "blocked_by": s.other, "project_id": s.project,
		"step_id": s.step, "comment_id": s.comment, "label_id": s.label, "approval_id": s.approval, "run_id": s.run,
		"agent": "runner", "assignee": "alice", "item_id": trash.Items[0].ItemID, "token_id": tokens.Tokens[0].ID,
		"link_id": links.ID, "digest_id": "day-2025-06-02", "ref": s.contextRef, "step_ids": []any{s.step, s.step2},
		"due": "2025-06-30", "start": "2025-06-10", "end": "2025-06-11", "from": "2025-06-02", "to": "2025-06-08",
		"due_before": "2025-07-01", "color": "#336699", "uri": "https://example.com/a", "name": "a name", "path": "notes/a.md",
		// A person mints tokens for agents only.
		"create_token.kind": "agent",
		// A task that no agent is assigned names its run's.
		"start_run.agent": "runner",
	}
	// What a tool needs besides its required arguments to get as far as
	// the one with the NUL.
	extra := map[string][]string{"start_run": {"agent"}}
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	if spec := readSpec(t); len(tools) != len(spec) {
		t.Fatalf("%d tools listed, want the %d of tools.tsv", len(tools), len(spec))
	}
	tried := 0
	for _, tool := range tools {
		schema, _ := tool.InputSchema.(map[string]any)
		for _, path := range stringPaths(schema, nil) {
			a, _ := fill(schema, valid, tool.Name, "", path, true).(map[string]any)
			for _, n := range extra[tool.Name] {
				if _, ok := a[n]; !ok && n != path[0] {
					a[n] = valid[tool.Name+"."+n]
				}
			}
			caller := cs
			if c, ok := callers[tool.Name]; ok {
				caller = c
			}
			name := tool.Name + "." + strings.Join(path, ".")
			t.Run(name, func(t *testing.T) {
				tried++
				before := log.String()
				res, err := caller.CallTool(t.Context(), &mcp.CallToolParams{Name: tool.Name, Arguments: a})
				msg := ""
				switch {
				case err != nil:
					msg = err.Error()
				case res.IsError:
					msg = text(res)
				}
				if strings.Contains(msg, "internal error") || strings.Contains(msg, "unavailable") {
					t.Errorf("%v: %s", a, msg)
				}
				if after := log.String(); after != before {
					t.Errorf("%v: the server logged\n%s", a, strings.TrimPrefix(after, before))
				}
				field := path[len(path)-1]
				if field == "[]" {
					field = path[len(path)-2] + "["
				}
				if msg != "" && !strings.Contains(msg, field) {
					t.Errorf("%v: refused with %q, which does not name %s", a, msg, field)
				}
				if msg == "" && !strings.HasSuffix(tool.Name, "_context") {
					t.Errorf("%v: taken, NUL and all", a)
				}
			})
		}
	}
	if tried < 100 {
		t.Errorf("only %d string arguments tried", tried)
	}
}

// stringPaths returns the paths, from schema, of every property of type
// string, in properties of objects and items of arrays ("[]" in the
// path), sorted.
func stringPaths(schema map[string]any, at []string) [][]string {
	var out [][]string
	switch schemaType(schema) {
	case "string":
		return [][]string{slices.Clone(at)}
	case "array":
		items, _ := schema["items"].(map[string]any)
		return stringPaths(items, append(at, "[]"))
	case "object":
		props, _ := schema["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			p, _ := props[n].(map[string]any)
			out = append(out, stringPaths(p, append(at, n))...)
		}
	}
	return out
}

func schemaType(schema map[string]any) string {
	t, _ := schema["type"].(string)
	return t
}

// fill returns a value of schema, the argument name of tool: at path, a
// string with a NUL in it; elsewhere, for each required property, its
// value in valid (under "tool.name", or else "name"), the first of its
// enumeration, or a value of its type.
func fill(schema map[string]any, valid map[string]any, tool, name string, path []string, onPath bool) any {
	if onPath && len(path) == 0 && schemaType(schema) == "string" {
		return "a\x00b"
	}
	if !onPath {
		if v, ok := valid[tool+"."+name]; ok {
			return v
		}
		if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
			return enum[0]
		}
		if v, ok := valid[name]; ok {
			return v
		}
	}
	switch schemaType(schema) {
	case "object":
		props, _ := schema["properties"].(map[string]any)
		out := map[string]any{}
		required, _ := schema["required"].([]any)
		for _, r := range required {
			n := r.(string)
			p, _ := props[n].(map[string]any)
			out[n] = fill(p, valid, tool, n, nil, false)
		}
		if onPath {
			p, _ := props[path[0]].(map[string]any)
			out[path[0]] = fill(p, valid, tool, path[0], path[1:], true)
		}
		return out
	case "array":
		items, _ := schema["items"].(map[string]any)
		if onPath {
			return []any{fill(items, valid, tool, name, path[1:], true)}
		}
		return []any{fill(items, valid, tool, name, nil, false)}
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "string":
		return "x"
	}
	panic(fmt.Sprintf("no value of schema %v", schema))
}
