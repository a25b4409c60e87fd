package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drawerServer keeps named values as files of dir, with tools whose
// effect depends on their arguments, which they publish as outcomes:
// drawer, whose action selects get (a read), set (a destructive,
// idempotent write) and count, which says it reads but counts views, a
// lie planted in one outcome; stash, whose mode selects look (a read)
// and new, which claims it is not idempotent but makes a file only where
// there is none, an outcome over-cautious; and label, whose effect a
// function of its input decides (the general form): given a value it
// overwrites, and otherwise reads, as it says.
func drawerServer(dir string) (*mcp.Server, *mcpeffect.Registry) {
	s := mcp.NewServer(&mcp.Implementation{Name: "drawer", Version: "1.0.0"}, nil)
	r := mcpeffect.NewRegistry()
	type args struct {
		Action string `json:"action,omitempty"`
		Mode   string `json:"mode,omitempty"`
		Name   string `json:"name"`
		Value  string `json:"value,omitempty"`
	}
	path := func(name string) string { return filepath.Join(dir, filepath.Base(name)) }
	ok := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "drawer"}, mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
		"get": mcpeffect.Read, "set": mcpeffect.Destructive | mcpeffect.Idempotent, "count": mcpeffect.Read,
	}), func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
		switch in.Action {
		case "get":
			_, err := os.ReadFile(path(in.Name))
			return ok, nil, err
		case "set":
			return ok, nil, os.WriteFile(path(in.Name), []byte(in.Value), 0o644)
		}
		f, err := os.OpenFile(path(in.Name+".views"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = f.WriteString("+")
			f.Close()
		}
		return ok, nil, err
	})
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "stash"}, mcpeffect.EffectByArgument("mode", map[string]mcpeffect.Effect{
		"look": mcpeffect.Read, "new": mcpeffect.Write,
	}), func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
		if in.Mode == "look" {
			_, err := os.ReadDir(dir)
			return ok, nil, err
		}
		f, err := os.OpenFile(path(in.Name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = f.WriteString(in.Value)
			f.Close()
		} else if os.IsExist(err) {
			err = nil // there already: nothing to do
		}
		return ok, nil, err
	})
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "label"}, mcpeffect.EffectByFunc(func(in args) mcpeffect.Effect {
		if in.Value != "" {
			return mcpeffect.Destructive | mcpeffect.Idempotent
		}
		return mcpeffect.Read
	}, mcpeffect.Read, mcpeffect.Destructive|mcpeffect.Idempotent),
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			if in.Value == "" {
				_, err := os.ReadFile(path(in.Name))
				return ok, nil, err
			}
			return ok, nil, os.WriteFile(path(in.Name), []byte(in.Value), 0o644)
		})
	s.AddReceivingMiddleware(r.Middleware(nil))
	return s, r
}

