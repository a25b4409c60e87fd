// Package verify is mcpeffect verify: the proof, from outside, that the
// hints each tool of an MCP server advertises are true, by calling it on
// a known state and comparing the state before and after. Each example
// runs through effectproof.Prove, the procedure mcpeffecttest.Verify runs
// too, so that the command and the Go helper cannot disagree; the
// servers are reached through package connect, and the report is
// written by package write.
package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/effectproof"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A File is an examples file: what to call, on what state, as whom. Its
// JSON Schema is verify-examples.schema.json, beside this package's
// command's README.
type File struct {
	// Env is added to the environment of the server run as a command,
	// with each placeholder replaced (see [Example]).
	Env map[string]string `json:"env,omitempty"`
	// Reset, if set, is run before each example, in place of a fresh
	// instance: for a server reached by URL, which Verify cannot start.
	Reset []string `json:"reset,omitempty"`
	// State says where the state the tools change is, and what of it is
	// bookkeeping rather than data.
	State StateSpec `json:"state"`
	// Confirm makes verify a person who accepts every question the server
	// asks through a form elicitation, such as its confirmation before a
	// destructive call, so that the calls a server confirms reach their
	// work. Without it, verify declares it cannot be asked, as a host
	// that cannot.
	Confirm bool `json:"confirm,omitempty"`
	// Callers are who may call, by name; the one named "" (or "default")
	// makes every call that names no caller.
	Callers map[string]Caller `json:"callers,omitempty"`
	// Examples are the calls that prove the tools' hints: at least one
	// for each tool.
	Examples []Example `json:"examples"`
	// Overcautious waives, tool by tool with a reason, the finding that a
	// tool's hints claim more than any example showed.
	Overcautious map[string]string `json:"overcautious,omitempty"`
	// Skip leaves tools out of the proof, tool by tool with a reason:
	// they are reported as not examined rather than as lacking an
	// example.
	Skip map[string]string `json:"skip,omitempty"`
	// ResultErrors say how to read a failure that a tool reports in its
	// result alone, without setting isError: a call whose result matches
	// one is a tool error, for its example and for a fixture alike.
	ResultErrors []ResultError `json:"resultErrors,omitempty"`
}

// A ResultError is a way a tool reports failure in its result alone, such
// as {"success": false, "error": "no such note"} without isError: a
// result whose value at the JSON pointer At (in its structured content
// or, without it, in its first text read as JSON, as a fixture's Save
// reads it) equals Equals, as JSON values are equal, is a tool error
// whose text is the value at Message, or the result's text.
type ResultError struct {
	// Tools matches the names of the tools whose results it reads; *
	// matches any run of characters. Every tool if empty.
	Tools string `json:"tools,omitempty"`
	// At is the JSON pointer of the value that says whether the call
	// failed.
	At string `json:"at"`
	// Equals is the value that says it failed.
	Equals json.RawMessage `json:"equals"`
	// Message, if set, is the JSON pointer of the error's text.
	Message string `json:"message,omitempty"`

	equals string // Equals, in canonical form
}

// A StateSpec is where the state is: one or more of Dir, SQLite, JSON
// and Command. With more than one, the key of each record begins with
// the name of its source and a colon ("sqlite:tasks/1", "dir:notes/a.md"),
// so that two sources cannot make one record, and LeaveOut and Flags
// match keys so prefixed.
type StateSpec struct {
	// Dir is a directory tree: a record for each path under it.
	Dir string `json:"dir,omitempty"`
	// SQLite is a SQLite database file: a record for each row of every
	// table, by its key.
	SQLite string `json:"sqlite,omitempty"`
	// JSON is a JSON document or JSON Lines file: a record for each
	// member of a collection in it.
	JSON *JSONState `json:"json,omitempty"`
	// Command prints the state as one JSON object, records by key, each
	// a JSON object of fields.
	Command []string `json:"command,omitempty"`
	// LeaveOut is the bookkeeping left out of the state, each entry with
	// its reason.
	LeaveOut []LeaveOut `json:"leaveOut,omitempty"`
	// Flags are fields whose empty value is itself a value users see,
	// each entry with its reason.
	Flags []Flag `json:"flags,omitempty"`
}

