package write

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
	"github.com/mcpeffect/mcpeffect/internal/effectproof"
)

// VerifyText writes verify's report for people. Every text that came from the
// server or the state is made printable.
func VerifyText(w io.Writer, r *verify.Report) error {
	var b strings.Builder
	name := r.Server.Name
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(&b, "server %s %s: %d tools\n\n", effectproof.Printable(name, 100), effectproof.Printable(r.Server.Version, 50), len(r.Tools))
	for _, t := range r.Tools {
		fmt.Fprintf(&b, "  %-14s %-30s %s\n", t.Verdict, effectproof.Printable(t.Name, 100), t.Effect)
		if t.Rule != "" {
			// The server's own words: its outcomes' values.
			fmt.Fprintf(&b, "      outcomes %s\n", effectproof.Printable(t.Rule, effectproof.MaxShownError))
		}
		if t.Reason != "" && t.Verdict != verify.Proven {
			fmt.Fprintf(&b, "      %s\n", t.Reason)
		}
		for _, ex := range t.Examples {
			if ex.Error != "" {
				fmt.Fprintf(&b, "      example %q failed: %s\n", ex.Name, indent(ex.Error))
			}
			for _, l := range ex.Lies {
				fmt.Fprintf(&b, "      %s\n", indent(l.Message))
			}
			writeCalls(&b, ex)
			writeUndo(&b, ex)
		}
		for _, c := range t.Claims {
			if t.Waived != "" {
				fmt.Fprintf(&b, "      %s; waived: %s\n", c, t.Waived)
			} else {
				fmt.Fprintf(&b, "      %s\n", c)
			}
		}
	}
	if len(r.Problems) > 0 {
		b.WriteString("\nProblems:\n")
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	if len(r.LeftOut) > 0 {
		b.WriteString("\nLeft out of the state, as bookkeeping:\n")
		for _, l := range r.LeftOut {
			what := "records " + l.Record
			if l.Field != "" {
				what = fmt.Sprintf("%s of records %s", l.Field, l.Record)
			}
			fmt.Fprintf(&b, "  %s: %s\n", what, l.Reason)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "\n%d proven, %d lie, %d over-cautious, %d failed, %d not examined\n",
		r.Summary[verify.Proven], r.Summary[verify.Lie], r.Summary[verify.Overcautious], r.Summary[verify.Failed], r.Summary[verify.NotExamined])
	_, err := io.WriteString(w, b.String())
	return err
}

// shownInText is how many changes of one call the text shows; JSON
// shows effectproof.MaxShownChanges.
const shownInText = 5

// writeCalls writes what each call of ex changed, one line a change.
func writeCalls(b *strings.Builder, ex verify.ExampleReport) {
	for _, c := range []struct {
		when string
		r    *verify.CallReport
	}{{"first call", ex.First}, {"repeat", ex.Repeat}} {
		switch {
		case c.r == nil:
		case c.r.Count == 0:
			fmt.Fprintf(b, "      example %q, %s: changed nothing\n", ex.Name, c.when)
		default:
			fmt.Fprintf(b, "      example %q, %s: changed %d\n", ex.Name, c.when, c.r.Count)
			for _, ch := range c.r.Changes[:min(len(c.r.Changes), shownInText)] {
				fmt.Fprintf(b, "          %s\n", ch)
			}
			if more := c.r.Count - min(len(c.r.Changes), shownInText); more > 0 {
				fmt.Fprintf(b, "          … and %d more (-format json shows %d)\n", more, effectproof.MaxShownChanges)
			}
		}
	}
}

func indent(s string) string { return strings.ReplaceAll(s, "\n\t", "\n\t    ") }

// writeUndo writes what the check of the undo of ex came to, where it
// asked for one and no other line says it: restored, or could not be
// checked although the example could run (an undo that did not restore
// is among the lies, and one that failed an example, its error).
func writeUndo(b *strings.Builder, ex verify.ExampleReport) {
	u := ex.Undo
	switch {
	case u == nil:
	case u.Result == verify.UndoRestored:
		fmt.Fprintf(b, "      example %q, undo %s with %s: restored the state its call changed (%s)\n",
			ex.Name, effectproof.Printable(u.Tool, 100), u.Arguments, plural(u.Call.Count, "change"))
	case u.Result == verify.UndoFailed && u.Error != ex.Error:
		fmt.Fprintf(b, "      example %q, undo: could not be checked: %s\n", ex.Name, indent(u.Error))
	}
}