// TestVerifyOutcomesSameAsGo proves the drawer server, whose tools'
// effects depend on their arguments, both ways, on the same directory
// state: each call is held to the outcome its arguments select (or, in
// the general form, the one its example declares), and each outcome must
// show what it claims. Go and the command find the same lie in one
// outcome and the same over-cautious outcome, in the same words.
func TestVerifyOutcomesSameAsGo(t *testing.T) {
	set := func(name, value string) func(testing.TB, struct{}, *mcpeffecttest.Session) any {
		return func(_ testing.TB, _ struct{}, s *mcpeffecttest.Session) any {
			s.CallTool("drawer", map[string]any{"action": "set", "name": name, "value": value}, nil)
			return nil
		}
	}
	examples := []mcpeffecttest.Example[struct{}]{
		{Tool: "drawer", Name: "get", Setup: withArgs(set("milk", "1"), map[string]any{"action": "get", "name": "milk"})},
		{Tool: "drawer", Name: "set", Setup: withArgs(set("milk", "1"), map[string]any{"action": "set", "name": "milk", "value": "2"})},
		{Tool: "drawer", Name: "count", Setup: withArgs(set("milk", "1"), map[string]any{"action": "count", "name": "milk"})},
		{Tool: "stash", Name: "look", Setup: withArgs(set("milk", "1"), map[string]any{"mode": "look", "name": "milk"})},
		{Tool: "stash", Name: "new", Args: map[string]any{"mode": "new", "name": "tea", "value": "1"}},
		{Tool: "label", Name: "look", Effect: mcpeffect.Read, Setup: withArgs(set("milk", "1"), map[string]any{"name": "milk"})},
		{Tool: "label", Name: "rename", Effect: mcpeffect.Destructive | mcpeffect.Idempotent,
			Setup: withArgs(set("milk", "1"), map[string]any{"name": "milk", "value": "oat"})},
	}
	const setMilk = `"fixtures": [{"tool": "drawer", "args": {"action": "set", "name": "milk", "value": "1"}}]`
	file := `{"env": {"` + shelfDirEnv + `": "{dir}"}, "state": {"dir": "{dir}"}, "examples": [
		{"tool": "drawer", "name": "get", ` + setMilk + `, "args": {"action": "get", "name": "milk"}},
		{"tool": "drawer", "name": "set", ` + setMilk + `, "args": {"action": "set", "name": "milk", "value": "2"}},
		{"tool": "drawer", "name": "count", ` + setMilk + `, "args": {"action": "count", "name": "milk"}},
		{"tool": "stash", "name": "look", ` + setMilk + `, "args": {"mode": "look", "name": "milk"}},
		{"tool": "stash", "name": "new", "args": {"mode": "new", "name": "tea", "value": "1"}},
		{"tool": "label", "name": "look", "effect": "read", ` + setMilk + `, "args": {"name": "milk"}},
		{"tool": "label", "name": "rename", "effect": "write|destructive|idempotent", ` + setMilk + `, "args": {"name": "milk", "value": "oat"}}
	]}`

	failures, fromOutside, res, r := proveBothWays(t, drawerServer, "drawer", examples, file)
	var inGo []string
	for _, e := range failures {
		// Go's advice names its own API; the finding before it is the
		// engine's.
		finding, _, _ := strings.Cut(e, ". Give an example that shows it")
		inGo = append(inGo, finding)
	}
	slices.Sort(inGo)
	t.Logf("Go found:\n%s", strings.Join(inGo, "\n"))
	if len(inGo) != 2 {
		t.Errorf("Go found %d failures, want the lie of count and the claim of new", len(inGo))
	}
	if strings.Join(inGo, "\n") != strings.Join(fromOutside, "\n") {
		t.Errorf("Go and the command disagree.\nGo:\n%s\ncommand:\n%s", strings.Join(inGo, "\n"), strings.Join(fromOutside, "\n"))
	}
	if res.code != exitFindings {
		t.Errorf("exit %d, want %d", res.code, exitFindings)
	}
	checkVerdicts(t, &r, map[string]verify.Verdict{"drawer": verify.Lie, "stash": verify.Overcautious, "label": verify.Proven},
		map[string]lie{"drawer": {"read", "milk.views", "", "empty", `{"content":"+","kind":"file","mode":"0644"}`}})
	drawer := r.Tool("drawer")
	if drawer == nil || !strings.HasPrefix(drawer.Rule, "by action:") || drawer.Examples[2].Effect != "read" {
		t.Errorf("drawer: %s, want its rule and each example's outcome", mustJSON(t, drawer))
	}
	if stash := r.Tool("stash"); stash == nil || len(stash.Claims) != 1 || !strings.Contains(stash.Claims[0], `tool "stash", with arguments of effect write, is classified write, not idempotent`) {
		t.Errorf("stash: %s, want the claim of its outcome new", mustJSON(t, stash))
	}
}

