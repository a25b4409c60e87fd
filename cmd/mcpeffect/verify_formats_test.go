package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