// A Flag is a field that stands for a state by being set or empty: a
// deleted_at, an archived_at, a revoked_at, where an empty value means
// "not deleted". The records it matches show, besides the field, the
// field Flag, true when the field is set and false when it is empty, so
// that setting such a field is a change of a value users see (a task
// gone to the Trash, a token that no longer works), not a value added to
// an empty field. A record that does not have the field at all has the
// flag false, as a NULL column does.
type Flag struct {
	// Record matches record keys; * matches any run of characters.
	Record string `json:"record"`
	// Field is the field that stands for the state.
	Field string `json:"field"`
	// Flag is the name of the field that shows the state; it must not be
	// a field the records have.
	Flag string `json:"flag"`
	// Reason says what users see when the field is set. Required.
	Reason string `json:"reason"`
}

// A JSONState is a JSON file as a state.
type JSONState struct {
	File string `json:"file"`
	// Lines reads the file as JSON Lines: one JSON value a line, the
	// lines a collection.
	Lines bool `json:"lines,omitempty"`
	// At is the JSON pointer of the collection (an array or an object)
	// whose members are the records; "" is the whole document.
	At string `json:"at,omitempty"`
	// Key, if set, are JSON pointers into each member whose values, those
	// present, joined by "/", key its record; without it a member is
	// keyed by its JSON pointer.
	Key []string `json:"key,omitempty"`
	// Sets names the members of a record that hold arrays whose elements
	// are a set, such as a list of tags: each element becomes a record of
	// its own, keyed RECORD/MEMBER/ELEMENT, so that adding one is an
	// addition rather than a change of the whole list.
	Sets []string `json:"sets,omitempty"`
}

// A LeaveOut is bookkeeping left out of the state: a record, or a field
// of records, that users do not see as data.
type LeaveOut struct {
	// Record matches record keys; * matches any run of characters.
	Record string `json:"record"`
	// Field, if set, leaves out that field of the records matched, and
	// otherwise the whole records.
	Field string `json:"field,omitempty"`
	// Reason says why it is not data. Required.
	Reason string `json:"reason"`
}

// A Caller is who makes a call.
type Caller struct {
	// Env is added to the environment of the server run as a command for
	// this caller's calls: such as a token the server reads at start.
	Env map[string]string `json:"env,omitempty"`
	// Headers are added to each HTTP request of this caller's calls: such
	// as "Authorization": "Bearer {env:TOKEN}".
	Headers map[string]string `json:"headers,omitempty"`
}

// An Example is one call of a tool.
//
// In its arguments, the arguments of its fixtures, the state's paths, and
// the environment, headers and command lines, {dir} is the example's own
// temporary directory; {NAME} is a value a fixture saved under NAME; and
// {env:NAME} is the variable NAME of verify's own environment. A string
// that is a placeholder alone becomes the value itself, a number stays a
// number; within a longer string the value is written as text.
type Example struct {
	Tool string `json:"tool"`
	// Name tells the tool's examples apart; "#1" and so on if empty.
	Name string `json:"name,omitempty"`
	// Fixtures are calls made first, through the server's own tools, to
	// make what the example's call needs.
	Fixtures []Fixture `json:"fixtures,omitempty"`
	// Args are the call's arguments.
	Args map[string]any `json:"args,omitempty"`
	// Caller names who makes the call, one of the file's Callers.
	Caller string `json:"caller,omitempty"`
	// WantError, if set, says the call must fail, with a tool error or
	// protocol error whose text holds it, and change nothing.
	WantError string `json:"wantError,omitempty"`
	// Effect, for a tool whose effect depends on its arguments (one that
	// publishes its outcomes in its _meta, under
	// "io.github.mcpeffect/outcomes"), is the effect of this call, as
	// mcpeffect writes effects ("write|idempotent"): needed where the
	// arguments do not select an outcome with certainty, as in the
	// general form; elsewhere it must be the one they select.
	Effect string `json:"effect,omitempty"`
	// Undo says to check that the undo the tool publishes (SEP-3172: in
	// annotations.recovery, or in its _meta under
	// "io.github.mcpeffect/recovery") restores what the call changed: on a
	// fresh instance of its own, with the example's fixtures made again,
	// verify captures the state, makes the call, binds the undo's
	// arguments from the call's arguments and result
	// (mcpeffect.Recovery.Bind), calls the undo as the same caller, and
	// holds the state to the one before the call, with the same records
	// and fields left out. It needs a call that succeeds and changes
	// something.
	Undo bool `json:"undo,omitempty"`

	effect mcpeffect.Effect // Effect, parsed
	line   int              // where it begins in the file, counting from 1
}

