package write

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
	"github.com/mcpeffect/mcpeffect/internal/effectproof"
)

// Justification writes r as the justifications that app directories
// ask for, one for each hint of each tool (the ChatGPT app directory's
// form asks for readOnlyHint, destructiveHint and openWorldHint), in
// Markdown: each drawn from what verify saw its examples do, the records
// and fields each call changed, or that it changed nothing. A hint verify
// cannot see, openWorldHint (the state it reads is the server's own, not
// the world outside), says so rather than claim a proof. A tool that is
// not proven has its verdict and reason in place of a proof, and every
// text that came from the server or the state is escaped.
func Justification(w io.Writer, r *verify.Report) error {
	var b strings.Builder
	name := r.Server.Name
	if name == "" {
		name = "(unnamed)"
	}
	fmt.Fprintf(&b, "# Tool hint justifications: %s %s\n\n", MarkdownText(name), MarkdownText(r.Server.Version))
	b.WriteString("Each justification is drawn from `mcpeffect verify`, which called each tool on a known state, " +
		"each example on a fresh instance of the server, and compared the state before and after the call, " +
		"and after a repeat of it with the same arguments")
	if len(r.State) > 0 {
		states := make([]string, len(r.State))
		for i, st := range r.State {
			states[i] = codeSpan(st)
		}
		b.WriteString(" (the state: " + strings.Join(states, ", ") + ")")
	}
	b.WriteString(". A read changes nothing; a write that is not destructive only adds records and fills empty fields; " +
		"an idempotent write's repeat changes nothing.")
	if len(r.LeftOut) > 0 {
		b.WriteString(" Left out of the state as bookkeeping: ")
		for i, l := range r.LeftOut {
			if i > 0 {
				b.WriteString("; ")
			}
			what := "records " + l.Record
			if l.Field != "" {
				what = l.Field + " of records " + l.Record
			}
			b.WriteString(MarkdownText(what + " (" + l.Reason + ")"))
		}
		b.WriteString(".")
	}
	b.WriteString("\n")
	for _, t := range r.Tools {
		writeToolJustification(&b, t)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// A seen change is a change one call of an example made.
type seen struct {
	example, when string // the example's name; "call" or "repeat"
	change        verify.ChangeReport
}

func (s seen) String() string {
	return fmt.Sprintf("the %s of example %s %s", s.when, quoteName(s.example), changeWords(s.change))
}

// changeWords says what a change did, for a sentence: "added record
// …", "changed field … of record … from … to …".
func changeWords(c verify.ChangeReport) string {
	record, field := codeSpan(c.Record), codeSpan(c.Field)
	switch c.Kind {
	case "record added":
		return fmt.Sprintf("added record %s: %s", record, codeSpan(c.After))
	case "record removed":
		return fmt.Sprintf("removed record %s, which was %s", record, codeSpan(c.Before))
	case "field filled":
		return fmt.Sprintf("filled field %s of record %s, empty before, with %s", field, record, codeSpan(c.After))
	case "field cleared":
		return fmt.Sprintf("cleared field %s of record %s, which held %s", field, record, codeSpan(c.Before))
	}
	return fmt.Sprintf("changed field %s of record %s from %s to %s", field, record, codeSpan(c.Before), codeSpan(c.After))
}

func quoteName(name string) string { return "“" + MarkdownText(name) + "”" }

// codeSpan writes text, made printable, as inline code, which Markdown
// shows as it is: fenced by one backquote more than the longest run of
// them in it, and spaced from a backquote at either end.
func codeSpan(text string) string {
	text = effectproof.Printable(text, effectproof.MaxShownError)
	run, longest := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(text, "`") || strings.HasSuffix(text, "`") {
		text = " " + text + " "
	}
	return fence + text + fence
}

// destroys reports whether a change, as the report names its kind,
// changed or removed a value that existed.
func destroys(c verify.ChangeReport) bool {
	return c.Kind == "field changed" || c.Kind == "field cleared" || c.Kind == "record removed"
}

// observations are what a tool's examples showed, call by call.
type observations struct {
	reached, refused []string // the examples that reached the work; that were refused as expected
	changed          *seen    // the first change of any call
	destroyed        *seen    // the first change that destroyed, of any call
	destroyedCount   int      // calls that destroyed, shown or not among their changes
	repeatChanged    *seen    // the first change of a repeat
	repeatsChanged   int      // repeats that changed anything
	onlyAdded        *seen    // the first change of a call that only added
}

func observe(t verify.ToolReport) observations {
	var o observations
	for _, e := range t.Examples {
		switch e.Result {
		case verify.ResultRefused:
			o.refused = append(o.refused, e.Name)
			continue
		case verify.ResultShown, verify.ResultLie:
			o.reached = append(o.reached, e.Name)
		default:
			continue
		}
		for _, c := range []struct {
			when string
			r    *verify.CallReport
		}{{"call", e.First}, {"repeat", e.Repeat}} {
			if c.r == nil || c.r.Count == 0 {
				continue
			}
			if c.when == "repeat" {
				o.repeatsChanged++
			}
			if c.r.Destroyed {
				o.destroyedCount++
			}
			for _, ch := range c.r.Changes {
				s := &seen{e.Name, c.when, ch}
				if o.changed == nil {
					o.changed = s
				}
				if c.when == "repeat" && o.repeatChanged == nil {
					o.repeatChanged = s
				}
				if destroys(ch) && o.destroyed == nil {
					o.destroyed = s
				}
				if !c.r.Destroyed && o.onlyAdded == nil {
					o.onlyAdded = s
				}
			}
		}
	}
	return o
}

// examplesText names examples: "3 examples (“get”, “list”, “create”)".
func examplesText(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = quoteName(n)
	}
	what := "examples"
	if len(names) == 1 {
		what = "example"
	}
	return fmt.Sprintf("%d %s (%s)", len(names), what, strings.Join(quoted, ", "))
}

func writeToolJustification(b *strings.Builder, t verify.ToolReport) {
	fmt.Fprintf(b, "\n## %s\n\n", markdownCode(t.Name))
	declared := func(h *bool, assumed bool) string {
		switch {
		case h == nil:
			return fmt.Sprintf("%t (left out: the specification's default)", assumed)
		default:
			return fmt.Sprintf("%t", *h)
		}
	}
	e, err := mcpeffect.ParseEffect(t.Effect)
	if t.Verdict != verify.Proven && t.Verdict != verify.Overcautious || err != nil {
		why := MarkdownText(t.Reason)
		if l, ex, ok := firstLie(t); ok && len(l.Changes) > 0 && l.Rule == "undo" {
			c := l.Changes[0]
			why += fmt.Sprintf(": after the call of example %s, its undo left %s, which its undo must restore", quoteName(ex), leftWords(c))
		} else if ok && len(l.Changes) > 0 {
			when := strings.TrimPrefix(l.When, "its ")
			if when == "first call" {
				when = "call"
			}
			article := "a"
			if strings.HasPrefix(l.Rule, "i") {
				article = "an" // idempotent
			}
			why += fmt.Sprintf(": the %s of example %s %s, which %s %s tool must not", when, quoteName(ex), changeWords(l.Changes[0]), article, l.Rule)
		}
		fmt.Fprintf(b, "**No justification: %s.** %s.\n", t.Verdict, why)
		return
	}
	o := observe(t)
	fmt.Fprintf(b, "**%s** by %s", strings.ToUpper(string(t.Verdict[:1]))+string(t.Verdict[1:]), examplesText(o.reached))
	if len(o.refused) > 0 {
		fmt.Fprintf(b, ", and %s refused as expected, changing nothing", examplesText(o.refused))
	}
	b.WriteString(".")
	if t.Rule != "" {
		fmt.Fprintf(b, " Its effect depends on its arguments, %s: each call was held to the outcome its arguments select, and to the hints.", codeSpan(t.Rule))
	}
	if t.Waived != "" {
		fmt.Fprintf(b, " What its hints claim beyond its examples is waived: %s.", MarkdownText(t.Waived))
	}
	b.WriteString("\n\n")
	h := t.Hints
	write := e&mcpeffect.Write != 0
	hint := func(name, value, text string) {
		fmt.Fprintf(b, "- **`%s`: %s.** %s\n", name, value, text)
	}

	// readOnlyHint
	switch {
	case !write:
		hint("readOnlyHint", declared(h.ReadOnly, false), fmt.Sprintf("It only reads: in %s, neither a call nor its repeat changed anything in the state.", examplesText(o.reached)))
	case o.changed != nil:
		hint("readOnlyHint", declared(h.ReadOnly, false), "It writes: "+o.changed.String()+".")
	default:
		hint("readOnlyHint", declared(h.ReadOnly, false), "Declared a write, but no example changed anything"+waived(t)+".")
	}
	if !write {
		hint("destructiveHint", declared(h.Destructive, true), "Not meaningful for a read, as the specification says: it is read only when readOnlyHint is false.")
		hint("idempotentHint", declared(h.Idempotent, false), "Not meaningful for a read, as the specification says; every call of a read is safe to repeat, and each repeat here changed nothing.")
	} else {
		// destructiveHint
		destructive := e&mcpeffect.Destructive == mcpeffect.Destructive
		switch {
		case destructive && o.destroyed != nil:
			hint("destructiveHint", declared(h.Destructive, true), "It destroys: "+o.destroyed.String()+".")
		case destructive && o.destroyedCount > 0:
			hint("destructiveHint", declared(h.Destructive, true), fmt.Sprintf("It destroys: %d of its calls changed or removed a value that existed.", o.destroyedCount))
		case destructive:
			hint("destructiveHint", declared(h.Destructive, true), "Declared destructive, but no example changed or removed a value that existed"+waived(t)+".")
		case o.onlyAdded != nil:
			hint("destructiveHint", declared(h.Destructive, true), fmt.Sprintf("It only adds: in %s, no call changed or removed a value that existed; %s.", examplesText(o.reached), o.onlyAdded))
		default:
			hint("destructiveHint", declared(h.Destructive, true), fmt.Sprintf("In %s, no call changed or removed a value that existed.", examplesText(o.reached)))
		}
		// idempotentHint
		idempotent := e&mcpeffect.Idempotent == mcpeffect.Idempotent
		switch {
		case idempotent:
			hint("idempotentHint", declared(h.Idempotent, false), fmt.Sprintf("Safe to repeat: in %s, the repeat of each call with the same arguments changed nothing.", examplesText(o.reached)))
		case o.repeatChanged != nil:
			hint("idempotentHint", declared(h.Idempotent, false), "Not safe to repeat: "+o.repeatChanged.String()+".")
		case o.repeatsChanged > 0:
			hint("idempotentHint", declared(h.Idempotent, false), fmt.Sprintf("Not safe to repeat: %d of its repeats, with the same arguments, changed the state again.", o.repeatsChanged))
		default:
			hint("idempotentHint", declared(h.Idempotent, false), "Declared not safe to repeat, but no repeat changed anything"+waived(t)+".")
		}
	}
	hint("openWorldHint", declared(h.OpenWorld, true), "Not observed: verify reads the state its examples file names, the server's own, not the world outside it; this hint is as the server declares it.")
	for _, ex := range t.Examples {
		if u := ex.Undo; u != nil && u.Result == verify.UndoRestored {
			fmt.Fprintf(b, "- **Undo (SEP-3172): %s.** After the call of example %s, which changed %s, %s called with %s restored the state as it was before the call.\n",
				codeSpan(u.Tool), quoteName(ex.Name), changesText(u.Call.Count), codeSpan(u.Tool), codeSpan(u.Arguments))
		}
	}
}

// leftWords says what an undo left changed, for a sentence: its value
// before the call, and after the undo.
func leftWords(c verify.ChangeReport) string {
	record, field := codeSpan(c.Record), codeSpan(c.Field)
	switch c.Kind {
	case "record added":
		return fmt.Sprintf("record %s, which did not exist before the call", record)
	case "record removed":
		return fmt.Sprintf("record %s removed, which was %s before the call", record, codeSpan(c.Before))
	}
	return fmt.Sprintf("field %s of record %s at %s, which was %s before the call", field, record, codeSpan(c.After), codeSpan(c.Before))
}

// waived says why claims the examples do not show are waived, if they
// are.
func waived(t verify.ToolReport) string {
	if t.Waived != "" {
		return " (waived: " + MarkdownText(t.Waived) + ")"
	}
	return ""
}

// firstLie returns the first rule a call of t broke, and its example.
func firstLie(t verify.ToolReport) (verify.LieReport, string, bool) {
	for _, ex := range t.Examples {
		for _, l := range ex.Lies {
			return l, ex.Name, true
		}
	}
	return verify.LieReport{}, "", false
}

// changesText says how many changes a call made: "1 record or field",
// "3 records and fields".
func changesText(n int) string {
	if n == 1 {
		return "1 record or field"
	}
	return fmt.Sprintf("%d records and fields", n)
}
