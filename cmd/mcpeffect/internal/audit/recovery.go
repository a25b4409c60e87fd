package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/host"
)

// The recovery a tool publishes (SEP-3172, revision c66570f6): the call of
// another tool of the same server that undoes what a call of it did, its
// arguments bound from the original call by runtime expressions. It is
// the server's claim, as its hints are: the audit shows it and checks
// what can be checked without calling anything, against the tools the
// server lists and their schemas.

// recoveryChecks returns the findings of the recovery that l, listed as
// t, publishes, and the recovery, if it can be read (with the member it
// was read from); listed holds the first tool of each name the server
// lists.
func recoveryChecks(t Tool, l connect.Listed, listed map[string]connect.Listed) (*mcpeffect.Recovery, string, []Finding) {
	rec, in, err := l.Recovery()
	var out []Finding
	add := func(rule Rule, format string, args ...any) {
		out = append(out, Finding{Tool: t.Name, Level: rule.Level(), Rule: rule, Message: fmt.Sprintf(format, args...)})
	}
	if err != nil {
		add(RuleRecoveryMalformed, "the undo it publishes in %s cannot be used: %s; hosts must take its calls as not recoverable, as SEP-3172 says",
			in, shortText(err.Error(), 300))
		return nil, "", out
	}
	if rec == nil {
		return nil, "", nil
	}
	undo := rec.CompensatingOperation.OperationID
	if t.Effect&mcpeffect.Read != 0 {
		add(RuleRecoveryOfRead, "its hints say read, but it publishes an undo, %s: a call that needs undoing is a write, and hosts run a read without asking",
			quoteShort(undo))
	}
	u, ok := listed[undo]
	var problems []string
	if !ok {
		add(RuleRecoveryUndoUnlisted, "its undo, %s, is not a tool the server lists: no one can call it to undo a call (a server that lists each caller only what it may call may list it to others)",
			quoteShort(undo))
	} else {
		ud, err := host.ParseDeclared(u.Annotations)
		switch {
		case err != nil:
			// The undo's own review fails on it, and with it the audit.
		case ud.Effect()&mcpeffect.Read != 0:
			add(RuleRecoveryUndoReadOnly, "its undo, %s, declares readOnlyHint true: a read changes nothing, so it cannot undo a call, and whoever compensates with it leaves the call's effect in place",
				quoteShort(undo))
		case ud.ReadOnly == nil:
			add(RuleRecoveryUndoUnhinted, "its undo, %s, declares no readOnlyHint: it is a write only by the worst case hosts assume, not by the server's word",
				quoteShort(undo))
		}
		problems = undoSchemaProblems(*rec, u)
	}
	problems = append(problems, bindingProblems(*rec, l, u, ok)...)
	if n := len(problems); n > maxShownBindings {
		problems = append(problems[:maxShownBindings], fmt.Sprintf("and %d more", n-maxShownBindings))
	}
	if len(problems) > 0 {
		add(RuleRecoveryParameters, "its undo, %s, cannot be bound as published: %s", quoteShort(undo), strings.Join(problems, "; "))
	}
	return rec, in, out
}

// undoSchemaProblems says which parameters of rec the input schema of u,
// its undo, does not name, and which properties that schema requires
// that rec does not bind.
func undoSchemaProblems(rec mcpeffect.Recovery, u connect.Listed) []string {
	s, ok := parseSchema(u.InputSchema)
	if !ok || s.Properties == nil {
		return nil
	}
	var out []string
	params := rec.CompensatingOperation.Parameters
	for _, p := range slices.Sorted(maps.Keys(params)) {
		if _, ok := s.Properties[p]; !ok {
			out = append(out, fmt.Sprintf("its input schema has no property %s (it has %s)", quoteShort(p), namesText(slices.Sorted(maps.Keys(s.Properties)))))
		}
	}
	for _, req := range s.Required {
		if _, ok := params[req]; !ok {
			out = append(out, fmt.Sprintf("it requires %s, which the recovery does not bind", quoteShort(req)))
		}
	}
	return out
}

