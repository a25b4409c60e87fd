package write

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
)

// AuditText writes r for people: a line about the server, a table of the
// tools with their hints and effect, the findings, and a summary. A hint
// the server left out is shown in parentheses, with the value hosts
// assume, or as n/a where it does not apply (a read's destructiveHint and
// idempotentHint). Under a tool that publishes the outcomes of its calls,
// each outcome is a row of its own, indented. With color, levels and
// missing hints are coloured with ANSI escapes, for a terminal.
//
// Text that the server sent is written as a Go quoted string when it holds
// characters that are not printable, so a server cannot send escapes to
// the terminal.
func AuditText(w io.Writer, r *audit.Report, color bool) error {
	bw := bufio.NewWriter(w)
	st := styles(color)

	fmt.Fprintf(bw, "%s (MCP %s): %s\n\n", describeServer(r.Server), printable(r.Server.ProtocolVersion), plural(len(r.Tools), "tool"))

	if len(r.Tools) > 0 {
		tools := [][]cell{{
			{"TOOL", st.head}, {"READ-ONLY", st.head}, {"DESTRUCTIVE", st.head},
			{"IDEMPOTENT", st.head}, {"OPEN-WORLD", st.head}, {"EFFECT", st.head},
		}}
		missing, notApplicable := false, false
		for _, t := range r.Tools {
			row := []cell{{text: printable(t.Name)}}
			for _, h := range [...]struct{ declared, assumed *bool }{
				{t.Declared.ReadOnly, t.Assumed.ReadOnly},
				{t.Declared.Destructive, t.Assumed.Destructive},
				{t.Declared.Idempotent, t.Assumed.Idempotent},
				{t.Declared.OpenWorld, t.Assumed.OpenWorld},
			} {
				switch {
				case h.declared != nil:
					row = append(row, cell{text: strconv.FormatBool(*h.declared)})
				case h.assumed == nil:
					notApplicable = true
					row = append(row, cell{"n/a", st.missing})
				default:
					missing = true
					row = append(row, cell{"(" + strconv.FormatBool(*h.assumed) + ")", st.missing})
				}
			}
			row = append(row, cell{text: t.Effect.String()})
			tools = append(tools, row)
			for _, o := range t.Outcomes {
				row := []cell{{text: "  " + outcomeLabel(t, o)}}
				for _, h := range [...]*bool{o.ReadOnly, o.Destructive, o.Idempotent, o.OpenWorld} {
					row = append(row, cell{text: strconv.FormatBool(*h)})
				}
				tools = append(tools, append(row, cell{text: o.Effect.String()}))
			}
		}
		writeTable(bw, tools)
		if missing {
			fmt.Fprintf(bw, "%s\n", st.missing.apply("(x): hint missing, hosts assume x"))
		}
		if notApplicable {
			fmt.Fprintf(bw, "%s\n", st.missing.apply("n/a: hint missing, and meaningless for a read-only tool"))
		}
		writeOutcomesLegend(bw, r, st)
		fmt.Fprintln(bw)
		writeRecoveries(bw, r, st)
	}

	if len(r.Findings) == 0 {
		fmt.Fprintln(bw, "No findings.")
	} else {
		findings := [][]cell{{{"LEVEL", st.head}, {"TOOL", st.head}, {"RULE", st.head}, {"FINDING", st.head}}}
		for _, f := range r.Findings {
			findings = append(findings, []cell{
				{f.Level.String(), st.level(f.Level)},
				{text: printable(f.Tool)},
				{text: string(f.Rule)},
				{text: f.Message},
			})
		}
		writeTable(bw, findings)
	}
	fmt.Fprintln(bw)

	s := r.Summary
	fmt.Fprintf(bw, "%s: %s, %s (%d destructive, %d idempotent), %d open-world. %s, %s.\n",
		plural(s.Tools, "tool"), plural(s.Reads, "read"), plural(s.Writes, "write"),
		s.Destructive, s.Idempotent, s.OpenWorld,
		st.count(s.Errors, "error", st.error), st.count(s.Warnings, "warning", st.warning))
	if s.Idempotency {
		fmt.Fprintf(bw, "Retries: the server declares capabilities.tools.%s (SEP-3182): a write that is not idempotent, retried with the same idempotency key, runs once.\n",
			mcpeffect.IdempotencyCapability)
	}
	writeHosts(bw, r, st)
	writeDirectories(bw, r, st)
	return bw.Flush()
}

