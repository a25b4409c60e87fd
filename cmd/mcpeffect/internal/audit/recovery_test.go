package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recovery writes the draft's object for an undo by undo with params, a
// JSON object of expressions.
func recovery(undo, params string) string {
	return `{"strategy": "compensation", "compensatingOperation": {"operationId": "` + undo + `", "parameters": ` + params + `}}`
}

// withRecovery returns hints, an annotations object, with rec as its
// recovery member, where SEP-3172 puts it.
func withRecovery(hints, rec string) string {
	return strings.TrimSuffix(hints, "}") + `, "recovery": ` + rec + `}`
}

// TestReviewRecoveries holds what the audit finds in the undo a tool
// publishes, from annotations.recovery or from _meta, one case a rule or
// a way of breaking it, each against the listing it names.
func TestReviewRecoveries(t *testing.T) {
	const (
		trashIn     = `{"type": "object", "properties": {"task_id": {"type": "integer"}, "note": {"type": "string"}}, "required": ["task_id"]}`
		restoreIn   = `{"type": "object", "properties": {"item_id": {"type": "integer"}}, "required": ["item_id"], "additionalProperties": false}`
		restoreText = `{"type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]}`
		createOut   = `{"type": "object", "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}, "extra": {"type": "object"}}, "required": ["id", "tags", "extra"]}`
	)
	restore := connect.Listed{Name: "restore", Annotations: json.RawMessage(hintsDestructive), InputSchema: json.RawMessage(restoreIn)}
	for _, tc := range []struct {
		name     string
		tool     connect.Listed
		others   []connect.Listed // listed besides it; restore if nil
		undo     string           // the undo shown, if any
		in       string           // where it was read
		rules    []Rule
		messages []string // in the findings, in order
	}{
		{name: "none", tool: connect.Listed{Name: "trash", Annotations: json.RawMessage(hintsDestructive)}},
		{name: "in annotations", undo: "restore", in: "annotations.recovery",
			tool: connect.Listed{Name: "trash", InputSchema: json.RawMessage(trashIn),
				Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$request.body#/task_id"}`)))}},
		{name: "in _meta", undo: "restore", in: `_meta "` + mcpeffect.RecoveryMetaKey + `"`,
			tool: connect.Listed{Name: "trash", InputSchema: json.RawMessage(trashIn), Annotations: json.RawMessage(hintsDestructive),
				Meta: json.RawMessage(`{"` + mcpeffect.RecoveryMetaKey + `": ` + recovery("restore", `{"item_id": "$request.body#/task_id"}`) + `}`)}},
		{name: "annotations first", undo: "restore", in: "annotations.recovery",
			tool: connect.Listed{Name: "trash", InputSchema: json.RawMessage(trashIn),
				Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$request.body#/task_id"}`))),
				Meta:        json.RawMessage(`{"` + mcpeffect.RecoveryMetaKey + `": "not even an object"}`)}},
		{name: "null recovery is none", tool: connect.Listed{Name: "trash", Annotations: json.RawMessage(withRecovery(hintsDestructive, `null`))}},
		{name: "an additive write, undone by a deletion", undo: "delete", in: "annotations.recovery",
			tool: connect.Listed{Name: "create", OutputSchema: json.RawMessage(createOut),
				Annotations: json.RawMessage(withRecovery(hintsWrite, recovery("delete", `{"id": "$response.body#/id"}`)))},
			others: []connect.Listed{{Name: "delete", Annotations: json.RawMessage(hintsDestructive),
				InputSchema: json.RawMessage(`{"type": "object", "properties": {"id": {"type": "number"}}, "required": ["id"]}`)}}},
		{name: "undone by itself", undo: "toggle", in: "annotations.recovery",
			tool: connect.Listed{Name: "toggle", Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("toggle", `{}`)))}},
		{name: "the whole arguments, into a schema that does not tell", undo: "redo", in: "annotations.recovery",
			tool: connect.Listed{Name: "undoable", InputSchema: json.RawMessage(trashIn),
				Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("redo", `{"args": "$request.body#"}`)))},
			others: []connect.Listed{{Name: "redo", Annotations: json.RawMessage(hintsDestructive)}}},

		// What cannot be used at all.
		{name: "another strategy", rules: []Rule{RuleRecoveryMalformed},
			tool: connect.Listed{Name: "trash", Annotations: json.RawMessage(withRecovery(hintsDestructive,
				`{"strategy": "manual-only", "compensatingOperation": {"operationId": "restore", "parameters": {}}}`))},
			messages: []string{`the undo it publishes in annotations.recovery cannot be used: strategy "manual-only": the one strategy SEP-3172 defines is "compensation"`}},
		{name: "not an object", rules: []Rule{RuleRecoveryMalformed},
			tool:     connect.Listed{Name: "trash", Annotations: json.RawMessage(hintsDestructive), Meta: json.RawMessage(`{"` + mcpeffect.RecoveryMetaKey + `": [1, 2]}`)},
			messages: []string{`the undo it publishes in _meta "` + mcpeffect.RecoveryMetaKey + `" cannot be used: not a recovery object`}},
		{name: "a pointer without its slash", rules: []Rule{RuleRecoveryMalformed},
			tool:     connect.Listed{Name: "trash", Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$request.body#task_id"}`)))},
			messages: []string{`the JSON pointer "task_id" does not begin with /`}},
		{name: "a bad tool name", rules: []Rule{RuleRecoveryMalformed},
			tool:     connect.Listed{Name: "trash", Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("rest ore", `{}`)))},
			messages: []string{"operationId: "}},

		// What is wrong with the tools.
		{name: "a read", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryOfRead},
			tool:     connect.Listed{Name: "peek", Annotations: json.RawMessage(withRecovery(hintsRead, recovery("restore", `{}`)))},
			others:   []connect.Listed{{Name: "restore", Annotations: json.RawMessage(hintsDestructive)}},
			messages: []string{`its hints say read, but it publishes an undo, "restore"`}},
		{name: "an undo not listed", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryUndoUnlisted},
			tool:     connect.Listed{Name: "trash", Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$request.body#/task_id"}`)))},
			others:   []connect.Listed{},
			messages: []string{`its undo, "restore", is not a tool the server lists`}},
		{name: "an undo that is a read", undo: "get", in: "annotations.recovery", rules: []Rule{RuleRecoveryUndoReadOnly},
			tool:     connect.Listed{Name: "trash", Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("get", `{}`)))},
			others:   []connect.Listed{{Name: "get", Annotations: json.RawMessage(hintsRead)}},
			messages: []string{`its undo, "get", declares readOnlyHint true`}},
		{name: "an undo without hints", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryUndoUnhinted},
			tool:     connect.Listed{Name: "trash", Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{}`)))},
			others:   []connect.Listed{{Name: "restore"}},
			messages: []string{`its undo, "restore", declares no readOnlyHint`}},
		{name: "the first of two undos of one name", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryUndoReadOnly},
			tool: connect.Listed{Name: "trash", Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{}`)))},
			others: []connect.Listed{{Name: "restore", Annotations: json.RawMessage(hintsRead)},
				{Name: "restore", Annotations: json.RawMessage(hintsDestructive)}},
			messages: []string{`declares readOnlyHint true`}},

		// What the schemas say cannot be bound.
		{name: "a parameter the undo does not have, and one it requires", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryParameters},
			tool: connect.Listed{Name: "trash", InputSchema: json.RawMessage(trashIn),
				Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"id": "$request.body#/task_id"}`)))},
			messages: []string{`its undo, "restore", cannot be bound as published: its input schema has no property "id" (it has "item_id"); it requires "item_id", which the recovery does not bind`}},
		{name: "a member the input schema does not have", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryParameters},
			tool: connect.Listed{Name: "trash", InputSchema: json.RawMessage(trashIn),
				Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$request.body#/taskId"}`)))},
			messages: []string{`"item_id" = "$request.body#/taskId": its input schema has no property "taskId"`}},
		{name: "a member the input schema does not require", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryParameters},
			tool: connect.Listed{Name: "trash", InputSchema: json.RawMessage(trashIn),
				Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$request.body#/note"}`)))},
			messages: []string{`"item_id" = "$request.body#/note": its input schema does not require "note": a call without it cannot be undone`}},
		{name: "a type the undo does not take", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryParameters},
			tool: connect.Listed{Name: "trash", InputSchema: json.RawMessage(trashIn),
				Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$request.body#/task_id"}`)))},
			others:   []connect.Listed{{Name: "restore", Annotations: json.RawMessage(hintsDestructive), InputSchema: json.RawMessage(restoreText)}},
			messages: []string{`"item_id" = "$request.body#/task_id" gives a value of type integer, and the undo's "item_id" takes a value of type string`}},
		{name: "a result without an output schema", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryParameters},
			tool:     connect.Listed{Name: "trash", Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$response.body#/id"}`)))},
			messages: []string{`"item_id" = "$response.body#/id" reads the structured content of its result, for which it declares no outputSchema`}},
		{name: "into an array", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryParameters},
			tool: connect.Listed{Name: "create", OutputSchema: json.RawMessage(createOut),
				Annotations: json.RawMessage(withRecovery(hintsWrite, recovery("restore", `{"item_id": "$response.body#/tags/first"}`)))},
			messages: []string{`"item_id" = "$response.body#/tags/first": its output schema has an array at "/tags", which has no member "first"`}},
		{name: "an element of an array, of another type", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryParameters},
			tool: connect.Listed{Name: "create", OutputSchema: json.RawMessage(createOut),
				Annotations: json.RawMessage(withRecovery(hintsWrite, recovery("restore", `{"item_id": "$response.body#/tags/0"}`)))},
			messages: []string{`gives a value of type string, and the undo's "item_id" takes a value of type integer`}},
		{name: "an object that does not name its members", undo: "restore", in: "annotations.recovery",
			tool: connect.Listed{Name: "create", OutputSchema: json.RawMessage(createOut),
				Annotations: json.RawMessage(withRecovery(hintsWrite, recovery("restore", `{"item_id": "$response.body#/extra/id"}`)))}},
		{name: "a schema that allows other members", undo: "restore", in: "annotations.recovery",
			tool: connect.Listed{Name: "trash", InputSchema: json.RawMessage(`{"type": "object", "properties": {"a": {}}, "additionalProperties": true}`),
				Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$request.body#/task_id"}`)))}},
		{name: "a schema that composes others", undo: "restore", in: "annotations.recovery",
			tool: connect.Listed{Name: "trash", InputSchema: json.RawMessage(`{"type": "object", "properties": {"a": {}}, "allOf": [{"properties": {"task_id": {}}}]}`),
				Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$request.body#/task_id"}`)))}},
		{name: "a member whose name needs escaping", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryParameters},
			tool: connect.Listed{Name: "trash", InputSchema: json.RawMessage(`{"type": "object", "properties": {"a/b": {"type": "object", "properties": {}}}, "required": ["a/b"]}`),
				Annotations: json.RawMessage(withRecovery(hintsDestructive, recovery("restore", `{"item_id": "$request.body#/a~1b/c"}`)))},
			messages: []string{`its input schema has no property "c" at "/a~1b"`}},
		{name: "hostile words are escaped", undo: "restore", in: "annotations.recovery", rules: []Rule{RuleRecoveryParameters},
			tool: connect.Listed{Name: "trash", Annotations: json.RawMessage(withRecovery(hintsDestructive,
				recovery("restore", `{"item\u001b[2J": "$request.body#/\u202etask"}`)))},
			messages: []string{`\x1b[2J`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools := append([]connect.Listed{tc.tool}, tc.others...)
			if tc.others == nil {
				tools = append(tools, restore)
			}
			r, err := Review(connect.Server{}, tools, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := r.Tools[0]
			switch {
			case tc.undo == "" && got.Recovery != nil:
				t.Errorf("recovery %+v, want none", got.Recovery)
			case tc.undo != "" && (got.Recovery == nil || got.Recovery.CompensatingOperation.OperationID != tc.undo || got.RecoveryIn != tc.in):
				t.Errorf("recovery %+v in %q, want the undo %q in %q", got.Recovery, got.RecoveryIn, tc.undo, tc.in)
			}
			want := 0
			if tc.undo != "" {
				want = 1
			}
			if r.Summary.Recoveries != want {
				t.Errorf("summary: %d recoveries, want %d", r.Summary.Recoveries, want)
			}
			var rules []Rule
			var messages []string
			for _, f := range r.Findings {
				if f.Tool == tc.tool.Name && strings.HasPrefix(string(f.Rule), "recovery-") {
					rules = append(rules, f.Rule)
					messages = append(messages, f.Message)
					if f.Level != f.Rule.Level() {
						t.Errorf("%s at level %s, want %s", f.Rule, f.Level, f.Rule.Level())
					}
				}
			}
			if !slices.Equal(rules, tc.rules) {
				t.Errorf("findings %q: %q, want %q", rules, messages, tc.rules)
			}
			for i, m := range tc.messages {
				if i >= len(messages) || !strings.Contains(messages[i], m) {
					t.Errorf("finding %d: %q, want it to say %q", i, messages, m)
				}
			}
			for _, m := range messages {
				if strings.ContainsAny(m, "\x1b\u202e") {
					t.Errorf("a finding holds what is not printable: %q", m)
				}
			}
		})
	}
}

// TestReviewRecoveriesOfGoSDK audits a go-sdk server whose registry
// declares recoveries and whose idempotency is on: each recovery is read
// from the _meta of its tool, where mcpeffect publishes it, with no
// finding, and the capability is seen, through the server's answer to
// the handshake and its idempotency carrier.
func TestReviewRecoveriesOfGoSDK(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "trash", Version: "v1"}, nil)
	r := mcpeffect.NewRegistry()
	type idArgs struct {
		ID int `json:"id"`
	}
	type made struct {
		ID int `json:"id"`
	}
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "create_note"}, mcpeffect.Write,
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, made, error) {
			return nil, made{1}, nil
		})
	for _, name := range []string{"delete_note", "restore_note", "purge_note"} {
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: name}, mcpeffect.Destructive|mcpeffect.Idempotent,
			func(context.Context, *mcp.CallToolRequest, idArgs) (*mcp.CallToolResult, any, error) {
				return nil, nil, nil
			})
	}
	for tool, rec := range map[string]mcpeffect.Recovery{
		"create_note": mcpeffect.Compensation("purge_note", map[string]string{"id": "$response.body#/id"}),
		"delete_note": mcpeffect.Compensation("restore_note", map[string]string{"id": "$request.body#/id"}),
	} {
		if err := r.DeclareRecovery(tool, rec); err != nil {
			t.Fatal(err)
		}
	}
	e := r.Enforcer(&mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{}})
	s.AddReceivingMiddleware(e.Middleware())

	for _, idempotency := range []bool{false, true} {
		st, ct := mcp.NewInMemoryTransports()
		var transport mcp.Transport = st
		if idempotency {
			transport = e.IdempotencyTransport(st)
		}
		ss, err := s.Connect(t.Context(), transport, nil)
		if err != nil {
			t.Fatal(err)
		}
		server, tools, err := connect.List(t.Context(), ct)
		ss.Close()
		if err != nil {
			t.Fatal(err)
		}
		if server.Idempotency != idempotency {
			t.Errorf("carrier %t: the server's idempotency read as %t", idempotency, server.Idempotency)
		}
		report, err := Review(server, tools, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(report.Findings) != 0 {
			t.Errorf("findings: %+v", report.Findings)
		}
		if report.Summary.Recoveries != 2 || report.Summary.Idempotency != idempotency {
			t.Errorf("summary %+v, want 2 recoveries, idempotency %t", report.Summary, idempotency)
		}
		for _, tool := range report.Tools {
			want, ok := r.Recovery(tool.Name)
			switch {
			case !ok && tool.Recovery != nil:
				t.Errorf("%s: recovery %+v, want none", tool.Name, tool.Recovery)
			case ok && (tool.Recovery == nil || RecoveryText(*tool.Recovery) != RecoveryText(want) || !strings.HasPrefix(tool.RecoveryIn, "_meta")):
				t.Errorf("%s: recovery %+v in %q, want %s in _meta", tool.Name, tool.Recovery, tool.RecoveryIn, RecoveryText(want))
			}
		}
	}
}

