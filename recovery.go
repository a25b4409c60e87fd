package mcpeffect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RecoveryMetaKey is the key, in the _meta of a listed tool, under which
// a tool whose undo is declared ([Registry.DeclareRecovery]) publishes its
// [Recovery]. SEP-3172 puts it in the tool's annotations, as
// annotations.recovery ([RecoveryAnnotation]); neither SDK can: go-sdk's
// ToolAnnotations and mcp-go's ToolAnnotation are structs with the five
// fields of the specification and nothing else, so what is added to them
// is lost when the listing is encoded. _meta is a map in both, and a
// client of either SDK keeps it. The object is the same.
const RecoveryMetaKey = "io.github.mcpeffect/recovery"

// ErrInvalidRecovery is wrapped by the errors of [Registry.DeclareRecovery]
// and [Registry.CheckRecoveries], and of [Recovery.Validate].
var ErrInvalidRecovery = errors.New("mcpeffect: invalid recovery")

// A Recovery says how to undo what a call of a tool did, as SEP-3172
// (revision c66570f6, 2026-07-30) puts it in the tool's annotations: a
// call of another tool of the same server (the compensating operation),
// whose parameters are bound from the original call. A server declares a
// tool's recovery with [Registry.DeclareRecovery]; a host reads it from a
// listing with package host (ParseRecovery, RecoveryOf), and binds the
// undo's arguments with [Recovery.Bind].
//
// It is advice, as the draft says, not a guarantee: a host should hold
// the undo to the same approval as any call of that tool.
type Recovery struct {
	// Strategy is [RecoveryCompensation], the one the draft defines.
	Strategy string `json:"strategy"`
	// CompensatingOperation is the call that undoes the effect.
	CompensatingOperation CompensatingOperation `json:"compensatingOperation"`
}

// A CompensatingOperation is the call of a [Recovery].
type CompensatingOperation struct {
	// OperationID is the name of the tool to call, a tool of the same
	// server.
	OperationID string `json:"operationId"`
	// Parameters maps each argument of that call to a runtime expression
	// that gives its value: "$request.body#" and a JSON pointer into the
	// arguments of the original call ([RequestBodyExpression]), or
	// "$response.body#" and one into its result's structured content
	// ([ResponseBodyExpression]), such as "$response.body#/id". These
	// are the forms of OpenAPI 3.0's runtime expressions that a tools/call
	// has: it has no URL, method, status or headers.
	Parameters map[string]string `json:"parameters"`
}

// Compensation returns the [Recovery] that undoes a tool's effect by a
// call of the tool undo, with parameters bound as in
// [CompensatingOperation] Parameters. The map is copied.
func Compensation(undo string, parameters map[string]string) Recovery {
	params := maps.Clone(parameters)
	if params == nil {
		// The draft's parameters are required: an undo without arguments
		// has an empty object, not null.
		params = map[string]string{}
	}
	return Recovery{Strategy: RecoveryCompensation, CompensatingOperation: CompensatingOperation{OperationID: undo, Parameters: params}}
}

// Validate returns nil if rec is a recovery as the draft defines it: the
// compensation strategy, a valid tool name, and parameters that are each
// named and bound by an expression of [CompensatingOperation] Parameters
// with a valid JSON pointer (RFC 6901). The error wraps
// [ErrInvalidRecovery] and names what is wrong.
func (rec Recovery) Validate() error {
	if rec.Strategy != RecoveryCompensation {
		return fmt.Errorf("%w: strategy %q: the one strategy SEP-3172 defines is %q", ErrInvalidRecovery, rec.Strategy, RecoveryCompensation)
	}
	op := rec.CompensatingOperation
	if err := ValidateToolName(op.OperationID); err != nil {
		return fmt.Errorf("%w: operationId: %v", ErrInvalidRecovery, err)
	}
	for _, name := range slices.Sorted(maps.Keys(op.Parameters)) {
		if name == "" {
			return fmt.Errorf("%w: a parameter of %q has no name", ErrInvalidRecovery, op.OperationID)
		}
		if _, _, err := parseExpression(op.Parameters[name]); err != nil {
			return fmt.Errorf("%w: parameter %q of %q: %v", ErrInvalidRecovery, name, op.OperationID, err)
		}
	}
	return nil
}

