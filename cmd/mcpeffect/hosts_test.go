package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/host"
)

// profileTable returns the README's table of host profiles, one row a
// profile, from the profiles themselves.
func profileTable() string {
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	var b strings.Builder
	b.WriteString("| host (`-host`) | mode | what it does before a call | source | read | confidence |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, p := range audit.HostProfiles() {
		mode := p.ModeName
		if p.Default {
			mode += " (its default)"
		}
		rule := p.Rule
		if p.IgnoresHints {
			o, _ := p.ActionFor(host.Declared{})
			what := map[audit.HostAction]string{
				audit.Refused: "refuses every tool", audit.AsksAlways: "always asks before every tool",
				audit.Asks: "asks before every tool", audit.Judged: "leaves every tool to a model",
				audit.Runs: "runs every tool", audit.Settings: "leaves every tool to its settings",
			}[o]
			rule = fmt.Sprintf("ignores the hints: %s; instead, %s", what, p.Instead)
		}
		fmt.Fprintf(&b, "| %s (`%s`) | %s | %s | %s | %s | %s |\n",
			cell(p.HostName), p.Host, cell(mode), cell(rule), cell(p.Source), p.Read, p.Confidence)
	}
	return b.String()
}

// TestREADMEHostProfiles holds the README's table of host profiles to the
// profiles: every row, with its source, the date it was read and its
// confidence.
func TestREADMEHostProfiles(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if table := profileTable(); !strings.Contains(string(readme), "\n"+table+"\n") {
		t.Errorf("README.md does not hold the table of host profiles; it is:\n%s", table)
	}
}
