package audit

import (
	"io"
	"slices"
	"strings"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/sarif"
)

// informationURI is where the rules of the audit are explained.
// InformationURI is where SARIF readers send a person to read about the
// rules of mcpeffect's commands.
const InformationURI = informationURI

const informationURI = "https://github.com/mcpeffect/mcpeffect/tree/main/cmd/mcpeffect"

// Help says what breaks rule r and what to do about it, for a reader of
// a SARIF file who has not read the audit's documentation.
func (r Rule) Help() string {
	fix := ""
	switch r {
	case RuleNoAnnotations:
		fix = "Declare the tool's annotations: readOnlyHint, destructiveHint, idempotentHint and openWorldHint, as the tool truly behaves."
	case RuleReadOnlyDestructive:
		fix = "A tool cannot be both: set readOnlyHint false if it writes, or destructiveHint false (or leave it out) if it only reads."
	case RuleMissingDestructive:
		fix = "Declare destructiveHint: true if the tool changes or removes anything that exists, false if it only adds."
	case RuleMissingIdempotent:
		fix = "Declare idempotentHint: true if repeating the call with the same arguments changes nothing more."
	case RuleMissingOpenWorld:
		fix = "Declare openWorldHint: true if the tool reaches outside a closed set of resources (the web, another app), false if not."
	case RuleDeleteNotDestructive, RuleReadNotReadOnly, RuleWriteReadOnly:
		fix = "Make the hints say what the tool does, or, if they already do, its name."
	case RuleOutcomeWider:
		fix = "The tool's hints must cover the widest of its outcomes: widen the hints, or narrow the outcome."
	case RuleOutcomesMalformed:
		fix = "Publish the outcomes in the form the audit's documentation gives, or not at all."
	case RuleDuplicateName:
		fix = "Give each tool a name of its own."
	}
	return strings.TrimSpace(r.Summary() + ". " + fix)
}

// sarifLevel is the SARIF level of a finding of level l.
func sarifLevel(l Level) string {
	if l == Error {
		return sarif.LevelError
	}
	return sarif.LevelWarning
}

// WriteSARIF writes the findings of r as a SARIF 2.1.0 log, for GitHub
// code scanning and other SARIF readers: one rule for each rule of the
// audit and of the directory profiles applied, one result for each
// finding. A result's location is the file at uri (a path relative to the
// root of the repository, such as the file where the server adds its
// tools: readers show results at a file), line 1, and the tool, as a
// logical location. version is the audit's own.
func WriteSARIF(w io.Writer, r *Report, uri, version string) error {
	rules := Rules()
	for _, p := range r.Directories {
		for _, d := range DirectoryProfiles() {
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

// WriteDiffSARIF writes the changes of d as a SARIF 2.1.0 log: one rule
// for each kind of change, one result for each change, at the level of
// its direction (a widening is an error, as it fails the diff; another
// change a warning, for a person to read; a narrowing a note), located as
// [WriteSARIF] locates them.
func WriteDiffSARIF(w io.Writer, d *DiffReport, uri, version string) error {
	driver := sarif.Driver{Name: "mcpeffect diff", Version: version, InformationURI: informationURI}
	kinds := map[ChangeKind]bool{}
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
		tool := printable(c.Tool)
		loc := sarif.FileLocation(uri, tool, server+"/"+tool, "function")
		log.Add(string(c.Kind), directionLevel(c.Direction), "tool "+tool+" "+string(c.Direction)+": "+printable(c.Message), loc, c.Tool, c.Outcome, c.Hint)
	}
	return log.Write(w)
}

func directionLevel(d Direction) string {
	switch d {
	case Widened:
		return sarif.LevelError
	case Narrowed:
		return sarif.LevelNote
	}
	return sarif.LevelWarning
}

// changeSummary says in a few words what a change of kind k is.
func changeSummary(k ChangeKind) string {
	switch k {
	case ReadToWrite:
		return "a read became a write"
	case WriteToRead:
		return "a write became a read"
	case NowDestructive:
		return "a tool became destructive"
	case NoLongerDestructive:
		return "a tool is no longer destructive"
	case NowNonIdempotent:
		return "a write is no longer idempotent"
	case NowIdempotent:
		return "a write became idempotent"
	case NowOpenWorld:
		return "a tool now reaches an open world"
	case NowClosedWorld:
		return "a tool now stays in a closed world"
	case HintRemoved:
		return "a hint was removed, and its worst case is wider"
	case HintChanged:
		return "a hint changed, the same for hosts that assume the worst case"
	case TitleChanged:
		return "the title changed"
	case DescriptionChanged:
		return "the description changed"
	case OutcomeAdded:
		return "an outcome was added"
	case OutcomeRemoved:
		return "an outcome was removed"
	case OutcomeArgumentChanged:
		return "another argument selects the outcomes"
	case OutcomesUnlisted:
		return "the outcomes are no longer listed"
	}
	return string(k)
}