// writeHosts writes what each host profile does with the tools: for one
// host, a table of each tool's outcome in each of its modes, then a
// summary of each mode with its notes and source; for several, the
// summaries alone.
func writeHosts(w io.Writer, r *audit.Report, st palette) {
	if len(r.Hosts) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", st.head.apply("Hosts: what each does before a call, from the hints. Profiles go stale: each says when its source was read."))
	one := true
	for _, h := range r.Hosts {
		one = one && h.Host == r.Hosts[0].Host
	}
	if one && len(r.Tools) > 0 {
		rows := [][]cell{{{"TOOL", st.head}}}
		for _, h := range r.Hosts {
			rows[0] = append(rows[0], cell{strings.ToUpper(h.Mode), st.head})
		}
		published := false
		for i, t := range r.Tools {
			row := []cell{{text: printable(t.Name)}}
			for _, h := range r.Hosts {
				row = append(row, cell{text: describeAction(h.Tools[i])})
			}
			rows = append(rows, row)
			for j, o := range t.Outcomes {
				published = true
				row := []cell{{text: "  " + outcomeLabel(t, o)}}
				for _, h := range r.Hosts {
					ho := h.Tools[i].Outcomes[j]
					text := describeAction(audit.HostTool{Action: ho.Action, ReviewsOutput: ho.ReviewsOutput})
					if own := describeAction(audit.HostTool{Action: ho.WithOwnHints, ReviewsOutput: ho.OwnReviewsOutput}); own != text {
						text += " (own hints: " + own + ")"
					}
					row = append(row, cell{text: text})
				}
				rows = append(rows, row)
			}
		}
		fmt.Fprintln(w)
		writeTable(w, rows)
		if published {
			fmt.Fprintf(w, "%s\n%s\n",
				st.missing.apply("indented: the calls of each outcome get what the tool gets: hosts decide from its hints"),
				st.missing.apply("(own hints: x): what the host would do with the outcome's hints, which it does not learn before a call"))
		}
	}
	fmt.Fprintln(w)
	for _, h := range r.Hosts {
		fmt.Fprintln(w, h.Summary)
		if !one {
			continue
		}
		for _, n := range h.Notes {
			fmt.Fprintf(w, "    - %s\n", n)
		}
		fmt.Fprintf(w, "    source: %s\n", h.Source)
	}
	if !one {
		fmt.Fprintln(w, "Each tool's outcome: -host NAME for one host, or -json.")
		if slices.ContainsFunc(r.Tools, func(t audit.Tool) bool { return len(t.Outcomes) > 0 }) {
			fmt.Fprintln(w, "The calls of each outcome a tool publishes get what the tool gets: hosts decide from its hints, the worst case.")
		}
	}
}

// writeRecoveries writes, for the tools that publish an undo (SEP-3172),
// a table of each with its undo and the expressions that bind the undo's
// arguments, and where the server published it; nothing if none does.
func writeRecoveries(w io.Writer, r *audit.Report, st palette) {
	rows := [][]cell{{{"TOOL", st.head}, {"UNDONE BY", st.head}, {"ARGUMENTS", st.head}, {"PUBLISHED IN", st.head}}}
	for _, t := range r.Tools {
		if t.Recovery == nil {
			continue
		}
		op := t.Recovery.CompensatingOperation
		params := audit.BindingTexts(*t.Recovery, " = ")
		if len(params) == 0 {
			params = []string{"none"}
		}
		in := "annotations"
		if strings.HasPrefix(t.RecoveryIn, "_meta") {
			in = "_meta"
		}
		rows = append(rows, []cell{{text: printable(t.Name)}, {text: printable(op.OperationID)}, {text: strings.Join(params, ", ")}, {text: in}})
	}
	if len(rows) == 1 {
		return
	}
	writeTable(w, rows)
	fmt.Fprintf(w, "%s\n", st.missing.apply(fmt.Sprintf(
		"undone by: the tool whose call undoes a call of the tool, as the server claims it (SEP-3172), in annotations.%s or _meta %q;",
		mcpeffect.RecoveryAnnotation, mcpeffect.RecoveryMetaKey)))
	fmt.Fprintf(w, "%s\n", st.missing.apply(fmt.Sprintf(
		"its arguments bound from the call's arguments (%s) or its result's structured content (%s)",
		mcpeffect.RequestBodyExpression, mcpeffect.ResponseBodyExpression)))
	fmt.Fprintln(w)
}

// writeOutcomesLegend says what the indented rows of published outcomes
// are, and which tools the server marks resolvable, if any.
func writeOutcomesLegend(w io.Writer, r *audit.Report, st palette) {
	var published bool
	var resolvable []string
	for _, t := range r.Tools {
		published = published || len(t.Outcomes) > 0
		if t.Resolvable {
			resolvable = append(resolvable, printable(t.Name))
		}
	}
	if published {
		fmt.Fprintf(w, "%s\n", st.missing.apply(fmt.Sprintf(
			"indented: an outcome of the tool's calls, as the server claims it (_meta %q); hosts decide from the tool's hints",
			mcpeffect.OutcomesMetaKey)))
	}
	if len(resolvable) > 0 {
		fmt.Fprintf(w, "%s\n", st.missing.apply(fmt.Sprintf(
			"resolvable (tool-resolution extension, experimental): %s", strings.Join(resolvable, ", "))))
	}
}

// outcomeLabel names an outcome of t in a table: `action="get"` in the
// common form, "some calls" in the general form, where the server
// computes each call's outcome from its arguments.
func outcomeLabel(t audit.Tool, o connect.PublishedOutcome) string {
	if t.Argument == "" {
		return "some calls"
	}
	return t.OutcomeName(o)
}

