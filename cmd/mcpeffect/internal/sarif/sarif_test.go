package sarif

import (
	"strings"
	"testing"
)

func TestFileLocation(t *testing.T) {
	for _, tc := range []struct {
		in, uri, base string
	}{
		{"cmd/server/main.go", "cmd/server/main.go", "%SRCROOT%"},
		{"my server/main.go", "my%20server/main.go", "%SRCROOT%"},
		{"/usr/local/bin/server", "/usr/local/bin/server", ""},
		{"https://example.com/mcp", "https://example.com/mcp", ""},
	} {
		a := FileLocation(tc.in, "tool", "server/tool", "function").PhysicalLocation.ArtifactLocation
		if a.URI != tc.uri || a.URIBaseID != tc.base {
			t.Errorf("FileLocation(%q) = %+v, want uri %q, base %q", tc.in, a, tc.uri, tc.base)
		}
	}
}

// TestAddUnknownRule: a result must name a rule of its run.
func TestAddUnknownRule(t *testing.T) {
	log := New(Driver{Name: "x", Rules: []Rule{{ID: "known"}}})
	log.Add("known", LevelError, "m", FileLocation("a.go", "", "", ""), "fp")
	if r := log.Runs[0].Results[0]; r.RuleIndex != 0 || r.PartialFingerprints["mcpeffect/v1"] == "" {
		t.Errorf("result %+v", r)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "unknown rule") {
			t.Errorf("recover() = %v, want a panic for an unknown rule", r)
		}
	}()
	log.Add("unknown", LevelError, "m", FileLocation("a.go", "", "", ""))
}