// parseExpression splits a runtime expression of CompensatingOperation
// Parameters into what it reads (RequestBodyExpression or
// ResponseBodyExpression) and its JSON pointer.
func parseExpression(expr string) (source, pointer string, err error) {
	for _, prefix := range []string{ResponseBodyExpression, RequestBodyExpression} {
		if p, ok := strings.CutPrefix(expr, prefix); ok {
			if err := checkPointer(p); err != nil {
				return "", "", fmt.Errorf("expression %q: %v", expr, err)
			}
			return prefix, p, nil
		}
	}
	return "", "", fmt.Errorf("expression %q is not %q or %q followed by a JSON pointer", expr, ResponseBodyExpression+"/...", RequestBodyExpression+"/...")
}

// checkPointer returns nil if p is a JSON pointer (RFC 6901): empty, or
// reference tokens each after a "/", in which "~" is followed by 0 or 1.
func checkPointer(p string) error {
	if p == "" {
		return nil
	}
	if p[0] != '/' {
		return fmt.Errorf("the JSON pointer %q does not begin with /", p)
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || p[i+1] != '0' && p[i+1] != '1') {
			return fmt.Errorf("the JSON pointer %q has a ~ that is not ~0 or ~1", p)
		}
	}
	return nil
}

// pointerTokens returns the reference tokens of p, a valid JSON pointer,
// unescaped.
func pointerTokens(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(p[1:], "/")
	for i, t := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return parts
}

// Bind returns the arguments of the compensating call that undoes a call
// whose arguments were request and whose result's structured content was
// response (both JSON; response may be nil for a result without one),
// each parameter resolved from its expression. As the draft requires, a
// parameter whose expression cannot be resolved (a member that is not
// there, a result without structured content) makes the recovery
// unavailable for that call: Bind returns an error naming it, and no
// arguments.
func (rec Recovery) Bind(request, response json.RawMessage) (map[string]json.RawMessage, error) {
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	docs := map[string]json.RawMessage{RequestBodyExpression: request, ResponseBodyExpression: response}
	out := make(map[string]json.RawMessage, len(rec.CompensatingOperation.Parameters))
	for _, name := range slices.Sorted(maps.Keys(rec.CompensatingOperation.Parameters)) {
		expr := rec.CompensatingOperation.Parameters[name]
		source, pointer, _ := parseExpression(expr)
		v, err := resolvePointer(docs[source], pointer)
		if err != nil {
			return nil, fmt.Errorf("mcpeffect: the recovery by %q is unavailable for this call: parameter %q (%s): %v",
				rec.CompensatingOperation.OperationID, name, expr, err)
		}
		out[name] = v
	}
	return out, nil
}

// resolvePointer returns the value at pointer in doc, JSON, as JSON.
func resolvePointer(doc json.RawMessage, pointer string) (json.RawMessage, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, errors.New("there is nothing to read it from")
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // numbers as they were written, however large
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	for _, tok := range pointerTokens(pointer) {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[tok]
			if !ok {
				return nil, fmt.Errorf("no member %q", tok)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) || tok != strconv.Itoa(i) {
				return nil, fmt.Errorf("no element %q in an array of %d", tok, len(node))
			}
			v = node[i]
		default:
			return nil, fmt.Errorf("no member %q in a value that is not an object or an array", tok)
		}
	}
	return json.Marshal(v)
}