// describeAction says what a host does with a tool, in a table cell.
func describeAction(t audit.HostTool) string {
	s := map[audit.HostAction]string{
		audit.Refused:    "refused",
		audit.AsksAlways: "always asks",
		audit.Asks:       "asks",
		audit.Judged:     "a model judges",
		audit.Runs:       "runs",
		audit.Settings:   "by its settings",
	}[t.Action]
	if t.ReviewsOutput {
		s += ", output reviewed"
	}
	return s
}

// writeDirectories writes the summary of each directory profile; their
// findings are in the table of findings.
func writeDirectories(w io.Writer, r *audit.Report, st palette) {
	if len(r.Directories) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n\n", st.head.apply("Directories: what their reviews would reject, as far as a tool list shows."))
	for _, d := range r.Directories {
		fmt.Fprintln(w, d.Summary)
	}
}

func describeServer(s connect.Server) string {
	name := s.Name
	if name == "" {
		name = "unnamed server"
	}
	if s.Title != "" && s.Title != s.Name {
		name = fmt.Sprintf("%s %q", name, s.Title)
	}
	if s.Version != "" {
		name += " " + s.Version
	}
	return printable(name)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// printable returns s, or s as a Go quoted string if it holds a character
// that is not printable.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// A style is an ANSI escape sequence that a cell starts with; the empty
// style is plain text.
type style string

func (s style) apply(text string) string {
	if s == "" {
		return text
	}
	return string(s) + text + "\x1b[0m"
}

type palette struct {
	head, missing, error, warning, narrowed style
}

func styles(color bool) palette {
	if !color {
		return palette{}
	}
	return palette{head: "\x1b[1m", missing: "\x1b[2m", error: "\x1b[1;31m", warning: "\x1b[33m", narrowed: "\x1b[32m"}
}

func (p palette) level(l audit.Level) style {
	if l == audit.Error {
		return p.error
	}
	return p.warning
}

// count returns "n nouns", in style s when n is not 0.
func (p palette) count(n int, noun string, s style) string {
	if n == 0 {
		return plural(n, noun)
	}
	return s.apply(plural(n, noun))
}

type cell struct {
	text  string
	style style
}

// writeTable writes rows as columns aligned on the width of their text,
// two spaces apart; escapes do not count towards the width, and the last
// column is not padded.
func writeTable(w io.Writer, rows [][]cell) {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		b.Reset()
		for i, c := range row {
			b.WriteString(c.style.apply(c.text))
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text)+2))
			}
		}
		// An empty last cell leaves the padding of the one before it.
		io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n")
	}
}

// DiffText writes d for people: the two sides, a table of the
// changes, widenings first, then the tools added and removed, and a
// summary. With color, widenings are in red and narrowings in green.
func DiffText(w io.Writer, d *audit.DiffReport, color bool) error {
	bw := bufio.NewWriter(w)
	st := styles(color)
	for _, side := range []struct {
		name string
		s    audit.Snapshot
	}{{"old", d.Old}, {"new", d.New}} {
		fmt.Fprintf(bw, "%s: %s (%s", side.name, printable(side.s.Source), side.s.Kind)
		if side.s.Server.Name != "" {
			fmt.Fprintf(bw, ", server %s", describeServer(side.s.Server))
		}
		fmt.Fprintf(bw, "): %s\n", plural(len(side.s.Tools), "tool"))
	}
	fmt.Fprintln(bw)

	rows := [][]cell{{{"", st.head}, {"TOOL", st.head}, {"CHANGE", st.head}, {"DETAIL", st.head}}}
	for _, dir := range []audit.Direction{audit.Widened, audit.Narrowed, audit.Changed} {
		for _, c := range d.Changes {
			if c.Direction != dir {
				continue
			}
			s := style("")
			switch dir {
			case audit.Widened:
				s = st.error
			case audit.Narrowed:
				s = st.narrowed
			}
			rows = append(rows, []cell{{string(dir), s}, {text: changedName(c)}, {text: string(c.Kind)}, {text: printable(c.Message)}})
		}
	}
	for _, t := range d.Added {
		rows = append(rows, []cell{{text: "added"}, {text: printable(t.Name)}, {text: t.Effect.String()}, {}})
	}
	for _, t := range d.Removed {
		rows = append(rows, []cell{{text: "removed"}, {text: printable(t.Name)}, {text: t.Effect.String()}, {}})
	}
	if len(rows) == 1 {
		fmt.Fprintln(bw, "No change.")
	} else {
		writeTable(bw, rows)
	}
	fmt.Fprintln(bw)

	s := d.Summary
	fmt.Fprintf(bw, "%s widened, %d narrowed, %d otherwise changed; %d added, %d removed.",
		st.count(s.Widened, "tool", st.error), s.Narrowed, s.Changed, s.Added, s.Removed)
	if s.Server > 0 {
		fmt.Fprint(bw, " What the server declares of itself changed.")
	}
	if s.Widened > 0 {
		fmt.Fprint(bw, " A widening fails the diff.")
	}
	fmt.Fprintln(bw)
	return bw.Flush()
}

// changedName names what a change of a diff is about: its tool, or the
// server, for a change of what the server declares of itself.
func changedName(c audit.Change) string {
	if c.Tool == "" {
		return "(server)"
	}
	return printable(c.Tool)
}