// TestRecoveryBounded gives the audit an undo of a thousand parameters,
// each bound by a pointer of a thousand characters: what it writes of it,
// in a finding and in a report's line, stays short, and says how many it
// leaves out.
func TestRecoveryBounded(t *testing.T) {
	params := map[string]string{}
	for i := range 1000 {
		params[fmt.Sprintf("p%04d", i)] = "$request.body#/" + strings.Repeat("x", 1000)
	}
	raw, err := json.Marshal(mcpeffect.Compensation("restore", params))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Review(connect.Server{}, []connect.Listed{
		{Name: "trash", InputSchema: json.RawMessage(`{"type": "object", "properties": {"task_id": {"type": "integer"}}, "required": ["task_id"]}`),
			Annotations: json.RawMessage(withRecovery(hintsDestructive, string(raw)))},
		{Name: "restore", Annotations: json.RawMessage(hintsDestructive), InputSchema: json.RawMessage(`{"type": "object", "properties": {"item_id": {"type": "integer"}}}`)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 || r.Findings[0].Rule != RuleRecoveryParameters {
		t.Fatalf("findings %+v", r.Findings)
	}
	if m := r.Findings[0].Message; len(m) > 4000 || !strings.HasSuffix(m, "and 1990 more") {
		t.Errorf("a finding of %d bytes, ending %q", len(m), m[max(0, len(m)-40):])
	}
	if text := RecoveryText(*r.Tools[0].Recovery); len(text) > 3000 || !strings.HasSuffix(text, "and 990 more)") {
		t.Errorf("a recovery's text of %d bytes, ending %q", len(text), text[max(0, len(text)-40):])
	}
}