// DeclareRecovery declares that the effect of the tool called name is
// undone by rec, so that the tool publishes it when it is listed (see
// [RecoveryMetaKey]) on a server enforced by this registry's middleware
// or by the mcp-go adapter, whatever the order in which the tools were
// added:
//
//	r.DeclareRecovery("delete_task", mcpeffect.Compensation("restore_from_trash",
//		map[string]string{"item_id": "$request.body#/task_id"}))
//
// It returns an error, wrapping [ErrInvalidRecovery], when rec is not
// valid ([Recovery.Validate]); when the tool is not classified yet, or is
// a read, which has nothing to undo; when the undo is classified already
// and is a read, which undoes nothing; and when the tool has another
// recovery already (the same one is accepted). The undo may be
// classified later: [Registry.CheckRecoveries] checks it, as each listing
// does.
func (r *Registry) DeclareRecovery(name string, rec Recovery) error {
	if err := rec.Validate(); err != nil {
		return fmt.Errorf("mcpeffect: tool %q: %w", name, err)
	}
	rec = Compensation(rec.CompensatingOperation.OperationID, rec.CompensatingOperation.Parameters)
	e, ok := r.Effect(name)
	switch {
	case !ok:
		return fmt.Errorf("%w: tool %q is not classified: classify it (AddTool) before declaring its recovery", ErrInvalidRecovery, name)
	case e&Write == 0:
		return fmt.Errorf("%w: tool %q is classified %s, which changes nothing: there is nothing to undo", ErrInvalidRecovery, name, e)
	}
	if err := r.checkUndo(name, rec, false); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.recoveryMap()
	if have, ok := old[name]; ok {
		if sameRecovery(have, rec) {
			return nil
		}
		return fmt.Errorf("%w: tool %q has a recovery already, by %q", ErrInvalidRecovery, name, have.CompensatingOperation.OperationID)
	}
	next := maps.Clone(old)
	if next == nil {
		next = map[string]Recovery{}
	}
	next[name] = rec
	r.recoveries.Store(&next)
	return nil
}

func sameRecovery(a, b Recovery) bool {
	return a.Strategy == b.Strategy && a.CompensatingOperation.OperationID == b.CompensatingOperation.OperationID &&
		maps.Equal(a.CompensatingOperation.Parameters, b.CompensatingOperation.Parameters)
}

// checkUndo returns the error of name's recovery rec whose undo is a read,
// or, when classified is set, one that is not classified.
func (r *Registry) checkUndo(name string, rec Recovery, classified bool) error {
	undo := rec.CompensatingOperation.OperationID
	e, ok := r.Effect(undo)
	switch {
	case !ok && classified:
		return fmt.Errorf("%w: tool %q is undone by %q, which the registry does not classify (no scope may call it)", ErrInvalidRecovery, name, undo)
	case ok && e&Write == 0:
		return fmt.Errorf("%w: tool %q is undone by %q, which is classified %s and changes nothing", ErrInvalidRecovery, name, undo, e)
	}
	return nil
}

// Recovery returns the recovery declared for the tool called name, and
// whether there is one. Its Parameters are a copy.
func (r *Registry) Recovery(name string) (Recovery, bool) {
	rec, ok := r.recoveryMap()[name]
	if ok {
		rec = Compensation(rec.CompensatingOperation.OperationID, rec.CompensatingOperation.Parameters)
	}
	return rec, ok
}

// hasRecoveries reports whether any recovery is declared: the check of a
// listing that is left alone otherwise.
func (r *Registry) hasRecoveries() bool { return len(r.recoveryMap()) > 0 }

// recoveryMap returns the declared recoveries, by tool; no one changes
// the map.
func (r *Registry) recoveryMap() map[string]Recovery {
	if m := r.recoveries.Load(); m != nil {
		return *m
	}
	return nil
}

// CheckRecoveries checks every declared recovery against the registry and
// against listed, the tools a server lists (any of them may be missing,
// as from a page of a listing): that each undo is classified, and is a
// write; and, where listed holds both the tool and its undo, that every
// parameter is a property of the undo's input schema, that every property
// that schema requires is bound, and that each expression's first member
// is a property of the schema it reads (the tool's input schema for
// $request.body, its output schema for $response.body), where that
// schema names its properties. A listing of a server enforced by the
// middleware or the mcp-go adapter fails with its error, naming the tool
// and what is wrong; a test calls it to fail earlier. The errors are
// joined, each wrapping [ErrInvalidRecovery].
func (r *Registry) CheckRecoveries(listed []*mcp.Tool) error {
	recs := r.recoveryMap()
	if len(recs) == 0 {
		return nil
	}
	byName := make(map[string]*mcp.Tool, len(listed))
	for _, t := range listed {
		if t != nil {
			byName[t.Name] = t
		}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(recs)) {
		rec := recs[name]
		if err := r.checkUndo(name, rec, true); err != nil {
			errs = append(errs, err)
			continue
		}
		tool, undo := byName[name], byName[rec.CompensatingOperation.OperationID]
		if tool == nil || undo == nil {
			continue
		}
		errs = append(errs, checkRecoverySchemas(name, rec, tool, undo)...)
	}
	return errors.Join(errs...)
}