// bindingProblems says which expressions of rec, published by the tool l,
// cannot be resolved against the schema they read (l's input schema for
// $request.body, its output schema for $response.body), as far as the
// schemas tell: a member the schema does not have, one it does not
// require (a call without it cannot be undone), a value whose type the
// undo's parameter does not take. u is the undo, if listed.
func bindingProblems(rec mcpeffect.Recovery, l, u connect.Listed, listed bool) []string {
	var undoProps map[string]json.RawMessage
	if listed {
		if s, ok := parseSchema(u.InputSchema); ok {
			undoProps = s.Properties
		}
	}
	var out []string
	params := rec.CompensatingOperation.Parameters
	// Each schema is read once, whatever the number of parameters: a
	// server may send many, all into one large schema.
	input, output := newSchemaWalker(l.InputSchema), newSchemaWalker(l.OutputSchema)
	for _, p := range slices.Sorted(maps.Keys(params)) {
		expr := params[p]
		binding := quoteShort(p) + " = " + quoteShort(expr)
		walker, what := input, "input"
		pointer, ok := strings.CutPrefix(expr, mcpeffect.RequestBodyExpression)
		if !ok {
			// Validate let nothing else through.
			pointer, _ = strings.CutPrefix(expr, mcpeffect.ResponseBodyExpression)
			walker, what = output, "output"
			if isNull(l.OutputSchema) {
				out = append(out, fmt.Sprintf("%s reads the structured content of its result, for which it declares no outputSchema: a call whose result has none cannot be undone", binding))
				continue
			}
		}
		node, problem := walker.walk(pointerTokens(pointer))
		switch {
		case problem != "":
			out = append(out, fmt.Sprintf("%s: its %s schema %s", binding, what, problem))
			continue
		case node == nil:
			continue // the schema does not tell
		}
		if want, ok := undoProps[p]; ok {
			if ws, ok := parseSchema(want); ok {
				if got, need := schemaTypes(node.Type), schemaTypes(ws.Type); !typesMeet(got, need) {
					out = append(out, fmt.Sprintf("%s gives %s, and the undo's %s takes %s", binding, typesText(got), quoteShort(p), typesText(need)))
				}
			}
		}
	}
	return out
}

// A schemaNode is what the audit reads of a JSON Schema: enough to follow
// a JSON pointer through properties and items, and to know where it
// cannot.
type schemaNode struct {
	Type                 json.RawMessage            `json:"type"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	Items                json.RawMessage            `json:"items"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	PatternProperties    json.RawMessage            `json:"patternProperties"`
	Ref                  json.RawMessage            `json:"$ref"`
	AllOf                json.RawMessage            `json:"allOf"`
	AnyOf                json.RawMessage            `json:"anyOf"`
	OneOf                json.RawMessage            `json:"oneOf"`
	If                   json.RawMessage            `json:"if"`
}

func parseSchema(raw json.RawMessage) (*schemaNode, bool) {
	if isNull(raw) {
		return nil, false
	}
	var s schemaNode
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return &s, true
}

// composed reports whether s says more of its members than its own
// properties and items do: a reference, a combination, a condition.
func (s *schemaNode) composed() bool {
	return !isNull(s.Ref) || !isNull(s.AllOf) || !isNull(s.AnyOf) || !isNull(s.OneOf) || !isNull(s.If)
}

// A schemaWalker follows JSON pointers through one schema, reading each
// of its subschemas once.
type schemaWalker struct {
	root   json.RawMessage
	parsed map[string]*schemaNode // by the path that reaches it; nil: not a schema
}

func newSchemaWalker(schema json.RawMessage) *schemaWalker {
	return &schemaWalker{root: schema, parsed: map[string]*schemaNode{}}
}

// parse returns the subschema raw, reached by path, read once.
func (w *schemaWalker) parse(path string, raw json.RawMessage) (*schemaNode, bool) {
	if s, done := w.parsed[path]; done {
		return s, s != nil
	}
	s, ok := parseSchema(raw)
	if !ok {
		s = nil
	}
	w.parsed[path] = s
	return s, ok
}

