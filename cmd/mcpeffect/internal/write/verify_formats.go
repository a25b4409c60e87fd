package write

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/sarif"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
	"github.com/mcpeffect/mcpeffect/internal/effectproof"
)

// The rules of verify's SARIF results: one for each verdict that is not
// a proof.
var sarifRules = []struct {
	verdict verify.Verdict
	level   string
	summary string
	help    string
}{
	{verify.Lie, sarif.LevelError, "a tool did what its hints say it does not",
		"A call of the tool changed the state where its hints say it does not: a read that wrote, a non-destructive write that changed or removed a value, an idempotent write whose repeat changed more; or the undo it publishes (SEP-3172), called after a call, did not restore the state the call changed. Hosts that run it without asking, or that undo with it, are misled: fix the tool, its hints, or its undo."},
	{verify.Failed, sarif.LevelError, "an example of the tool could not be run as written",
		"A fixture failed, the call failed, or an expected error did not come: the proof of this tool did not run. Fix the example, or the server."},
	{verify.Overcautious, sarif.LevelWarning, "the hints claim more than the tool did",
		"The hints claim an effect that no example showed, such as destructiveHint on a tool that destroyed nothing: hosts ask where they need not. Give an example that shows it, narrow the hints, or waive the claim with a reason."},
	{verify.NotExamined, sarif.LevelNote, "the tool has no example",
		"Nothing proved or disproved the tool's hints: give it an example, or skip it with a reason."},
}

// A SARIFLocation is where the results of verify's SARIF log point.
type SARIFLocation struct {
	// URI is a file of the repository, relative to its root, as the
	// audit's results are: the examples file, or the file where the
	// server adds its tools.
	URI string
	// Line, if not nil, gives the line of URI for each tool's result,
	// such as where its first example begins in the examples file; 0 is
	// the first line.
	Line func(tool string) int
}

// VerifySARIF writes r as a SARIF 2.1.0 log: a result for each tool whose
// verdict is not a proof, at the level of its verdict, located at loc and
// named by the server and the tool.
func VerifySARIF(w io.Writer, r *verify.Report, loc SARIFLocation, version string) error {
	d := sarif.Driver{Name: "mcpeffect verify", Version: version, InformationURI: informationURI}
	for _, rule := range sarifRules {
		d.Rules = append(d.Rules, sarif.Rule{
			ID:                   sarifRuleID(rule.verdict),
			ShortDescription:     sarif.Message{Text: rule.summary},
			Help:                 &sarif.Help{Text: rule.help},
			DefaultConfiguration: sarif.Configuration{Level: rule.level},
		})
	}
	log := sarif.New(d)
	server := effectproof.Printable(r.Server.Name, 100)
	for _, t := range r.Tools {
		if t.Verdict == verify.Proven {
			continue
		}
		level := sarif.LevelNote
		for _, rule := range sarifRules {
			if rule.verdict == t.Verdict {
				level = rule.level
			}
		}
		tool := effectproof.Printable(t.Name, 100)
		line := 1
		if loc.Line != nil {
			line = loc.Line(t.Name)
		}
		at := sarif.LineLocation(loc.URI, line, tool, server+"/"+tool, "function")
		log.Add(sarifRuleID(t.Verdict), level, "tool "+tool+": "+string(t.Verdict)+": "+oneLine(t), at, r.Server.Name, t.Name)
	}
	return log.Write(w)
}

func sarifRuleID(v verify.Verdict) string { return "verify-" + strings.ReplaceAll(string(v), " ", "-") }

// oneLine says in one line why a tool got its verdict: its reason, and
// the first lie with its record and field.
func oneLine(t verify.ToolReport) string {
	parts := []string{}
	if t.Reason != "" {
		parts = append(parts, t.Reason)
	}
	for _, e := range t.Examples {
		if len(e.Lies) == 0 {
			continue
		}
		l := e.Lies[0]
		s := fmt.Sprintf("example %s, %s: %s", e.Name, l.When, l.Message)
		if len(l.Changes) > 0 {
			c := l.Changes[0]
			s += fmt.Sprintf(" (record %s", c.Record)
			if c.Field != "" {
				s += ", field " + c.Field
			}
			s += fmt.Sprintf(": %s -> %s)", c.Before, c.After)
		}
		parts = append(parts, s)
		break
	}
	if !slices.ContainsFunc(t.Examples, func(e verify.ExampleReport) bool { return len(e.Lies) > 0 }) {
		// What the calls did, where no lie shows it: a write that
		// changed nothing, the state an expected error left changed.
		for _, e := range t.Examples {
			for _, c := range []struct {
				when string
				r    *verify.CallReport
			}{{"first call", e.First}, {"repeat", e.Repeat}} {
				if c.r != nil {
					parts = append(parts, fmt.Sprintf("example %s, %s changed %s", e.Name, c.when, c.r.String(1)))
				}
			}
		}
	}
	return effectproof.Printable(strings.Join(parts, "; "), 2000)
}

// VerifyMarkdown writes r as Markdown for a pull-request comment: the
// summary, then a table of the tools whose verdict is not a proof, one
// line each, escaped so that nothing a server wrote adds markup.
func VerifyMarkdown(w io.Writer, r *verify.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "**mcpeffect verify** of %s: ", MarkdownText(r.Server.Name))
	var counts []string
	for _, v := range []verify.Verdict{verify.Proven, verify.Lie, verify.Overcautious, verify.Failed, verify.NotExamined} {
		if n := r.Summary[v]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, v))
		}
	}
	if len(counts) == 0 {
		counts = append(counts, "no tools")
	}
	b.WriteString(strings.Join(counts, ", ") + ".\n")
	rows := 0
	for _, t := range r.Tools {
		if t.Verdict == verify.Proven {
			continue
		}
		if rows == 0 {
			b.WriteString("\n| tool | verdict | why |\n| --- | --- | --- |\n")
		}
		rows++
		fmt.Fprintf(&b, "| %s | %s | %s |\n", markdownCode(t.Name), t.Verdict, MarkdownText(oneLine(t)))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "\n- %s", MarkdownText(p))
	}
	if len(r.Problems) > 0 {
		b.WriteString("\n")
	}
	writeMarkdownCalls(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdownCalls writes, folded, what each call of each example
// changed: a list item for each example, every text escaped.
func writeMarkdownCalls(b *strings.Builder, r *verify.Report) {
	first := true
	for _, t := range r.Tools {
		for _, e := range t.Examples {
			if e.First == nil && e.Repeat == nil {
				continue
			}
			if first {
				b.WriteString("\n<details><summary>What each call changed</summary>\n\n")
				first = false
			}
			fmt.Fprintf(b, "- %s, example %s:", markdownCode(t.Name), MarkdownText(e.Name))
			for _, c := range []struct {
				when string
				r    *verify.CallReport
			}{{"first call", e.First}, {"repeat", e.Repeat}} {
				if c.r != nil {
					fmt.Fprintf(b, " %s changed %s.", c.when, MarkdownText(c.r.String(shownInText)))
				}
			}
			b.WriteString("\n")
		}
	}
	if !first {
		b.WriteString("\n</details>\n")
	}
}

// markdownCode writes a name as inline code, made printable, with no
// backquote to end it early.
func markdownCode(name string) string {
	return "`" + strings.ReplaceAll(effectproof.Printable(name, 100), "`", "'") + "`"
}