// TestVerifyOutcomesDeclared holds the examples of a tool with outcomes to
// what they declare: an example of the general form without an effect, an
// effect that its arguments contradict, and one the rule does not have,
// each fail the tool; and an effect given for a tool of one effect fails
// it too.
func TestVerifyOutcomesDeclared(t *testing.T) {
	for _, tc := range []struct {
		name, example, tool, want string
	}{
		{"the general form, undeclared", `{"tool": "label", "args": {"name": "milk"}}`, "label",
			`do not give the effect of the call with certainty (see EffectRule.CallEffect): set the example's "effect"`},
		{"contradicted by its arguments", `{"tool": "drawer", "effect": "write|destructive|idempotent", "args": {"action": "get", "name": "milk"}}`, "drawer",
			`the example's "effect" says write|destructive|idempotent, but the tool's rule gives read`},
		{"not an outcome", `{"tool": "label", "effect": "write", "args": {"name": "milk", "value": "oat"}}`, "label",
			`the example's "effect" is write, which is not one of the outcomes the tool's rule declares (by function: read, write|destructive|idempotent)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "drawer.json")
			os.WriteFile(path, []byte(`{"env": {"`+shelfDirEnv+`": "{dir}"}, "state": {"dir": "{dir}"}, "examples": [`+tc.example+`],
				"skip": {"drawer": "not this test's", "stash": "not this test's", "label": "not this test's"}}`), 0o644)
			data, _ := os.ReadFile(path)
			// The tool under test is examined, not skipped.
			data = []byte(strings.Replace(string(data), `"`+tc.tool+`": "not this test's", `, "", 1))
			data = []byte(strings.Replace(string(data), `, "`+tc.tool+`": "not this test's"`, "", 1))
			os.WriteFile(path, data, 0o644)
			res := runCommand(t, append([]string{"verify", "-json", "-timeout", "1m", "-examples", path}, stdioServer(t, "drawer")...)...)
			var r verify.Report
			if err := decodeReport(res.stdout, &r); err != nil {
				t.Fatalf("exit %d, %s: %v", res.code, res.stderr, err)
			}
			tr := r.Tool(tc.tool)
			if tr == nil || tr.Verdict != verify.Failed || len(tr.Examples) != 1 || !strings.Contains(tr.Examples[0].Error, tc.want) {
				t.Errorf("%s: %s, want failed, saying %q", tc.tool, mustJSON(t, tr), tc.want)
			}
		})
	}
}

// hintsBelowOutcomes is a server, not built with mcpeffect, whose tool
// file publishes outcomes by its action, read for get and a destructive,
// idempotent write for set, but whose hints say it only reads: hints
// that claim less than an outcome it publishes, which hosts decide from.
func hintsBelowOutcomes(dir string) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "below", Version: "1.0.0"}, nil)
	type args struct {
		Action string `json:"action"`
		Value  string `json:"value,omitempty"`
	}
	outcome := func(value string, e mcpeffect.Effect) map[string]any {
		h := e.Hints()
		return map[string]any{"value": value, "effect": e.String(), "readOnlyHint": h.ReadOnlyHint, "destructiveHint": h.DestructiveHint,
			"idempotentHint": h.IdempotentHint, "openWorldHint": h.OpenWorldHint}
	}
	meta := mcp.Meta{mcpeffect.OutcomesMetaKey: map[string]any{"argument": "action", "outcomes": []any{
		outcome("get", mcpeffect.Read), outcome("set", mcpeffect.Destructive|mcpeffect.Idempotent),
	}}}
	no := false
	mcp.AddTool(s, &mcp.Tool{Name: "file", Meta: meta, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no}},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			if in.Action == "set" {
				return nil, nil, os.WriteFile(filepath.Join(dir, "f"), []byte(in.Value), 0o644)
			}
			_, err := os.ReadFile(filepath.Join(dir, "f"))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, err
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// TestVerifyHintsBelowOutcomes holds each call to the tool's hints as well
// as to its outcome, where the hints claim less: the set call, true to
// its outcome, makes the read-only hints a lie.
func TestVerifyHintsBelowOutcomes(t *testing.T) {
	dir := t.TempDir()
	ts := httptest.NewServer(hintsBelowOutcomes(dir))
	t.Cleanup(ts.Close)
	examples := writeFile(t, "below.json", []byte(`{
	"reset": ["sh", "-c", "rm -f \"$0\"/*", `+strconvQuote(dir)+`],
	"state": {"dir": `+strconvQuote(dir)+`},
	"examples": [
		{"tool": "file", "name": "get", "fixtures": [{"tool": "file", "args": {"action": "set", "value": "1"}}], "args": {"action": "get"}},
		{"tool": "file", "name": "set", "fixtures": [{"tool": "file", "args": {"action": "set", "value": "1"}}], "args": {"action": "set", "value": "2"}}
	]}`))
	res := runCommand(t, "verify", "-json", "-timeout", "1m", "-examples", examples, "-url", ts.URL)
	var r verify.Report
	if err := decodeReport(res.stdout, &r); err != nil {
		t.Fatalf("exit %d, %s: %v", res.code, res.stderr, err)
	}
	checkVerdicts(t, &r, map[string]verify.Verdict{"file": verify.Lie},
		map[string]lie{"file": {"read", "f", "content", `"1"`, `"2"`}})
	file := r.Tool("file")
	if file == nil || len(file.Examples) != 2 || len(file.Examples[0].Lies) != 0 || len(file.Examples[1].Lies) != 1 ||
		!strings.Contains(file.Examples[1].Lies[0].Message, `tool "file" is classified read, but example "set" changed the state`) {
		t.Errorf("file: %s, want one lie, of its hints, in the example set", mustJSON(t, file))
	}
}
