package write

import (
	"io"
	"slices"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/sarif"
)

// informationURI is where SARIF readers send a person to read about the
// rules of mcpeffect's commands.
const informationURI = "https://github.com/mcpeffect/mcpeffect/tree/main/cmd/mcpeffect"

// sarifLevel is the SARIF level of a finding of level l.
func sarifLevel(l audit.Level) string {
	if l == audit.Error {
		return sarif.LevelError
	}
	return sarif.LevelWarning
}

// AuditSARIF writes the findings of r as a SARIF 2.1.0 log, for GitHub
// code scanning and other SARIF readers: one rule for each rule of the
// audit and of the directory profiles applied, one result for each
// finding. A result's location is the file at uri (a path relative to the
// root of the repository, such as the file where the server adds its
// tools: readers show results at a file), line 1, and the tool, as a
// logical location. version is the audit's own.
func AuditSARIF(w io.Writer, r *audit.Report, uri, version string) error {
	rules := audit.Rules()
	for _, p := range r.Directories {
		for _, d := range audit.DirectoryProfiles() {
			if d.Name == p.Name {
				for _, dr := range d.Rules {
					rules = append(rules, dr.Rule)
				}
			}
		}
	}
	// A finding of a rule not listed (none should be) gets its rule.
	for _, f := range r.Findings {
		if !slices.Contains(rules, f.Rule) {
			rules = append(rules, f.Rule)
		}
	}
	d := sarif.Driver{Name: "mcpeffect audit", Version: version, InformationURI: informationURI}
	for _, rule := range rules {
		help := rule.Help()
		d.Rules = append(d.Rules, sarif.Rule{
			ID:                   string(rule),
			ShortDescription:     sarif.Message{Text: rule.Summary()},
			Help:                 &sarif.Help{Text: help},
			DefaultConfiguration: sarif.Configuration{Level: sarifLevel(rule.Level())},
		})
	}
	log := sarif.New(d)
	server := printable(r.Server.Name)
	for _, f := range r.Findings {
		tool := printable(f.Tool)
		loc := sarif.FileLocation(uri, tool, server+"/"+tool, "function")
		log.Add(string(f.Rule), sarifLevel(f.Level), "tool "+tool+": "+printable(f.Message), loc, r.Server.Name, f.Tool)
	}
	return log.Write(w)
}

// DiffSARIF writes the changes of d as a SARIF 2.1.0 log: one rule
// for each kind of change, one result for each change, at the level of
// its direction (a widening is an error, as it fails the diff; another
// change a warning, for a person to read; a narrowing a note), located as
// [WriteSARIF] locates them.
func DiffSARIF(w io.Writer, d *audit.DiffReport, uri, version string) error {
	driver := sarif.Driver{Name: "mcpeffect diff", Version: version, InformationURI: informationURI}
	kinds := map[audit.ChangeKind]bool{}
	for _, c := range d.Changes {
		if kinds[c.Kind] {
			continue
		}
		kinds[c.Kind] = true
		driver.Rules = append(driver.Rules, sarif.Rule{
			ID:                   string(c.Kind),
			ShortDescription:     sarif.Message{Text: changeSummary(c.Kind)},
			Help:                 &sarif.Help{Text: changeSummary(c.Kind) + ". A widening fails the diff: a host that approved the old tool may now run something that does more without asking."},
			DefaultConfiguration: sarif.Configuration{Level: directionLevel(c.Direction)},
		})
	}
	log := sarif.New(driver)
	server := printable(d.New.Server.Name)
	for _, c := range d.Changes {
		if c.Tool == "" {
			// What the server declares of itself: located at the server.
			loc := sarif.FileLocation(uri, server, server, "module")
			log.Add(string(c.Kind), directionLevel(c.Direction), "the server "+string(c.Direction)+": "+printable(c.Message), loc, d.New.Server.Name)
			continue
		}
		tool := printable(c.Tool)
		loc := sarif.FileLocation(uri, tool, server+"/"+tool, "function")
		log.Add(string(c.Kind), directionLevel(c.Direction), "tool "+tool+" "+string(c.Direction)+": "+printable(c.Message), loc, c.Tool, c.Outcome, c.Hint)
	}
	return log.Write(w)
}

func directionLevel(d audit.Direction) string {
	switch d {
	case audit.Widened:
		return sarif.LevelError
	case audit.Narrowed:
		return sarif.LevelNote
	}
	return sarif.LevelWarning
}

// changeSummary says in a few words what a change of kind k is.
func changeSummary(k audit.ChangeKind) string {
	switch k {
	case audit.ReadToWrite:
		return "a read became a write"
	case audit.WriteToRead:
		return "a write became a read"
	case audit.NowDestructive:
		return "a tool became destructive"
	case audit.NoLongerDestructive:
		return "a tool is no longer destructive"
	case audit.NowNonIdempotent:
		return "a write is no longer idempotent"
	case audit.NowIdempotent:
		return "a write became idempotent"
	case audit.NowOpenWorld:
		return "a tool now reaches an open world"
	case audit.NowClosedWorld:
		return "a tool now stays in a closed world"
	case audit.HintRemoved:
		return "a hint was removed, and its worst case is wider"
	case audit.HintChanged:
		return "a hint changed, the same for hosts that assume the worst case"
	case audit.TitleChanged:
		return "the title changed"
	case audit.DescriptionChanged:
		return "the description changed"
	case audit.OutcomeAdded:
		return "an outcome was added"
	case audit.OutcomeRemoved:
		return "an outcome was removed"
	case audit.OutcomeArgumentChanged:
		return "another argument selects the outcomes"
	case audit.OutcomesUnlisted:
		return "the outcomes are no longer listed"
	case audit.RecoveryAdded:
		return "a tool now publishes its undo"
	case audit.RecoveryRemoved:
		return "a tool no longer publishes its undo"
	case audit.RecoveryChanged:
		return "the undo of a tool changed"
	case audit.IdempotencyDeclared:
		return "the server now declares idempotency"
	case audit.IdempotencyWithdrawn:
		return "the server no longer declares idempotency"
	}
	return string(k)
}