// A Fixture is a call that makes what an example needs.
type Fixture struct {
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args,omitempty"`
	Caller string         `json:"caller,omitempty"`
	// Save names values of the result to use in later arguments: name to
	// the JSON pointer of the value in the result's structured content
	// or, without structured content, in its first text parsed as JSON;
	// a pointer that starts with #text reads the first text as is.
	Save map[string]string `json:"save,omitempty"`
}

// maxFileSize bounds the examples file.
const maxFileSize = 8 << 20

// ReadFile reads and checks an examples file.
func ReadFile(name string) (*File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: more than %d bytes", name, maxFileSize)
	}
	return ParseFile(data)
}

// ParseFile parses an examples file and checks what needs no server.
func ParseFile(data []byte) (*File, error) {
	original := data
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	// "$schema" is allowed, as editors use it to find the schema.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("the examples file is not a JSON object: %v", err)
	}
	if _, ok := top["$schema"]; ok {
		delete(top, "$schema")
		data, _ = json.Marshal(top)
		dec = json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		dec.UseNumber()
	}
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("the examples file: %v", err)
	}
	for i, line := range exampleLines(original) {
		if i < len(f.Examples) {
			f.Examples[i].line = line
		}
	}
	return &f, f.check()
}

// exampleLines returns the line where each member of the array
// "examples" of the JSON object data begins, counting from 1; nil if data
// is not such an object.
func exampleLines(data []byte) []int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key != "examples" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return nil
		}
		var lines []int
		for dec.More() {
			// The offset is the end of what came before: the member
			// begins after the space and the comma that follow.
			at := int(dec.InputOffset())
			for at < len(data) && strings.IndexByte(" \t\r\n,", data[at]) >= 0 {
				at++
			}
			lines = append(lines, 1+bytes.Count(data[:at], []byte("\n")))
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return lines
			}
		}
		return lines
	}
	return nil
}

// ExampleLine returns the line of the file where the first example of
// tool begins, counting from 1, or 0 if it has none.
func (f *File) ExampleLine(tool string) int {
	for _, ex := range f.Examples {
		if ex.Tool == tool {
			return ex.line
		}
	}
	return 0
}

