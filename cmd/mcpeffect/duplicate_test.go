package main

import (
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/hostile"
)

// TestAuditDuplicateTool lists two tools of the same name, one read-only
// and one destructive: a host cannot know which it calls, and the audit
// says so at the error level.
func TestAuditDuplicateTool(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			args := hostileHTTP(t, &hostile.Server{Attack: hostile.Duplicate})
			if transport == "stdio" {
				args = hostileStdio(t, hostile.Duplicate, "")
			}
			code, r := auditJSON(t, args...)
			if code != exitFindings {
				t.Errorf("exit code %d, want %d", code, exitFindings)
			}
			var found []audit.Finding
			for _, f := range r.Findings {
				if f.Rule == audit.RuleDuplicateName {
					found = append(found, f)
				}
			}
			if len(found) != 1 || found[0].Tool != hostile.DuplicateName || found[0].Level != audit.Error {
				t.Errorf("findings of %s: %+v, want one error on %s", audit.RuleDuplicateName, found, hostile.DuplicateName)
			}
		})
	}
}

// TestDiffDuplicateTool: a live side that lists a tool twice cannot be
// compared, as a file that does is refused.
func TestDiffDuplicateTool(t *testing.T) {
	old := hostileHTTP(t, &hostile.Server{Attack: hostile.Duplicate})[1]
	res := runCommand(t, append([]string{"diff", old}, hostileStdio(t, hostile.Duplicate, "")...)...)
	if res.code != exitError {
		t.Errorf("exit code %d, want %d", res.code, exitError)
	}
	if want := `tool "sync_files" is listed twice`; !strings.Contains(res.stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, res.stderr)
	}
}
