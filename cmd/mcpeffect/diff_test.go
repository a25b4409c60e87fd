package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/manifest"
)

// writeFile writes data to a file named name in a temporary directory,
// and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cleanReport returns the audit -json report of the clean server, edited
// by edit, which gets each tool's JSON object.
func cleanReport(t *testing.T, edit func(tool map[string]any)) []byte {
	t.Helper()
	res := runCommand(t, append([]string{"audit", "-json"}, httpServer(t, streamable(cleanServer(0)))...)...)
	if res.code != exitOK {
		t.Fatalf("audit: exit %d: %s", res.code, res.stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tool := range doc["tools"].([]any) {
		edit(tool.(map[string]any))
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// declared returns the declared hints of a tool of a report.
func declared(tool map[string]any) map[string]any { return tool["declared"].(map[string]any) }

// cleanManifest returns the manifest of the clean server's registry.
func cleanManifest(t *testing.T) []byte {
	t.Helper()
	_, r := cleanServerRegistry(0)
	var b bytes.Buffer
	if err := manifest.Of(r, mcpeffect.ScopeNames{}).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDiff(t *testing.T) {
	same := func(map[string]any) {}
	// What the old version said; the new one is the clean server.
	wasRead := func(tool map[string]any) {
		if tool["name"] == "create_note" {
			tool["declared"] = map[string]any{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
		}
	}
	wasDestructive := func(tool map[string]any) {
		if tool["name"] == "create_note" {
			declared(tool)["destructiveHint"] = true
		}
	}
	wasCalledOld := func(tool map[string]any) {
		if tool["name"] == "get_note" {
			tool["name"] = "get_old_note"
		}
	}
	reworded := func(tool map[string]any) {
		if tool["name"] == "get_note" {
			tool["description"] = "Gets a note."
		}
	}

	for _, tc := range []struct {
		name     string
		args     func(t *testing.T) []string
		code     int
		kinds    []audit.ChangeKind
		added    int
		removed  int
		oldKind  string
		newKind  string
		oldTools int
	}{
		{"report and live HTTP, same", func(t *testing.T) []string {
			return []string{writeFile(t, "old.json", cleanReport(t, same)), httpServer(t, streamable(cleanServer(2)))[1]}
		}, exitOK, nil, 0, 0, "report", "live", 6},
		{"report and live stdio, widened", func(t *testing.T) []string {
			old := writeFile(t, "old.json", cleanReport(t, wasRead))
			return append([]string{old}, stdioServer(t, "clean")...)
		}, exitFindings, []audit.ChangeKind{audit.ReadToWrite, audit.NowNonIdempotent}, 0, 0, "report", "live", 6},
		{"two reports, narrowed", func(t *testing.T) []string {
			return []string{writeFile(t, "old.json", cleanReport(t, wasDestructive)), writeFile(t, "new.json", cleanReport(t, same))}
		}, exitOK, []audit.ChangeKind{audit.NoLongerDestructive}, 0, 0, "report", "report", 6},
		{"two reports, reversed: widened", func(t *testing.T) []string {
			return []string{writeFile(t, "old.json", cleanReport(t, same)), writeFile(t, "new.json", cleanReport(t, wasDestructive))}
		}, exitFindings, []audit.ChangeKind{audit.NowDestructive}, 0, 0, "report", "report", 6},
		{"renamed: added and removed", func(t *testing.T) []string {
			return []string{writeFile(t, "old.json", cleanReport(t, wasCalledOld)), "-json", writeFile(t, "new.json", cleanReport(t, same))}
		}, exitOK, nil, 1, 1, "report", "report", 6},
		{"description changed", func(t *testing.T) []string {
			return []string{writeFile(t, "old.json", cleanReport(t, reworded)), writeFile(t, "new.json", cleanReport(t, same))}
		}, exitOK, []audit.ChangeKind{audit.DescriptionChanged}, 0, 0, "report", "report", 6},
		{"manifest and live: descriptions not compared", func(t *testing.T) []string {
			return append([]string{writeFile(t, "manifest.json", cleanManifest(t))}, stdioServer(t, "clean")...)
		}, exitOK, nil, 0, 0, "manifest", "live", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args(t)
			res := runCommand(t, append([]string{"diff", "-json"}, args...)...)
			if res.code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", res.code, tc.code, res.stderr)
			}
			var d struct {
				Old, New struct {
					Kind  string
					Tools int
				}
				Changes        []audit.Change
				Added, Removed []audit.DiffTool
			}
			if err := json.Unmarshal([]byte(res.stdout), &d); err != nil {
				t.Fatalf("%v:\n%s", err, res.stdout)
			}
			var kinds []audit.ChangeKind
			for _, c := range d.Changes {
				kinds = append(kinds, c.Kind)
			}
			if strings.Join(toStrings(kinds), ",") != strings.Join(toStrings(tc.kinds), ",") {
				t.Errorf("changes %v, want %v", kinds, tc.kinds)
			}
			if len(d.Added) != tc.added || len(d.Removed) != tc.removed {
				t.Errorf("added %v, removed %v", d.Added, d.Removed)
			}
			if d.Old.Kind != tc.oldKind || d.New.Kind != tc.newKind || d.Old.Tools != tc.oldTools {
				t.Errorf("sides %+v, %+v", d.Old, d.New)
			}
		})
	}
}

func toStrings[S ~string](s []S) []string {
	var out []string
	for _, v := range s {
		out = append(out, string(v))
	}
	return out
}

func TestDiffText(t *testing.T) {
	old := writeFile(t, "old.json", cleanReport(t, func(tool map[string]any) {
		if tool["name"] == "post_message" {
			declared(tool)["openWorldHint"] = false
		}
	}))
	res := runCommand(t, append([]string{"diff", old}, stdioServer(t, "clean")...)...)
	if res.code != exitFindings {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, s := range []string{
		"old: " + old + " (report, server clean 1.0.0): 6 tools",
		"new: ",
		"widened  post_message  now-open-world  now open-world, was closed-world (openWorldHint false → true)",
		"1 tool widened, 0 narrowed, 0 otherwise changed; 0 added, 0 removed. A widening fails the diff.",
	} {
		if !strings.Contains(res.stdout, s) {
			t.Errorf("the diff does not say %q:\n%s", s, res.stdout)
		}
	}
}

func TestDiffStdin(t *testing.T) {
	// A report piped in: mcpeffect audit -json ... | mcpeffect diff - NEW.
	data := cleanReport(t, func(map[string]any) {})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.Write(data)
		w.Close()
	}()
	stdin := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = stdin }()
	res := runCommand(t, "diff", "-", writeFile(t, "new.json", data))
	if res.code != exitOK || !strings.Contains(res.stdout, "old: standard input (report") {
		t.Errorf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestDiffCannotRun(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, "good.json", []byte(`{"tools": []}`))
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no sides", nil, "give two sides, OLD and NEW; got 0"},
		{"one side", []string{good}, "give two sides, OLD and NEW; got 1"},
		{"three sides", []string{good, good, good}, "got 3"},
		{"two sides and a command", []string{good, good, "--", "server"}, "give one side before --, the old one; got 2"},
		{"nothing after --", []string{good, "--"}, "no command after --"},
		{"-header without a URL", []string{"-header", "A: b", good, good}, "-header needs a side that is an http:// or https:// URL"},
		{"both from stdin", []string{"-", "-"}, "only one side can be read from standard input"},
		{"negative timeout", []string{"-timeout", "-1s", good, good}, "-timeout -1s is negative"},
		{"unknown flag", []string{"-x", good, good}, "flag provided but not defined: -x"},
		{"no such file", []string{filepath.Join(dir, "nope.json"), good}, "nope.json: no such file or directory"},
		{"a directory", []string{dir, good}, "not a regular file"},
		{"not JSON", []string{writeFile(t, "bad.json", []byte("tools:")), good}, "bad.json: not JSON"},
		{"not a report", []string{writeFile(t, "other.json", []byte(`{"name": "x"}`)), good}, `no "tools": not an audit -json report nor a registry manifest`},
		{"a live side that fails", []string{good, "--", filepath.Join(dir, "no-server")}, "cannot run"},
		{"a URL that refuses", []string{good, "http://127.0.0.1:1/mcp"}, "http://127.0.0.1:1/mcp: nothing is listening at 127.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, append([]string{"diff"}, tc.args...)...)
			if res.code != exitError {
				t.Errorf("exit code %d, want %d", res.code, exitError)
			}
			if !strings.Contains(res.stderr, tc.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tc.stderr, res.stderr)
			}
			if res.stdout != "" {
				t.Errorf("stdout %q", res.stdout)
			}
		})
	}
}

// TestDiffManifestWidened holds a registry's manifest against a server
// whose tool is reclassified: the manifest is read by its hints.
func TestDiffManifestWidened(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "clean", Version: "2"}, nil)
	r := mcpeffect.NewRegistry()
	for _, tool := range cleanToolEffects {
		e := tool.effect
		if tool.name == "tag_note" {
			e = mcpeffect.Destructive | mcpeffect.Idempotent
		}
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: tool.name}, e, noop)
	}
	res := runCommand(t, "diff", writeFile(t, "manifest.json", cleanManifest(t)), httpServer(t, streamable(s))[1])
	if res.code != exitFindings || !strings.Contains(res.stdout, "widened  tag_note") {
		t.Errorf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestDiffOutcomesCommand diffs the manifest of a server whose tool
// depends on its action against new versions of it, served live: the
// published outcomes are compared with the manifest's, and one that does
// more fails the diff, though the tool's hints are the same.
func TestDiffOutcomesCommand(t *testing.T) {
	type podArgs struct {
		Action string `json:"action"`
	}
	server := func(effects map[string]mcpeffect.Effect) (*mcp.Server, *mcpeffect.Registry) {
		s := mcp.NewServer(&mcp.Implementation{Name: "pods", Version: "1"}, nil)
		r := mcpeffect.NewRegistry()
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods"}, mcpeffect.EffectByArgument("action", effects),
			func(context.Context, *mcp.CallToolRequest, podArgs) (*mcp.CallToolResult, any, error) {
				return nil, nil, nil
			})
		s.AddReceivingMiddleware(r.Middleware(nil))
		return s, r
	}
	_, old := server(map[string]mcpeffect.Effect{"get": mcpeffect.Read, "delete": mcpeffect.Destructive})
	var saved bytes.Buffer
	if err := manifest.Of(old, mcpeffect.ScopeNames{}).WriteJSON(&saved); err != nil {
		t.Fatal(err)
	}
	oldFile := writeFile(t, "manifest.json", saved.Bytes())
	for _, tc := range []struct {
		name    string
		effects map[string]mcpeffect.Effect
		code    int
		want    []string
	}{
		{"get writes", map[string]mcpeffect.Effect{"get": mcpeffect.Write, "delete": mcpeffect.Destructive}, exitFindings,
			[]string{`widened  pods  read-to-write`, `action="get" now a write, was a read (read → write)`, "1 tool widened"}},
		{"a read added", map[string]mcpeffect.Effect{"get": mcpeffect.Read, "list": mcpeffect.Read, "delete": mcpeffect.Destructive}, exitOK,
			[]string{`changed  pods  outcome-added  action="list" added, read: within the worst case of the outcomes before`}},
		{"the same", map[string]mcpeffect.Effect{"get": mcpeffect.Read, "delete": mcpeffect.Destructive}, exitOK,
			[]string{"No change."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := server(tc.effects)
			res := runCommand(t, "diff", oldFile, httpServer(t, streamable(s))[1])
			if res.code != tc.code {
				t.Errorf("exit %d, want %d", res.code, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.stdout, w) {
					t.Errorf("the diff does not say %q:\n%s%s", w, res.stdout, res.stderr)
				}
			}
		})
	}
}