var saveName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var placeholder = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*|env:[A-Za-z_][A-Za-z0-9_]*)\}`)

func (f *File) check() error {
	var errs []error
	n := 0
	s := f.State
	for _, set := range []bool{s.Dir != "", s.SQLite != "", s.JSON != nil, len(s.Command) > 0} {
		if set {
			n++
		}
	}
	if n == 0 {
		errs = append(errs, errors.New("state: give one or more of dir, sqlite, json and command"))
	}
	if s.JSON != nil && s.JSON.File == "" {
		errs = append(errs, errors.New("state.json: no file"))
	}
	for i, l := range s.LeaveOut {
		switch {
		case l.Record == "":
			errs = append(errs, fmt.Errorf("state.leaveOut[%d]: no record pattern", i))
		case strings.TrimSpace(l.Reason) == "":
			errs = append(errs, fmt.Errorf("state.leaveOut[%d] (%q): no reason: say why it is not data", i, l.Record))
		}
	}
	for i, fl := range s.Flags {
		switch {
		case fl.Record == "" || fl.Field == "" || fl.Flag == "":
			errs = append(errs, fmt.Errorf("state.flags[%d]: give record, field and flag", i))
		case fl.Flag == fl.Field:
			errs = append(errs, fmt.Errorf("state.flags[%d] (%q): the flag must be a field of its own, not %q itself", i, fl.Record, fl.Field))
		case strings.TrimSpace(fl.Reason) == "":
			errs = append(errs, fmt.Errorf("state.flags[%d] (%q, field %q): no reason: say what users see when it is set", i, fl.Record, fl.Field))
		}
	}
	if len(f.Examples) == 0 {
		errs = append(errs, errors.New("no examples"))
	}
	caller := func(where, name string) {
		if name != "" && name != "default" {
			if _, ok := f.Callers[name]; !ok {
				errs = append(errs, fmt.Errorf("%s: no caller %q in callers", where, name))
			}
		}
	}
	names := map[string]map[string]bool{}
	for i, ex := range f.Examples {
		where := fmt.Sprintf("examples[%d]", i)
		if ex.Tool == "" {
			errs = append(errs, fmt.Errorf("%s: no tool", where))
			continue
		}
		if names[ex.Tool] == nil {
			names[ex.Tool] = map[string]bool{}
		}
		if ex.Name != "" && names[ex.Tool][ex.Name] {
			errs = append(errs, fmt.Errorf("%s: tool %q has two examples named %q", where, ex.Tool, ex.Name))
		}
		names[ex.Tool][ex.Name] = true
		if ex.Effect != "" {
			e, err := mcpeffect.ParseEffect(ex.Effect)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: effect %q: %v", where, ex.Effect, err))
			}
			f.Examples[i].effect = e
		}
		caller(where, ex.Caller)
		if ex.Undo && ex.WantError != "" {
			errs = append(errs, fmt.Errorf("%s: undo checks the undo of a call that succeeds, and wantError says this one fails: give the undo an example of its own", where))
		}
		for j, fx := range ex.Fixtures {
			w := fmt.Sprintf("%s.fixtures[%d]", where, j)
			if fx.Tool == "" {
				errs = append(errs, fmt.Errorf("%s: no tool", w))
			}
			for name := range fx.Save {
				switch {
				case !saveName.MatchString(name):
					// It would never be replaced: {a-b} is text, not a
					// placeholder.
					errs = append(errs, fmt.Errorf("%s: save %q: a name is letters, digits and _, not starting with a digit, so that {%s} can use it", w, name, name))
				case name == "dir":
					errs = append(errs, fmt.Errorf("%s: save %q: {dir} is the example's directory", w, name))
				}
			}
			caller(w, fx.Caller)
		}
	}
	for i, re := range f.ResultErrors {
		where := fmt.Sprintf("resultErrors[%d]", i)
		switch {
		case !strings.HasPrefix(re.At, "/"):
			errs = append(errs, fmt.Errorf("%s: at %q: give the JSON pointer of the value that says the call failed, such as \"/success\"", where, re.At))
		case len(re.Equals) == 0:
			errs = append(errs, fmt.Errorf("%s: no equals: give the value that says the call failed, such as false", where))
		case re.Message != "" && !strings.HasPrefix(re.Message, "/"):
			errs = append(errs, fmt.Errorf("%s: message %q: give the JSON pointer of the error's text, such as \"/error\"", where, re.Message))
		default:
			v, err := decodeJSON(re.Equals)
			if err == nil {
				f.ResultErrors[i].equals, err = effectproof.CanonicalJSON(v)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: equals: %v", where, err))
			}
		}
	}
	for tool, reason := range f.Overcautious {
		if strings.TrimSpace(reason) == "" {
			errs = append(errs, fmt.Errorf("overcautious: tool %q is waived without a reason", tool))
		}
	}
	for tool, reason := range f.Skip {
		if strings.TrimSpace(reason) == "" {
			errs = append(errs, fmt.Errorf("skip: tool %q is skipped without a reason", tool))
		}
		if len(names[tool]) > 0 {
			errs = append(errs, fmt.Errorf("skip: tool %q is skipped but has examples", tool))
		}
	}
	return errors.Join(errs...)
}

// resultError returns the text of the failure that the result res of a
// call of tool reports in itself, by the first of the file's ResultErrors
// that reads it, and whether there is one.
func (f *File) resultError(tool string, res *mcp.CallToolResult) (string, bool) {
	for _, re := range f.ResultErrors {
		if re.Tools != "" && !globMatch(re.Tools, tool) {
			continue
		}
		v, err := saved(res, re.At)
		if err != nil {
			continue // no such value: not this way of failing
		}
		if got, err := effectproof.CanonicalJSON(v); err != nil || got != re.equals {
			continue
		}
		text := resultText(res)
		if re.Message != "" {
			if m, err := saved(res, re.Message); err == nil {
				if s, ok := m.(string); ok {
					text = s
				} else {
					text, _ = effectproof.CanonicalJSON(m)
				}
			}
		}
		return text, true
	}
	return "", false
}

// caller returns the caller called name.
func (f *File) caller(name string) Caller {
	if name == "" {
		name = "default"
	}
	if c, ok := f.Callers[name]; ok {
		return c
	}
	return f.Callers[""]
}

// vars are the values of placeholders in one example.
type vars map[string]any

// expandString replaces the placeholders of s; a placeholder alone gives
// its value itself, of whatever type. An unknown placeholder is an error.
func (v vars) expandString(s string) (any, error) {
	if m := placeholder.FindStringSubmatchIndex(s); m != nil && m[0] == 0 && m[1] == len(s) {
		return v.value(s[m[2]:m[3]])
	}
	var err error
	out := placeholder.ReplaceAllStringFunc(s, func(p string) string {
		val, e := v.value(p[1 : len(p)-1])
		if e != nil {
			err = e
			return p
		}
		if str, ok := val.(string); ok {
			return str
		}
		raw, _ := json.Marshal(val)
		return string(raw)
	})
	return out, err
}

func (v vars) value(name string) (any, error) {
	if env, ok := strings.CutPrefix(name, "env:"); ok {
		val, ok := os.LookupEnv(env)
		if !ok {
			return nil, fmt.Errorf("{%s}: the variable %s is not set", name, env)
		}
		return val, nil
	}
	val, ok := v[name]
	if !ok {
		return nil, fmt.Errorf("{%s}: no fixture saved %q before", name, name)
	}
	return val, nil
}

// text expands s and returns it as text.
func (v vars) text(s string) (string, error) {
	val, err := v.expandString(s)
	if err != nil {
		return "", err
	}
	if str, ok := val.(string); ok {
		return str, nil
	}
	raw, _ := json.Marshal(val)
	return string(raw), nil
}

// expand replaces the placeholders in every string of a JSON value.
func (v vars) expand(x any) (any, error) {
	switch x := x.(type) {
	case string:
		return v.expandString(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			val, err := v.expand(e)
			if err != nil {
				return nil, err
			}
			out[k] = val
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			val, err := v.expand(e)
			if err != nil {
				return nil, err
			}
			out[i] = val
		}
		return out, nil
	}
	return x, nil
}

func (v vars) texts(in []string) ([]string, error) {
	out := make([]string, len(in))
	for i, s := range in {
		t, err := v.text(s)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

func (v vars) env(m map[string]string) ([]string, error) {
	var out []string
	for k, s := range m {
		t, err := v.text(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		out = append(out, k+"="+t)
	}
	return out, nil
}
