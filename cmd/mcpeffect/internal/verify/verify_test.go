package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect/internal/effectproof"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func loadSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	data, err := os.ReadFile("../../verify-examples.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func validate(t *testing.T, schema *jsonschema.Resolved, data []byte) error {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return schema.Validate(v)
}

// TestSchema holds the JSON Schema of the examples file to the file's Go
// form: every examples file of the repository is valid by both, and a
// file using every member the Go form has is valid by the schema.
func TestSchema(t *testing.T) {
	schema := loadSchema(t)
	files, err := filepath.Glob("../../testdata/verify/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples files: %v", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, schema, data); err != nil {
			t.Errorf("%s: the schema refuses it: %v", name, err)
		}
		if _, err := ParseFile(data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	full := File{
		Env:     map[string]string{"A": "b"},
		Reset:   []string{"true"},
		Confirm: true,
		State: StateSpec{
			JSON:     &JSONState{File: "f", Lines: true, At: "/a", Key: []string{"/id"}, Sets: []string{"tags"}},
			Dir:      "{dir}/files",
			LeaveOut: []LeaveOut{{Record: "r/*", Field: "updated_at", Reason: "bookkeeping"}},
			Flags:    []Flag{{Record: "json:r/*", Field: "deleted_at", Flag: "deleted", Reason: "gone from lists"}},
		},
		Callers: map[string]Caller{"agent": {Env: map[string]string{"T": "x"}, Headers: map[string]string{"Authorization": "Bearer x"}}},
		Examples: []Example{{Tool: "t", Name: "n", Fixtures: []Fixture{{Tool: "f", Args: map[string]any{"a": 1}, Caller: "agent", Save: map[string]string{"id": "/id"}}}, Args: map[string]any{"id": "{id}"}, Caller: "agent", WantError: "no", Effect: "write|destructive|idempotent"},
			{Tool: "t", Name: "undone", Undo: true}},
		Overcautious: map[string]string{"t": "why"},
		Skip:         map[string]string{"u": "why"},
		ResultErrors: []ResultError{{Tools: "t*", At: "/success", Equals: json.RawMessage(`false`), Message: "/error"}},
	}
	data, _ := json.Marshal(full)
	if err := validate(t, schema, data); err != nil {
		t.Errorf("the schema refuses a file with every member of the Go form: %v\n%s", err, data)
	}
	if _, err := ParseFile(data); err != nil {
		t.Errorf("ParseFile refuses a file with every member: %v", err)
	}
	// What ParseFile refuses without a server, the schema refuses too:
	// an undo checked after a call that must fail.
	both := `{"state": {"dir": "d"}, "examples": [{"tool": "t", "wantError": "denied", "undo": true}]}`
	if err := validate(t, schema, []byte(both)); err == nil {
		t.Errorf("the schema accepts %s", both)
	}
	if err := validate(t, schema, []byte(`{"state": {"dir": "d"}, "examples": [{"tool": "t", "wantError": "denied", "undo": false}]}`)); err != nil {
		t.Errorf("the schema refuses wantError beside undo false: %v", err)
	}
}

func TestParseFileErrors(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"not JSON", `[`, "not a JSON object"},
		{"an unknown member", `{"state": {"dir": "d"}, "examples": [{"tool": "t"}], "exmaples": []}`, "unknown field"},
		{"no state", `{"examples": [{"tool": "t"}]}`, "one or more of dir"},
		{"a flag without a reason", `{"state": {"dir": "d", "flags": [{"record": "x", "field": "a", "flag": "b"}]}, "examples": [{"tool": "t"}]}`, "no reason"},
		{"a flag without a field", `{"state": {"dir": "d", "flags": [{"record": "x", "flag": "b", "reason": "r"}]}, "examples": [{"tool": "t"}]}`, "give record, field and flag"},
		{"a flag named as its field", `{"state": {"dir": "d", "flags": [{"record": "x", "field": "a", "flag": "a", "reason": "r"}]}, "examples": [{"tool": "t"}]}`, "a field of its own"},
		{"no examples", `{"state": {"dir": "d"}}`, "no examples"},
		{"a save name no placeholder can use", `{"state": {"dir": "d"}, "examples": [{"tool": "t", "fixtures": [{"tool": "f", "save": {"night-bot": "/secret"}}]}]}`, `save "night-bot": a name is letters`},
		{"a save name that is dir", `{"state": {"dir": "d"}, "examples": [{"tool": "t", "fixtures": [{"tool": "f", "save": {"dir": "/id"}}]}]}`, `{dir} is the example's directory`},
		{"an effect that is none", `{"state": {"dir": "d"}, "examples": [{"tool": "t", "effect": "read|destructive"}]}`, `effect "read|destructive"`},
		{"a leave-out without a reason", `{"state": {"dir": "d", "leaveOut": [{"record": "x"}]}, "examples": [{"tool": "t"}]}`, "no reason"},
		{"a waiver without a reason", `{"state": {"dir": "d"}, "examples": [{"tool": "t"}], "overcautious": {"t": " "}}`, "without a reason"},
		{"an unknown caller", `{"state": {"dir": "d"}, "examples": [{"tool": "t", "caller": "bob"}]}`, `no caller "bob"`},
		{"two examples of one name", `{"state": {"dir": "d"}, "examples": [{"tool": "t", "name": "a"}, {"tool": "t", "name": "a"}]}`, "two examples"},
		{"an undo of a call that fails", `{"state": {"dir": "d"}, "examples": [{"tool": "t", "wantError": "denied", "undo": true}]}`, "undo checks the undo of a call that succeeds"},
		{"a tool skipped with examples", `{"state": {"dir": "d"}, "examples": [{"tool": "t"}], "skip": {"t": "why"}}`, "skipped but has examples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFile([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseFile = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	t.Setenv("MCPEFFECT_TEST_TOKEN", "s3cret")
	v := vars{"dir": "/tmp/x", "id": json.Number("7"), "name": "Ann"}
	got, err := v.expand(map[string]any{
		"path":  "{dir}/a.txt",
		"id":    "{id}",
		"label": "task {id} of {name}",
		"auth":  "Bearer {env:MCPEFFECT_TEST_TOKEN}",
		"list":  []any{"{name}", json.Number("2")},
		"brace": "{not a placeholder}",
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(got)
	want := `{"auth":"Bearer s3cret","brace":"{not a placeholder}","id":7,"label":"task 7 of Ann","list":["Ann",2],"path":"/tmp/x/a.txt"}`
	if string(raw) != want {
		t.Errorf("expand = %s, want %s", raw, want)
	}
	if _, err := v.expand("{missing}"); err == nil || !strings.Contains(err.Error(), "no fixture saved") {
		t.Errorf("an unknown placeholder: %v, want an error", err)
	}
	if _, err := v.expand("{env:MCPEFFECT_TEST_UNSET_VARIABLE}"); err == nil {
		t.Error("an unset variable expanded without an error")
	}
}

// TestDirState reads a tree holding every kind of file: a link is
// reported with its target and never followed, even out of the tree, and
// a FIFO is never opened (opening one would block).
func TestDirState(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("not in the tree"), 0o600)
	os.Mkdir(filepath.Join(root, "notes"), 0o750)
	os.WriteFile(filepath.Join(root, "notes", "a.txt"), []byte("milk\n"), 0o640)
	os.WriteFile(filepath.Join(root, "empty"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "bin"), []byte{0xff, 0x00, 0x01}, 0o644)
	os.WriteFile(filepath.Join(root, "big"), []byte(strings.Repeat("x", maxContentBytes+1)), 0o644)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "secret-link"))
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := dirState(t.Context(), root, newBudget())
	if err != nil {
		t.Fatal(err)
	}
	snap, err := effectproof.Canonical(s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{
		".":           {"kind": `"dir"`},
		"notes":       {"kind": `"dir"`, "mode": `"0750"`},
		"notes/a.txt": {"kind": `"file"`, "mode": `"0640"`, "content": `"milk\n"`},
		"empty":       {"kind": `"file"`, "mode": `"0644"`, "size": "0"},
		"bin":         {"kind": `"file"`, "base64": `"/wAB"`},
		"big":         {"kind": `"file"`, "size": "1048577"},
		"out":         {"kind": `"symlink"`, "target": `"` + outside + `"`},
		"secret-link": {"kind": `"symlink"`},
		"pipe":        {"kind": `"fifo"`, "mode": `"0600"`},
	}
	if len(snap) != len(want) {
		t.Errorf("%d records, want %d: %v", len(snap), len(want), snap)
	}
	for key, fields := range want {
		rec, ok := snap[key]
		if !ok {
			t.Errorf("no record %q", key)
			continue
		}
		for f, v := range fields {
			if rec[f] != v {
				t.Errorf("record %q, field %q = %s, want %s", key, f, rec[f], v)
			}
		}
	}
	if _, ok := snap["big"]["sha256"]; !ok {
		t.Error("a file past the bound has no digest")
	}
	for key := range snap {
		if strings.HasPrefix(key, "out/") {
			t.Errorf("the link out of the tree was followed: %q", key)
		}
	}
	if _, err := dirState(t.Context(), filepath.Join(root, "empty"), newBudget()); err == nil {
		t.Error("a file taken as a directory tree")
	}
}

func TestJSONState(t *testing.T) {
	dir := t.TempDir()
	lines := filepath.Join(dir, "memory.jsonl")
	os.WriteFile(lines, []byte(`{"type":"entity","name":"Ann","observations":["tea","chess"]}
{"type":"relation","from":"Ann","to":"Bob","relationType":"knows"}

`), 0o644)
	s, err := jsonState(t.Context(), lines, &JSONState{File: lines, Lines: true, Key: []string{"/type", "/name", "/from", "/relationType", "/to"}, Sets: []string{"observations"}}, newBudget())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"entity/Ann", "entity/Ann/observations/tea", "entity/Ann/observations/chess", "relation/Ann/knows/Bob"} {
		if _, ok := s[key]; !ok {
			t.Errorf("no record %q in %v", key, s)
		}
	}
	if _, ok := s["entity/Ann"]["observations"]; ok {
		t.Error("a set was left as a field")
	}

	doc := filepath.Join(dir, "doc.json")
	os.WriteFile(doc, []byte(`{"notes": {"1": {"title": "Milk"}, "a/b": {"title": "Eggs"}}, "list": [1, 1]}`), 0o644)
	s, err = jsonState(t.Context(), doc, &JSONState{File: doc, At: "/notes"}, newBudget())
	if err != nil {
		t.Fatal(err)
	}
	if s["/notes/1"]["title"] != "Milk" || s["/notes/a~1b"]["title"] != "Eggs" {
		t.Errorf("records by JSON pointer: %v", s)
	}
	if _, err := jsonState(t.Context(), doc, &JSONState{File: doc, At: "/list", Key: []string{"/x"}}, newBudget()); err == nil || !strings.Contains(err.Error(), "two records") {
		t.Errorf("two members of one key: %v, want an error", err)
	}
	if s, err := jsonState(t.Context(), filepath.Join(dir, "none.json"), &JSONState{}, newBudget()); err != nil || len(s) != 0 {
		t.Errorf("a file not yet made: %v, %v; want no records", s, err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := jsonState(t.Context(), filepath.Join(dir, "pipe"), &JSONState{}, newBudget()); err == nil {
		t.Error("a FIFO read as a JSON file")
	}
}

func TestLeaveOut(t *testing.T) {
	s := state{
		"task/1":     {"title": "Milk", "updated_at": "now"},
		"task/1/log": {"what": "x"},
		"note/1":     {"updated_at": "now"},
	}
	list := []LeaveOut{
		{Record: "task/*", Field: "updated_at", Reason: "r"},
		{Record: "*/log", Reason: "r"},
		{Record: "nothing/*", Reason: "r"},
	}
	used := make([]bool, len(list))
	leaveOut(s, list, used)
	if _, ok := s["task/1"]["updated_at"]; ok {
		t.Error("a field left in")
	}
	if _, ok := s["task/1/log"]; ok {
		t.Error("a record left in")
	}
	if s["note/1"]["updated_at"] != "now" {
		t.Error("a field of another record left out")
	}
	if !used[0] || !used[1] || used[2] {
		t.Errorf("used = %v, want [true true false]", used)
	}
}

// TestFlag holds a flag to what the state shows: true for a field set,
// false for one empty or absent, so that setting it is a change.
func TestFlag(t *testing.T) {
	s := state{
		"task/1": {"title": "Milk", "trash_id": "tr1"},
		"task/2": {"title": "Tea", "trash_id": nil},
		"task/3": {"title": "Oats", "trash_id": ""},
		"task/4": {"title": "Rye"},
		"note/1": {"trash_id": "tr2"},
	}
	list := []Flag{{Record: "task/*", Field: "trash_id", Flag: "in_trash", Reason: "r"}, {Record: "nothing/*", Field: "a", Flag: "b", Reason: "r"}}
	used := make([]bool, len(list))
	if err := flag(s, list, used); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{"task/1": true, "task/2": false, "task/3": false, "task/4": false, "note/1": nil} {
		if got := s[key]["in_trash"]; got != want {
			t.Errorf("%s: in_trash = %v, want %v", key, got, want)
		}
	}
	if !used[0] || used[1] {
		t.Errorf("used = %v, want [true false]", used)
	}
	before, _ := effectproof.Canonical(state{"task/2": {"title": "Tea", "in_trash": false}})
	after, _ := effectproof.Canonical(state{"task/2": {"title": "Tea", "trash_id": "tr3", "in_trash": true}})
	if changes := effectproof.Diff(before, after); !slices.ContainsFunc(changes, func(c effectproof.Change) bool { return c.Kind.Destroys() }) {
		t.Errorf("a task moved to the Trash: %v, want a change that destroys", changes)
	}
	// A flag must not hide a field of the data.
	err := flag(state{"task/1": {"trash_id": "x", "in_trash": "yes"}}, list[:1], make([]bool, 1))
	if err == nil || !strings.Contains(err.Error(), `already has a field "in_trash"`) {
		t.Errorf("a flag over a field: %v, want an error", err)
	}
}

// TestSeveralSources captures a state of two sources: each record's key
// is prefixed with its source's name, so that a file and a row of the
// same name stay two records.
func TestSeveralSources(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "tasks"), []byte("a file"), 0o644)
	os.WriteFile(filepath.Join(dir, "db.json"), []byte(`{"tasks": {"kind": "a row"}}`), 0o644)
	spec := StateSpec{Dir: "{dir}", JSON: &JSONState{File: "{dir}/db.json"}}
	s, err := capture(t.Context(), spec, vars{"dir": dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s["dir:tasks"]["content"] != "a file" || s["json:/tasks"]["kind"] != "a row" || len(s) != 4 {
		t.Errorf("state = %v, want dir:., dir:tasks, dir:db.json and json:/tasks", s)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tt := range []struct {
		pattern, name string
		want          bool
	}{
		{"task/*", "task/1", true},
		{"task/*", "task/1/label/a", true},
		{"task/*", "tasks/1", false},
		{"*/log", "a/b/log", true},
		{"*", "", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false},
		{"exact", "exact", true},
		{"*b", "ab", true},
		{"a*", "a", true},
		{"a*a", "a", false},
		{"**x", "yx", true},
		{"*a*", "bab", true},
		// Stars against a long name the pattern does not match: by
		// backtracking, longer than any test would wait.
		{"*a*a*a*a*a*b", strings.Repeat("a", 100_000), false},
		{"*a*a*a*a*a*b", strings.Repeat("a", 100_000) + "b", true},
	} {
		if got := globMatch(tt.pattern, tt.name); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %t, want %t", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestCommandState(t *testing.T) {
	defer func(n int) { maxStateBytes = n }(maxStateBytes)
	maxStateBytes = 1 << 20
	ctx := t.Context()
	s, err := commandState(ctx, []string{"sh", "-c", `echo '{"task/1": {"title": "Milk", "n": 12345678901234567890}}'`}, "", newBudget())
	if err != nil {
		t.Fatal(err)
	}
	if s["task/1"]["title"] != "Milk" || s["task/1"]["n"] != json.Number("12345678901234567890") {
		t.Errorf("state = %v", s)
	}
	for _, tc := range []struct {
		name, script, want string
	}{
		{"not records", `echo '[1, 2]'`, "not records by key"},
		{"a failure", `echo broken >&2; exit 3`, "exit status 3: broken"},
		{"too much", `head -c 3000000 /dev/zero`, "more than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := commandState(ctx, []string{"sh", "-c", tc.script}, "", newBudget())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	// A command whose child keeps its output open after it is killed
	// does not hold the deadline up.
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = commandState(short, []string{"sh", "-c", "sleep 30 & sleep 30"}, "", newBudget())
	if err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("a command that outlived its deadline: %v after %v", err, time.Since(start))
	}
}

// lowerBounds lowers the bounds of one capture for the test.
func lowerBounds(t *testing.T, bytes, values, tree int) {
	t.Helper()
	b, v, tr := maxStateBytes, maxStateValues, maxTreeBytes
	t.Cleanup(func() { maxStateBytes, maxStateValues, maxTreeBytes = b, v, tr })
	maxStateBytes, maxStateValues, maxTreeBytes = bytes, values, tree
}

// TestCaptureBounds holds every source to the bounds of one capture, on
// what it holds once decoded as well as on the bytes it reads: past one,
// the capture fails with a *BoundError that names the source and the
// bound. A JSON text of small values decodes to some 40 bytes a value of
// 2, so bytes alone do not bound it.
func TestCaptureBounds(t *testing.T) {
	lowerBounds(t, 64<<10, 1000, 256<<10)
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	zeros := "[" + strings.Repeat("0,", 1000) + "0]" // 1001 values in 2 KiB
	write("values.json", `{"a": `+zeros+`}`)
	write("lines.jsonl", strings.Repeat("{\"a\": 1}\n", 400))
	write("bytes.json", `{"a": "`+strings.Repeat("x", 64<<10)+`"}`)
	tree := filepath.Join(dir, "tree")
	os.Mkdir(tree, 0o755)
	for i := range 3 {
		os.WriteFile(filepath.Join(tree, fmt.Sprint(i)), []byte(strings.Repeat("x", 30<<10)), 0o644)
	}
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	digested := filepath.Join(dir, "digested")
	os.Mkdir(digested, 0o755)
	os.WriteFile(filepath.Join(digested, "big"), make([]byte, 300<<10), 0o644)
	for _, tc := range []struct {
		name   string
		spec   StateSpec
		source string
		want   string
	}{
		{"json values", StateSpec{JSON: &JSONState{File: "{dir}/values.json"}}, "json", "more than 1000 values once decoded (the bound of one capture)"},
		{"json lines values", StateSpec{JSON: &JSONState{File: "{dir}/lines.jsonl", Lines: true}}, "json", "more than 1000 values once decoded"},
		{"json bytes", StateSpec{JSON: &JSONState{File: "{dir}/bytes.json"}}, "json", "more than 65536 bytes held (the bound of one capture)"},
		{"command values", StateSpec{Command: []string{"cat", "{dir}/values.json"}}, "command", "cat printed: more than 1000 values once decoded"},
		{"command bytes", StateSpec{Command: []string{"cat", "{dir}/bytes.json"}}, "command", "cat printed more than 65536 bytes held"},
		{"tree contents", StateSpec{Dir: "{dir}/tree"}, "dir", "more than 65536 bytes held"},
		{"tree read", StateSpec{Dir: "{dir}/digested"}, "dir", "the tree holds more than 262144 bytes"},
		{"second source", StateSpec{Dir: "{dir}/empty", JSON: &JSONState{File: "{dir}/values.json"}}, "json", "more than 1000 values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := capture(t.Context(), tc.spec, vars{"dir": dir}, nil)
			var be *BoundError
			if !errors.As(err, &be) || be.Source != tc.source || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "the "+tc.source+" state") {
				t.Errorf("capture = %v, want a BoundError of the %s source, saying %q", err, tc.source, tc.want)
			}
		})
	}
}

// TestCaptureDeadline: a capture ends when its context does, whatever
// its source, rather than read and decode to the end.
func TestCaptureDeadline(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"a": {"b": 1}}`), 0o644)
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	for _, spec := range []StateSpec{
		{Dir: "{dir}"},
		{JSON: &JSONState{File: "{dir}/state.json"}},
		{Command: []string{"cat", "{dir}/state.json"}},
		{SQLite: "{dir}/db"},
	} {
		s, err := capture(ctx, spec, vars{"dir": dir}, []string{"cat"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("capture of %+v past its deadline = %v, %v; want the deadline", spec, s, err)
		}
	}
}

func TestParseResultErrors(t *testing.T) {
	for _, tt := range []struct{ name, member, want string }{
		{"no pointer", `{"equals": false}`, `resultErrors[0]: at "": give the JSON pointer`},
		{"a pointer without its slash", `{"at": "success", "equals": false}`, `at "success"`},
		{"no value", `{"at": "/success"}`, "resultErrors[0]: no equals"},
		{"a message that is no pointer", `{"at": "/ok", "equals": 0, "message": "error"}`, `message "error"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFile([]byte(`{"state": {"dir": "d"}, "examples": [{"tool": "t"}], "resultErrors": [` + tt.member + `]}`))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseFile = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	f, err := ParseFile([]byte(`{"state": {"dir": "d"}, "examples": [{"tool": "t"}], "resultErrors": [{"at": "/status", "equals": {"b": [1, "x"], "a": null}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		content any
		failed  bool
	}{
		{map[string]any{"status": map[string]any{"a": nil, "b": []any{1, "x"}}}, true},
		{map[string]any{"status": map[string]any{"b": []any{1, "x"}}}, false},
		{map[string]any{"status": map[string]any{"b": []any{1}}}, false},
		{map[string]any{"other": true}, false},
	} {
		res := &mcp.CallToolResult{StructuredContent: tc.content, Content: []mcp.Content{&mcp.TextContent{Text: "it failed"}}}
		if text, failed := f.resultError("t", res); failed != tc.failed || failed && text != "it failed" {
			t.Errorf("result %v: %q, %t; want %t", tc.content, text, failed, tc.failed)
		}
	}
}
