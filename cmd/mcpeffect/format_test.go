package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// sarifLog is the part of a SARIF 2.1.0 log that readers require, as
// GitHub code scanning reads it: decoded here from what was written,
// not from the writer's own types, so that a field the writer misnames
// is missing.
type sarifLog struct {
	Schema  *string `json:"$schema"`
	Version string  `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID               string `json:"id"`
					ShortDescription struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
					Help *struct {
						Text string `json:"text"`
					} `json:"help"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex *int   `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI       string `json:"uri"`
						URIBaseID string `json:"uriBaseId"`
					} `json:"artifactLocation"`
					Region *struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
				LogicalLocations []struct {
					Name string `json:"name"`
				} `json:"logicalLocations"`
			} `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
		} `json:"results"`
	} `json:"runs"`
}

// checkSARIF decodes data as SARIF and checks the structure readers
// require; it returns the log, and each result as "ruleId level tool".
func checkSARIF(t *testing.T, data string) (*sarifLog, []string) {
	t.Helper()
	var log sarifLog
	if err := json.Unmarshal([]byte(data), &log); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	if log.Version != "2.1.0" {
		t.Errorf("version %q, want 2.1.0", log.Version)
	}
	if log.Schema == nil || !strings.Contains(*log.Schema, "sarif-schema-2.1.0") {
		t.Errorf("$schema %v, want the SARIF 2.1.0 schema", log.Schema)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(log.Runs))
	}
	run := log.Runs[0]
	if run.Tool.Driver.Name == "" {
		t.Error("runs[0].tool.driver.name is empty")
	}
	levels := []string{"error", "warning", "note"}
	ids := map[string]int{}
	for i, r := range run.Tool.Driver.Rules {
		if r.ID == "" {
			t.Errorf("rule %d has no id", i)
		}
		if _, dup := ids[r.ID]; dup {
			t.Errorf("rule %s is listed twice", r.ID)
		}
		ids[r.ID] = i
		if r.ShortDescription.Text == "" || r.Help == nil || r.Help.Text == "" {
			t.Errorf("rule %s: no shortDescription or help text", r.ID)
		}
		if !slices.Contains(levels, r.DefaultConfiguration.Level) {
			t.Errorf("rule %s: default level %q", r.ID, r.DefaultConfiguration.Level)
		}
	}
	var results []string
	for i, r := range run.Results {
		index, ok := ids[r.RuleID]
		if !ok {
			t.Errorf("result %d: ruleId %q is not a rule of the driver", i, r.RuleID)
		}
		if r.RuleIndex == nil || *r.RuleIndex != index {
			t.Errorf("result %d: ruleIndex %v, want %d", i, r.RuleIndex, index)
		}
		if !slices.Contains(levels, r.Level) {
			t.Errorf("result %d: level %q", i, r.Level)
		}
		if r.Message.Text == "" {
			t.Errorf("result %d: no message.text", i)
		}
		if len(r.Locations) == 0 {
			t.Fatalf("result %d: no locations", i)
		}
		loc := r.Locations[0]
		if loc.PhysicalLocation.ArtifactLocation.URI == "" || loc.PhysicalLocation.Region == nil || loc.PhysicalLocation.Region.StartLine < 1 {
			t.Errorf("result %d: physical location %+v, want a file and a line", i, loc.PhysicalLocation)
		}
		if len(loc.LogicalLocations) != 1 {
			t.Fatalf("result %d: logical locations %+v, want the tool", i, loc.LogicalLocations)
		}
		if len(r.PartialFingerprints) == 0 {
			t.Errorf("result %d: no partialFingerprints", i)
		}
		results = append(results, r.RuleID+" "+r.Level+" "+loc.LogicalLocations[0].Name)
	}
	return &log, results
}

func TestAuditSARIF(t *testing.T) {
	res := runCommand(t, append([]string{"audit", "-format", "sarif", "-location", "server/main.go"}, stdioServer(t, "bad")...)...)
	if res.code != exitFindings {
		t.Fatalf("exit code %d, want %d: %s", res.code, exitFindings, res.stderr)
	}
	log, results := checkSARIF(t, res.stdout)
	var want []string
	for _, f := range badFindings {
		level := "warning"
		if f.rule.Level().String() == "error" {
			level = "error"
		}
		want = append(want, string(f.rule)+" "+level+" "+f.tool)
	}
	if !slices.Equal(results, want) {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(results, "\n"), strings.Join(want, "\n"))
	}
	loc := log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation
	if loc.URI != "server/main.go" || loc.URIBaseID != "%SRCROOT%" {
		t.Errorf("artifact location %+v, want server/main.go under %%SRCROOT%%", loc)
	}
	// Every rule of the audit is described, whether broken or not.
	if n := len(log.Runs[0].Tool.Driver.Rules); n < len(badFindings)-1 {
		t.Errorf("%d rules, want every rule of the audit", n)
	}
}

