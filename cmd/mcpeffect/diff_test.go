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
