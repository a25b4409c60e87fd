package write

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
)

// AuditMarkdown writes r as Markdown, for a pull-request comment or a job
// summary: the server, a table of the findings, and the summary. Text the
// server sent is escaped: it cannot add links, images, HTML or lines to
// the comment.
func AuditMarkdown(w io.Writer, r *audit.Report) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "### mcpeffect audit: %s\n\n", mdEscape(describeServer(r.Server)))
	s := r.Summary
	fmt.Fprintf(bw, "%s: %s, %s (%d destructive, %d idempotent), %d open-world. **%s**, %s.\n\n",
		plural(s.Tools, "tool"), plural(s.Reads, "read"), plural(s.Writes, "write"),
		s.Destructive, s.Idempotent, s.OpenWorld, plural(s.Errors, "error"), plural(s.Warnings, "warning"))
	if s.Idempotency {
		fmt.Fprintf(bw, "The server declares `capabilities.tools.%s` (SEP-3182): a write that is not idempotent, retried with the same idempotency key, runs once.\n\n", mcpeffect.IdempotencyCapability)
	}
	if s.Recoveries > 0 {
		fmt.Fprintln(bw, "| tool | undone by (SEP-3172) | arguments, from the call |")
		fmt.Fprintln(bw, "| --- | --- | --- |")
		for _, t := range r.Tools {
			if t.Recovery == nil {
				continue
			}
			op := t.Recovery.CompensatingOperation
			params := audit.BindingTexts(*t.Recovery, " = ")
			if len(params) == 0 {
				params = []string{"none"}
			}
			fmt.Fprintf(bw, "| %s | %s | %s |\n", mdEscape(t.Name), mdEscape(op.OperationID), mdEscape(strings.Join(params, ", ")))
		}
		fmt.Fprintln(bw)
	}
	if len(r.Findings) == 0 {
		fmt.Fprintln(bw, "No findings.")
		return bw.Flush()
	}
	fmt.Fprintln(bw, "| level | tool | rule | finding |")
	fmt.Fprintln(bw, "| --- | --- | --- | --- |")
	for _, f := range r.Findings {
		level := f.Level.String()
		if f.Level == audit.Error {
			level = "**error**"
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", level, mdEscape(f.Tool), mdEscape(string(f.Rule)), mdEscape(f.Message))
	}
	return bw.Flush()
}

// DiffMarkdown writes d as Markdown, for a pull-request comment: one
// line for each tool that changed, added or removed, widened tools first,
// with the effect before and after and every kind of change, then the
// summary. Text the server sent is escaped.
func DiffMarkdown(w io.Writer, d *audit.DiffReport) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "### mcpeffect diff: %s → %s\n\n", mdEscape(d.Old.Source), mdEscape(d.New.Source))
	s := d.Summary
	verdict := "No tool may do more than before."
	if d.Widened() {
		verdict = fmt.Sprintf("**%s may do more than before: the diff fails.**", plural(s.Widened, "tool"))
	}
	fmt.Fprintf(bw, "%s %d narrowed, %d otherwise changed; %d added, %d removed.", verdict, s.Narrowed, s.Changed, s.Added, s.Removed)
	if s.Server > 0 {
		fmt.Fprint(bw, " What the server declares of itself changed.")
	}
	fmt.Fprint(bw, "\n\n")

	type line struct {
		dir     audit.Direction // the widest of the tool's changes
		tool    string
		effect  string
		changes []string
	}
	effects := func(snap audit.Snapshot) map[string]string {
		m := map[string]string{}
		for _, t := range snap.Tools {
			m[t.Name] = t.Hints.Effect().String()
		}
		return m
	}
	oldEffect, newEffect := effects(d.Old), effects(d.New)
	var lines []*line
	byTool := map[string]*line{}
	for _, c := range d.Changes {
		l := byTool[c.Tool]
		if l == nil {
			l = &line{dir: c.Direction, tool: c.Tool, effect: oldEffect[c.Tool] + " → " + newEffect[c.Tool]}
			if oldEffect[c.Tool] == newEffect[c.Tool] {
				l.effect = newEffect[c.Tool]
			}
			if c.Tool == "" {
				l.tool, l.effect = "(server)", ""
			}
			byTool[c.Tool] = l
			lines = append(lines, l)
		}
		if rank(c.Direction) > rank(l.dir) {
			l.dir = c.Direction
		}
		text := string(c.Kind)
		if c.Outcome != "" {
			text += " (" + c.Outcome + ")"
		}
		if c.Kind == audit.TitleChanged || c.Kind == audit.DescriptionChanged {
			text = c.Message
		}
		if !slices.Contains(l.changes, text) {
			l.changes = append(l.changes, text)
		}
	}
	// audit.Widened first, then changed, then narrowed; in the order of the
	// new snapshot within each.
	slices.SortStableFunc(lines, func(a, b *line) int { return rank(b.dir) - rank(a.dir) })
	if len(lines)+len(d.Added)+len(d.Removed) == 0 {
		fmt.Fprintln(bw, "No change.")
		return bw.Flush()
	}
	fmt.Fprintln(bw, "| | tool | effect | changes |")
	fmt.Fprintln(bw, "| --- | --- | --- | --- |")
	for _, l := range lines {
		dir := string(l.dir)
		if l.dir == audit.Widened {
			dir = "**widened**"
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", dir, mdEscape(l.tool), mdEscape(l.effect), mdEscape(strings.Join(l.changes, "; ")))
	}
	for _, t := range d.Added {
		fmt.Fprintf(bw, "| added | %s | %s | |\n", mdEscape(t.Name), mdEscape(t.Effect.String()))
	}
	for _, t := range d.Removed {
		fmt.Fprintf(bw, "| removed | %s | %s | |\n", mdEscape(t.Name), mdEscape(t.Effect.String()))
	}
	return bw.Flush()
}

// rank orders directions from the least to the most a reviewer must see.
func rank(d audit.Direction) int {
	switch d {
	case audit.Widened:
		return 2
	case audit.Changed:
		return 1
	}
	return 0
}

// MarkdownText is mdEscape, for the other commands' Markdown.
func MarkdownText(s string) string { return mdEscape(s) }

// mdEscape makes s one line of Markdown text that shows as it is: every
// character that is not printable is written as in a Go string, and
// every character that Markdown or HTML could read as markup is escaped,
// the | of a table cell included.
func mdEscape(s string) string {
	s = printable(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case strings.ContainsRune("\\`*_{}[]()#+-.!|~:@", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