// TestFormatFlag: -json is -format json; an unknown format is bad usage.
func TestFormatFlag(t *testing.T) {
	server := httpServer(t, streamable(cleanServer(0)))
	a := runCommand(t, append([]string{"audit", "-json"}, server...)...)
	b := runCommand(t, append([]string{"audit", "-format", "json"}, server...)...)
	if a.code != exitOK || a.stdout != b.stdout || !json.Valid([]byte(a.stdout)) {
		t.Errorf("-json (exit %d) and -format json (exit %d) differ:\n%s\n%s", a.code, b.code, a.stdout, b.stdout)
	}
	res := runCommand(t, append([]string{"audit", "-format", "xml"}, server...)...)
	if res.code != exitError || !strings.Contains(res.stderr, `unknown format "xml" (want text, json, sarif, markdown)`) {
		t.Errorf("-format xml: exit %d, stderr %s", res.code, res.stderr)
	}
}

func TestAuditMarkdown(t *testing.T) {
	res := runCommand(t, append([]string{"audit", "-format", "markdown"}, stdioServer(t, "bad")...)...)
	if res.code != exitFindings {
		t.Fatalf("exit code %d, want %d: %s", res.code, exitFindings, res.stderr)
	}
	rows := 0
	for _, line := range strings.Split(res.stdout, "\n") {
		if strings.HasPrefix(line, "| **error** |") || strings.HasPrefix(line, "| warning |") {
			rows++
		}
	}
	if rows != len(badFindings) {
		t.Errorf("%d rows of findings, want %d:\n%s", rows, len(badFindings), res.stdout)
	}
	if !strings.Contains(res.stdout, `| **error** | export\_everything | no\-annotations |`) {
		t.Errorf("no row for export_everything:\n%s", res.stdout)
	}
}

// TestDiffMarkdown flips a read to a destructive write on an open world:
// one line for the tool, where the text has one for each hint.
func TestDiffMarkdown(t *testing.T) {
	old := writeFile(t, "old.json", cleanReport(t, func(tool map[string]any) {
		if tool["name"] == "delete_note" {
			tool["declared"] = map[string]any{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
		}
		if tool["name"] == "tag_note" {
			tool["name"] = "tag_note_old"
		}
		if tool["name"] == "get_note" {
			tool["title"] = "Get | a <b>note</b> [x](http://evil)"
		}
	}))
	res := runCommand(t, "diff", "-format", "markdown", old, httpServer(t, streamable(cleanServer(0)))[1])
	if res.code != exitFindings {
		t.Fatalf("exit code %d, want %d: %s", res.code, exitFindings, res.stderr)
	}
	var rows []string
	for _, line := range strings.Split(res.stdout, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| |") && !strings.HasPrefix(line, "| ---") {
			rows = append(rows, line)
		}
	}
	want := []string{
		`| **widened** | delete\_note | read → write\|destructive\|idempotent | read\-to\-write; now\-destructive |`,
		`| changed | get\_note | read | title "Get \| a &lt;b&gt;note&lt;/b&gt; \[x\]\(http\://evil\)" → "" |`,
		`| added | tag\_note | write\|idempotent | |`,
		`| removed | tag\_note\_old | write\|idempotent | |`,
	}
	if !slices.Equal(rows, want) {
		t.Errorf("rows:\n%s\nwant:\n%s\nall:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"), res.stdout)
	}
	if !strings.Contains(res.stdout, "**1 tool may do more than before: the diff fails.**") {
		t.Errorf("no verdict:\n%s", res.stdout)
	}
}

func TestDiffSARIF(t *testing.T) {
	old := writeFile(t, "old.json", cleanReport(t, func(tool map[string]any) {
		if tool["name"] == "delete_note" {
			tool["declared"] = map[string]any{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
		}
	}))
	res := runCommand(t, "diff", "-format", "sarif", old, httpServer(t, streamable(cleanServer(0)))[1])
	if res.code != exitFindings {
		t.Fatalf("exit code %d, want %d: %s", res.code, exitFindings, res.stderr)
	}
	_, results := checkSARIF(t, res.stdout)
	want := []string{"read-to-write error delete_note", "now-destructive error delete_note"}
	if !slices.Equal(results, want) {
		t.Errorf("results %q, want %q", results, want)
	}
}

// TestDiffMarkdownREADME holds the README's example of diff -format
// markdown, but for its first line, which names the two sides.
func TestDiffMarkdownREADME(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```markdown\n### mcpeffect diff:")
	block, _, _ = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README.md has no example of diff -format markdown")
	}
	_, want, _ := strings.Cut(block, "\n")

	var tools []any
	old := writeFile(t, "tools.json", cleanReport(t, func(tool map[string]any) {
		if tool["name"] == "delete_note" {
			tool["declared"] = map[string]any{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
		}
		if tool["name"] != "tag_note" {
			tools = append(tools, tool)
		}
	}))
	var doc map[string]any
	if err := json.Unmarshal(readFileT(t, old), &doc); err != nil {
		t.Fatal(err)
	}
	doc["tools"] = tools
	old = writeFile(t, "tools.json", []byte(mustJSON(t, doc)))
	res := runCommand(t, "diff", "-format", "markdown", old, httpServer(t, streamable(cleanServer(0)))[1])
	if res.code != exitFindings {
		t.Fatalf("exit code %d, want %d: %s", res.code, exitFindings, res.stderr)
	}
	_, got, _ := strings.Cut(res.stdout, "\n")
	if got != want {
		t.Errorf("diff -format markdown, after its first line:\n%s\nREADME.md:\n%s", got, want)
	}
}

func readFileT(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