// notesServer returns a server of notes whose registry declares the undos
// of recoveries (tool to undo, each bound by its id), served over
// Streamable HTTP; with idempotency, the server runs calls with a key
// once, and declares it.
func notesServer(t *testing.T, recoveries map[string]string, idempotency bool) string {
	t.Helper()
	type idArgs struct {
		ID int `json:"id"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	r := mcpeffect.NewRegistry()
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "create_note"}, mcpeffect.Write,
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, idArgs, error) {
			return nil, idArgs{1}, nil
		})
	for _, name := range []string{"delete_note", "restore_note", "undelete_note"} {
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: name}, mcpeffect.Destructive|mcpeffect.Idempotent,
			func(context.Context, *mcp.CallToolRequest, idArgs) (*mcp.CallToolResult, any, error) {
				return nil, nil, nil
			})
	}
	for tool, undo := range recoveries {
		from := "$request.body#/id"
		if tool == "create_note" {
			from = "$response.body#/id"
		}
		if err := r.DeclareRecovery(tool, mcpeffect.Compensation(undo, map[string]string{"id": from})); err != nil {
			t.Fatal(err)
		}
	}
	opts := &mcpeffect.MiddlewareOptions{}
	if idempotency {
		opts.Idempotency = &mcpeffect.IdempotencyOptions{}
	}
	e := r.Enforcer(opts)
	s.AddReceivingMiddleware(e.Middleware())
	h := e.IdempotencyHandler(streamable(s))
	return httpServer(t, h)[1]
}

// TestDiffRecoveries diffs a saved report of a server of notes against
// new versions of it, live: an undo added, changed or removed, and the
// idempotency capability declared or withdrawn, each a change that does
// not fail the diff; a report written before the audit read them compares
// neither.
func TestDiffRecoveries(t *testing.T) {
	deleted := map[string]string{"delete_note": "restore_note"}
	res := runCommand(t, "audit", "-json", "-url", notesServer(t, deleted, false))
	if res.code != exitOK {
		t.Fatalf("audit: exit %d: %s%s", res.code, res.stdout, res.stderr)
	}
	saved := writeFile(t, "old.json", []byte(res.stdout))
	var doc map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	summary := doc["summary"].(map[string]any)
	delete(summary, "recoveries")
	delete(summary, "idempotency")
	older, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	before := writeFile(t, "older.json", older)

	for _, tc := range []struct {
		name        string
		old         string
		recoveries  map[string]string
		idempotency bool
		kinds       []audit.ChangeKind
		text        []string
	}{
		{name: "the same", old: saved, recoveries: deleted, text: []string{"No change."}},
		{name: "an undo added", old: saved, recoveries: map[string]string{"delete_note": "restore_note", "create_note": "delete_note"},
			kinds: []audit.ChangeKind{audit.RecoveryAdded},
			text:  []string{"changed  create_note  recovery-added  now publishes its undo (SEP-3172): delete_note(id: $response.body#/id)"}},
		{name: "an undo changed", old: saved, recoveries: map[string]string{"delete_note": "undelete_note"},
			kinds: []audit.ChangeKind{audit.RecoveryChanged},
			text:  []string{"changed  delete_note  recovery-changed  its undo (SEP-3172) changed: restore_note(id: $request.body#/id) → undelete_note(id: $request.body#/id)"}},
		{name: "an undo removed", old: saved, kinds: []audit.ChangeKind{audit.RecoveryRemoved},
			text: []string{"changed  delete_note  recovery-removed  no longer publishes its undo (SEP-3172), which was restore_note(id: $request.body#/id)"}},
		{name: "idempotency declared", old: saved, recoveries: deleted, idempotency: true,
			kinds: []audit.ChangeKind{audit.IdempotencyDeclared},
			text: []string{"changed  (server)  idempotency-declared  the server now declares capabilities.tools.idempotency (SEP-3182)",
				"0 tools widened, 0 narrowed, 0 otherwise changed; 0 added, 0 removed. What the server declares of itself changed."}},
		{name: "a report from before: neither compared", old: before, idempotency: true, text: []string{"No change."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := notesServer(t, tc.recoveries, tc.idempotency)
			res := runCommand(t, "diff", tc.old, url)
			if res.code != exitOK {
				t.Errorf("exit %d, want %d: %s", res.code, exitOK, res.stderr)
			}
			for _, w := range tc.text {
				if !strings.Contains(res.stdout, w) {
					t.Errorf("the diff does not say %q:\n%s", w, res.stdout)
				}
			}
			res = runCommand(t, "diff", "-json", tc.old, url)
			var d struct {
				Changes []audit.Change
				Summary audit.DiffSummary
			}
			if err := json.Unmarshal([]byte(res.stdout), &d); err != nil {
				t.Fatalf("%v:\n%s", err, res.stdout)
			}
			if d.Summary.Widened != 0 || d.Summary.Server+d.Summary.Changed != len(tc.kinds) {
				t.Errorf("summary %+v, for the changes %v", d.Summary, tc.kinds)
			}
			var kinds []audit.ChangeKind
			for _, c := range d.Changes {
				kinds = append(kinds, c.Kind)
			}
			if strings.Join(toStrings(kinds), ",") != strings.Join(toStrings(tc.kinds), ",") {
				t.Errorf("changes %v, want %v", kinds, tc.kinds)
			}
			for _, format := range []string{"sarif", "markdown"} {
				res := runCommand(t, "diff", "-format", format, tc.old, url)
				if res.code != exitOK {
					t.Errorf("-format %s: exit %d: %s", format, res.code, res.stderr)
				}
				if format == "sarif" {
					_, results := checkSARIF(t, res.stdout)
					if len(results) != len(tc.kinds) {
						t.Errorf("SARIF results %q, want one for each of %v", results, tc.kinds)
					}
				}
				for _, k := range tc.kinds {
					if format == "markdown" && !strings.Contains(res.stdout, strings.ReplaceAll(string(k), "-", `\-`)) {
						t.Errorf("-format markdown does not say %s:\n%s", k, res.stdout)
					}
				}
			}
		})
	}

	// Withdrawn, and another undo: what the README shows, after the
	// lines that name the sides.
	res = runCommand(t, "audit", "-json", "-url", notesServer(t, deleted, true))
	res = runCommand(t, "diff", writeFile(t, "declared.json", []byte(res.stdout)), notesServer(t, map[string]string{"delete_note": "undelete_note"}, false))
	if res.code != exitOK || !strings.Contains(res.stdout, "changed  (server)     idempotency-withdrawn  the server no longer declares capabilities.tools.idempotency (SEP-3182): a retry of a write that is not idempotent may run it twice") {
		t.Errorf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	_, table, _ := strings.Cut(res.stdout, "\n\n")
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```text\n"+table+"```\n") {
		t.Errorf("README.md does not quote the diff of the notes server; it prints:\n%s", table)
	}
}
