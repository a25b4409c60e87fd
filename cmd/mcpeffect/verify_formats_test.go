package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shelfExamples is an examples file of the shelf server, one example a
// tool, each on a line of its own: lines 4 to 7.
const shelfExamples = `{"env": {"` + shelfDirEnv + `": "{dir}"},
	"state": {"dir": "{dir}"},
	"examples": [
		{"tool": "put", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}], "args": {"name": "milk", "value": "2"}},
		{"tool": "list", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}]},
		{"tool": "peek", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}], "args": {"name": "milk"}},
		{"tool": "tag", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}], "args": {"name": "milk", "value": "dairy"}}
	]}`

// TestVerifySARIFLocation: without -location, verify's SARIF results
// point at the examples file, relative to the repository verify runs in,
// each at the line of its tool's first example, not at the server's
// command; -location points them at another file, at its first line.
func TestVerifySARIFLocation(t *testing.T) {
	repo := t.TempDir()
	os.Mkdir(filepath.Join(repo, "proofs"), 0o755)
	if err := os.WriteFile(filepath.Join(repo, "proofs", "shelf.json"), []byte(shelfExamples), 0o644); err != nil {
		t.Fatal(err)
	}
	server := stdioServer(t, "shelf")
	t.Chdir(repo)
	for _, tc := range []struct {
		examples string
		flags    []string
		uri      string
		lines    map[string]int // the line of each lie's result
	}{
		{"proofs/shelf.json", nil, "proofs/shelf.json", map[string]int{"peek": 6, "tag": 7}},
		{filepath.Join(repo, "proofs", "shelf.json"), nil, "proofs/shelf.json", map[string]int{"peek": 6, "tag": 7}},
		{"./proofs/../proofs/shelf.json", []string{"-location", "cmd/shelf/main.go"}, "cmd/shelf/main.go", map[string]int{"peek": 1, "tag": 1}},
	} {
		args := append([]string{"verify", "-format", "sarif", "-timeout", "1m", "-examples", tc.examples}, tc.flags...)
		res := runCommand(t, append(args, server...)...)
		if res.code != exitFindings {
			t.Fatalf("%s: exit %d, %s", tc.examples, res.code, res.stderr)
		}
		var log struct {
			Runs []struct {
				Results []struct {
					Message   struct{ Text string } `json:"message"`
					Locations []struct {
						PhysicalLocation struct {
							ArtifactLocation struct {
								URI       string `json:"uri"`
								URIBaseID string `json:"uriBaseId"`
							} `json:"artifactLocation"`
							Region struct {
								StartLine int `json:"startLine"`
							} `json:"region"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &log); err != nil || len(log.Runs) != 1 {
			t.Fatalf("%v:\n%s", err, res.stdout)
		}
		got := map[string]int{}
		for _, r := range log.Runs[0].Results {
			pl := r.Locations[0].PhysicalLocation
			if pl.ArtifactLocation.URI != tc.uri || pl.ArtifactLocation.URIBaseID != "%SRCROOT%" {
				t.Errorf("%s: a result at %+v, want %s in the repository", tc.examples, pl.ArtifactLocation, tc.uri)
			}
			for tool := range tc.lines {
				if strings.HasPrefix(r.Message.Text, "tool "+tool+":") {
					got[tool] = pl.Region.StartLine
				}
			}
		}
		for tool, line := range tc.lines {
			if got[tool] != line {
				t.Errorf("%s: tool %s's result at line %d, want %d", tc.examples, tool, got[tool], line)
			}
		}
	}
}

// TestVerifyChanges: what each call changed is in every format: JSON
// (each call's count and changes), text (a line a change), Markdown
// (folded, after the table), and SARIF, where no lie already shows it
// (put here, over-cautious: it only made a file, which its destructive
// hint does not need).
func TestVerifyChanges(t *testing.T) {
	examples := writeFile(t, "shelf.json", []byte(`{"env": {"`+shelfDirEnv+`": "{dir}"}, "state": {"dir": "{dir}"},
	"examples": [
		{"tool": "put", "args": {"name": "milk", "value": "1"}},
		{"tool": "list", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}]},
		{"tool": "peek", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}], "args": {"name": "milk"}}
	], "skip": {"tag": "not this test's"}}`))
	server := stdioServer(t, "shelf")
	run := func(format string) result {
		t.Helper()
		res := runCommand(t, append([]string{"verify", "-format", format, "-timeout", "1m", "-examples", examples}, server...)...)
		if res.code != exitFindings {
			t.Fatalf("%s: exit %d, %s", format, res.code, res.stderr)
		}
		return res
	}
	milk := `record "milk" added: {"content":"1","kind":"file","mode":"0644"}`

	var r struct {
		Tools []struct {
			Name     string
			Examples []struct {
				First, Repeat *struct {
					Count   int
					Changes []struct{ Kind, Record, Field, Before, After string }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(run("json").stdout), &r); err != nil {
		t.Fatal(err)
	}
	counts := map[string][2]int{}
	for _, tr := range r.Tools {
		for _, ex := range tr.Examples {
			if ex.First == nil || ex.Repeat == nil {
				t.Fatalf("tool %s: an example without what its calls changed", tr.Name)
			}
			counts[tr.Name] = [2]int{ex.First.Count, ex.Repeat.Count}
			if tr.Name == "put" {
				c := ex.First.Changes[0]
				if c.Kind != "record added" || c.Record != "milk" || c.After != `{"content":"1","kind":"file","mode":"0644"}` {
					t.Errorf("put's first call changed %+v, want the record milk added", c)
				}
			}
		}
	}
	if want := map[string][2]int{"put": {1, 0}, "list": {0, 0}, "peek": {1, 1}}; !mapsEqual(counts, want) {
		t.Errorf("the changes of each call: %v, want %v", counts, want)
	}

	text := run("text").stdout
	for _, s := range []string{
		"example \"#1\", first call: changed 1\n          " + milk + "\n",
		"example \"#1\", repeat: changed nothing\n",
		`record "milk.views", field "content": "+" → "++"`,
	} {
		if !strings.Contains(text, s) {
			t.Errorf("the text does not say %q:\n%s", s, text)
		}
	}

	md := run("markdown").stdout
	for _, s := range []string{
		"<details><summary>What each call changed</summary>",
		"- `put`, example \\#1: first call changed record \"milk\" added\\: \\{\"content\"\\:\"1\",\"kind\"\\:\"file\",\"mode\"\\:\"0644\"\\}. repeat changed nothing.",
		"- `list`, example \\#1: first call changed nothing. repeat changed nothing.",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("the Markdown does not say %q:\n%s", s, md)
		}
	}

	sarif := run("sarif").stdout
	if !strings.Contains(sarif, `example #1, first call changed record \"milk\" added`) {
		t.Errorf("put's SARIF result does not say what its call changed:\n%s", sarif)
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ledgerServer keeps entries as files of dir: add makes one (an
// idempotent write), take removes one (a destructive, idempotent write).
// Each reports failure in its result alone, {"success": false, "error":
// …}, without isError, as some servers do: take, of an entry that is not
// there.
func ledgerServer(dir string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "ledger", Version: "1.0.0"}, nil)
	type args struct {
		Name string `json:"name"`
	}
	type result struct {
		Success bool   `json:"success"`
		Error   string `json:"error,omitempty"`
	}
	path := func(name string) string { return filepath.Join(dir, filepath.Base(name)) }
	destructive := true
	mcp.AddTool(s, &mcp.Tool{Name: "add", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(bool), IdempotentHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, result, error) {
			if err := os.WriteFile(path(in.Name), nil, 0o644); err != nil {
				return nil, result{Error: err.Error()}, nil
			}
			return nil, result{Success: true}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "take", Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, result, error) {
			if err := os.Remove(path(in.Name)); err != nil {
				return nil, result{Error: "no such entry: " + in.Name}, nil
			}
			return nil, result{Success: true}, nil
		})
	return s
}

// TestVerifyResultErrors reads the failures that the ledger server
// reports in its results alone through the examples file's resultErrors:
// an example that expects one is refused as expected, and a fixture that
// meets one fails its example. Without resultErrors, the same calls
// succeed, and the example that expects an error fails.
func TestVerifyResultErrors(t *testing.T) {
	const examples = `{"env": {"` + shelfDirEnv + `": "{dir}"}, "state": {"dir": "{dir}"},%s
	"examples": [
		{"tool": "add", "args": {"name": "a"}},
		{"tool": "take", "name": "there", "fixtures": [{"tool": "add", "args": {"name": "a"}}], "args": {"name": "a"}},
		{"tool": "take", "name": "not there", "args": {"name": "b"}, "wantError": "no such entry: b"}
	]}`
	const read = `
	"resultErrors": [{"tools": "t*", "at": "/success", "equals": false, "message": "/error"}],`
	server := stdioServer(t, "ledger")

	code, r := verifyFileJSON(t, writeFile(t, "ledger.json", fmt.Appendf(nil, examples, read)), server...)
	if code != exitOK || r.Tool("take").Verdict != verify.Proven || r.Tool("add").Verdict != verify.Proven {
		t.Errorf("with resultErrors: exit %d, %s; want both proven", code, mustJSON(t, r.Tools))
	}
	if ex := r.Tool("take").Examples; len(ex) != 2 || ex[1].Result != "refused" {
		t.Errorf("take of an entry not there: %s, want refused as expected", mustJSON(t, ex))
	}

	code, r = verifyFileJSON(t, writeFile(t, "ledger-unread.json", fmt.Appendf(nil, examples, "")), server...)
	if ex := r.Tool("take").Examples; code != exitFindings || len(ex) != 2 || !strings.Contains(ex[1].Error, `expects an error containing "no such entry: b", but its first call succeeded`) {
		t.Errorf("without resultErrors: exit %d, %s; want the expected error missed", code, mustJSON(t, ex))
	}

	// A fixture whose result reports an error: what the example needs
	// was not made.
	fixture := fmt.Sprintf(`{"env": {"`+shelfDirEnv+`": "{dir}"}, "state": {"dir": "{dir}"},%s
	"examples": [{"tool": "add", "fixtures": [{"tool": "take", "args": {"name": "z"}}], "args": {"name": "z"}}], "skip": {"take": "not this one's"}}`, read)
	code, r = verifyFileJSON(t, writeFile(t, "ledger-fixture.json", []byte(fixture)), server...)
	if ex := r.Tool("add").Examples; code != exitFindings || len(ex) != 1 || !strings.Contains(ex[0].Error, `fixture 1 (tool "take"): its result reports an error (resultErrors): no such entry: z`) {
		t.Errorf("a fixture that failed in its result: exit %d, %s", code, mustJSON(t, ex))
	}
}

// TestVerifyJustificationUnproven: a hint verify did not see shown is
// said to be so, not justified: an over-cautious claim, its tool's other
// hints justified still; a lie or a tool not examined, no justification,
// with the reason.
func TestVerifyJustificationUnproven(t *testing.T) {
	examples := writeFile(t, "shelf.json", []byte(`{"env": {"`+shelfDirEnv+`": "{dir}"}, "state": {"dir": "{dir}"},
	"examples": [
		{"tool": "put", "args": {"name": "milk", "value": "1"}},
		{"tool": "peek", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}], "args": {"name": "milk"}}
	], "skip": {"tag": "not this test's", "list": "not this test's"}}`))
	res := runCommand(t, append([]string{"verify", "-format", "justification", "-timeout", "1m", "-examples", examples}, stdioServer(t, "shelf")...)...)
	if res.code != exitFindings {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, s := range []string{
		"\n## `put`\n\n**Over-cautious** by 1 example (“\\#1”).\n",
		"- **`readOnlyHint`: false.** It writes: the call of example “\\#1” added record `milk`: `{\"content\":\"1\",\"kind\":\"file\",\"mode\":\"0644\"}`.\n",
		"- **`destructiveHint`: true.** Declared destructive, but no example changed or removed a value that existed.\n",
		"- **`idempotentHint`: true.** Safe to repeat:",
		"\n## `peek`\n\n**No justification: lie.** a call did what its hints say it does not: the call of example “\\#1” added record `milk.views`: `{\"content\":\"+\",\"kind\":\"file\",\"mode\":\"0644\"}`, which a read tool must not.\n",
		"\n## `tag`\n\n**No justification: not examined.** skipped\\: not this test's.\n",
	} {
		if !strings.Contains(res.stdout, s) {
			t.Errorf("the justification does not say %q:\n%s", s, res.stdout)
		}
	}
}