// walk follows tokens, those of a JSON pointer, through the schema: it
// returns the schema of the value they reach, nil where the schema does
// not tell (it does not name its properties, or composes others), or
// what is wrong, for a message: a member it does not have, one it does
// not require, an element of something that is not an array.
func (w *schemaWalker) walk(tokens []string) (*schemaNode, string) {
	s, ok := w.parse("", w.root)
	// path is where the pointer is, for messages; key where the schema
	// is, every element of an array being at "-".
	var path, key []string
	at := func() string {
		if len(path) == 0 {
			return ""
		}
		return " at " + quoteShort("/"+strings.Join(path, "/"))
	}
	for _, tok := range tokens {
		if !ok || s.composed() {
			return nil, ""
		}
		switch {
		case s.Properties != nil:
			next, has := s.Properties[tok]
			if !has {
				if !isNull(s.PatternProperties) || (!isNull(s.AdditionalProperties) && string(bytes.TrimSpace(s.AdditionalProperties)) != "false") {
					return nil, "" // other members may be there
				}
				return nil, fmt.Sprintf("has no property %s%s", quoteShort(tok), at())
			}
			if !slices.Contains(s.Required, tok) {
				return nil, fmt.Sprintf("does not require %s%s: a call without it cannot be undone", quoteShort(tok), at())
			}
			path, key = append(path, escapeToken(tok)), append(key, escapeToken(tok))
			s, ok = w.parse("/"+strings.Join(key, "/"), next)
		case !isNull(s.Items) || slices.Contains(schemaTypes(s.Type), "array"):
			if i, err := strconv.Atoi(tok); err != nil || i < 0 || tok != strconv.Itoa(i) {
				return nil, fmt.Sprintf("has an array%s, which has no member %s", at(), quoteShort(tok))
			}
			path, key = append(path, tok), append(key, "-")
			s, ok = w.parse("/"+strings.Join(key, "/"), s.Items)
		default:
			return nil, ""
		}
	}
	if !ok || s.composed() {
		return nil, ""
	}
	return s, ""
}

// escapeToken escapes a reference token for a JSON pointer.
func escapeToken(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// pointerTokens returns the reference tokens of p, a valid JSON pointer
// (Validate checked it), unescaped.
func pointerTokens(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, t := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return parts
}

// schemaTypes returns the types of a schema's "type": one, several, or
// none if it has none.
func schemaTypes(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many
	}
	return nil
}

// typesMeet reports whether a value of one of the types got may be one
// of the types need takes; no types is any. An integer is a number.
func typesMeet(got, need []string) bool {
	if len(got) == 0 || len(need) == 0 {
		return true
	}
	for _, g := range got {
		for _, n := range need {
			if g == n || g == "integer" && n == "number" || g == "number" && n == "integer" {
				return true
			}
		}
	}
	return false
}

func typesText(types []string) string {
	quoted := make([]string, len(types))
	for i, t := range types {
		quoted[i] = shortText(t, 20)
	}
	if len(quoted) == 1 {
		return "a value of type " + quoted[0]
	}
	return "a value of type " + strings.Join(quoted, " or ")
}

// namesText lists names for a message, quoted, at most ten.
func namesText(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	var quoted []string
	for _, n := range names[:min(len(names), 10)] {
		quoted = append(quoted, quoteShort(n))
	}
	if len(names) > 10 {
		quoted = append(quoted, fmt.Sprintf("and %d more", len(names)-10))
	}
	return strings.Join(quoted, ", ")
}

// shortText returns s cut to n characters and made printable, for a
// message: the server's words cannot send escapes to a terminal.
func shortText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return printable(s)
}

// RecoveryText writes rec in one line, for a report: the undo, and each
// of its parameters with the expression that binds it, in the order of
// their names: restore_from_trash(item_id: $request.body#/task_id).
// The server's words are made printable.
func RecoveryText(rec mcpeffect.Recovery) string {
	return printable(rec.CompensatingOperation.OperationID) + "(" + strings.Join(BindingTexts(rec, ": "), ", ") + ")"
}

// maxShownBindings is how many parameters of an undo a report shows: a
// server may send any number.
const maxShownBindings = 10

// BindingTexts returns the parameters of rec for a report, in the order
// of their names, each its name, sep and its expression, made printable
// and cut at 200 characters; at most ten, and then how many more there
// are.
func BindingTexts(rec mcpeffect.Recovery, sep string) []string {
	params := rec.CompensatingOperation.Parameters
	names := slices.Sorted(maps.Keys(params))
	var out []string
	for _, p := range names[:min(len(names), maxShownBindings)] {
		out = append(out, shortText(p, 200)+sep+shortText(params[p], 200))
	}
	if more := len(names) - maxShownBindings; more > 0 {
		out = append(out, fmt.Sprintf("and %d more", more))
	}
	return out
}