// checkRecoverySchemas returns what is wrong with rec, the recovery of
// tool, given the schemas of tool and of its undo.
func checkRecoverySchemas(name string, rec Recovery, tool, undo *mcp.Tool) []error {
	var errs []error
	op := rec.CompensatingOperation
	undoProps, undoRequired, named := schemaProperties(undo.InputSchema)
	for _, p := range slices.Sorted(maps.Keys(op.Parameters)) {
		if named && !slices.Contains(undoProps, p) {
			errs = append(errs, fmt.Errorf("%w: tool %q is undone by %q with the parameter %q, which its input schema does not have (it has %s)",
				ErrInvalidRecovery, name, op.OperationID, p, strings.Join(undoProps, ", ")))
		}
		source, pointer, _ := parseExpression(op.Parameters[p])
		schema, what := tool.InputSchema, "input"
		if source == ResponseBodyExpression {
			schema, what = tool.OutputSchema, "output"
		}
		toks := pointerTokens(pointer)
		if props, _, ok := schemaProperties(schema); ok && len(toks) > 0 && !slices.Contains(props, toks[0]) {
			errs = append(errs, fmt.Errorf("%w: tool %q is undone by %q with %q = %q, but its %s schema has no property %q",
				ErrInvalidRecovery, name, op.OperationID, p, op.Parameters[p], what, toks[0]))
		}
	}
	for _, req := range undoRequired {
		if _, ok := op.Parameters[req]; !ok {
			errs = append(errs, fmt.Errorf("%w: tool %q is undone by %q, which requires %q, and the recovery does not bind it",
				ErrInvalidRecovery, name, op.OperationID, req))
		}
	}
	return errs
}

// schemaProperties returns the names of the properties of an object
// schema (as a tool holds it: a *jsonschema.Schema, a map, raw JSON) and
// those it requires, sorted, and whether it names its properties.
func schemaProperties(schema any) (props, required []string, named bool) {
	if schema == nil {
		return nil, nil, false
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, nil, false
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil || s.Properties == nil {
		return nil, nil, false
	}
	return slices.Sorted(maps.Keys(s.Properties)), s.Required, true
}

// publishRecoveries returns res, a tools/list result, with each listed
// tool whose recovery is declared published under RecoveryMetaKey, or the
// error of CheckRecoveries. The tools are copied, not changed: they
// belong to the server.
func (r *Registry) publishRecoveries(res mcp.Result) (mcp.Result, error) {
	list, ok := res.(*mcp.ListToolsResult)
	if !ok || !r.hasRecoveries() {
		return res, nil
	}
	if err := r.CheckRecoveries(list.Tools); err != nil {
		return nil, fmt.Errorf("mcpeffect: the tools cannot be listed: %w", err)
	}
	out := *list
	out.Tools = slices.Clone(list.Tools)
	for i, t := range out.Tools {
		if t == nil {
			continue
		}
		rec, ok := r.Recovery(t.Name)
		if !ok {
			continue
		}
		tt := *t
		tt.Meta = maps.Clone(t.Meta)
		if tt.Meta == nil {
			tt.Meta = mcp.Meta{}
		}
		tt.Meta[RecoveryMetaKey] = recoveryJSON(rec)
		out.Tools[i] = &tt
	}
	return &out, nil
}

// recoveryJSON returns rec as the JSON types that a listing decodes into,
// so that code reading a tool's _meta in the same process sees what a
// client would.
func recoveryJSON(rec Recovery) map[string]any {
	params := make(map[string]any, len(rec.CompensatingOperation.Parameters))
	for k, v := range rec.CompensatingOperation.Parameters {
		params[k] = v
	}
	return map[string]any{
		"strategy": rec.Strategy,
		"compensatingOperation": map[string]any{
			"operationId": rec.CompensatingOperation.OperationID,
			"parameters":  params,
		},
	}
}
