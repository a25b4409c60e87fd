package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/host"
)

// A Snapshot is the tools of one version of a server, as [Diff] compares
// them: each tool's hints as declared, its title, and its description
// where the source keeps it.
type Snapshot struct {
	// Source names where the snapshot came from, for people: a file, a
	// URL, a command.
	Source string
	// Kind is "report" (an audit -json report), "manifest" (a Registry's
	// Manifest) or "live" (a server listed now).
	Kind   string
	Server connect.Server
	Tools  []SnapshotTool
	// Idempotency is whether the server declares
	// capabilities.tools.idempotency (SEP-3182), where the source says
	// (a live server, a report that has summary.idempotency); nil
	// otherwise.
	Idempotency *bool
	// RecoveriesKnown says that the source has the undo each tool
	// publishes (SEP-3172), in SnapshotTool Recovery: a live server, a
	// report that has summary.recoveries; not a manifest.
	RecoveriesKnown bool
}

// A SnapshotTool is one tool of a [Snapshot].
type SnapshotTool struct {
	Name  string
	Title string
	// Description is nil where the source does not keep descriptions (a
	// manifest, or a report from before they were kept).
	Description *string
	Hints       host.Declared
	// Outcomes are the outcomes of the tool's calls, where the source
	// has them: as the server published them (a report, a live server),
	// or as its registry declared them (a manifest); nil otherwise.
	// Argument names the argument whose value selects each, in the
	// common form; it is empty in the general form, where the outcomes
	// have no value.
	Argument string
	Outcomes []mcpeffect.Outcome
	// Recovery is the undo the tool publishes, if the source knows it
	// (Snapshot RecoveriesKnown) and the tool publishes one.
	Recovery *mcpeffect.Recovery
}

// SnapshotOf returns the snapshot of report r, from source.
func SnapshotOf(r *Report, source, kind string) Snapshot {
	idempotency := r.Summary.Idempotency
	s := Snapshot{Source: source, Kind: kind, Server: r.Server, Idempotency: &idempotency, RecoveriesKnown: true}
	for _, t := range r.Tools {
		d := t.Description
		st := SnapshotTool{Name: t.Name, Title: t.Title, Description: &d, Hints: t.Declared, Argument: t.Argument, Recovery: t.Recovery}
		for _, o := range t.Outcomes {
			st.Outcomes = append(st.Outcomes, mcpeffect.Outcome{Value: o.Value, Effect: o.Effect})
		}
		s.Tools = append(s.Tools, st)
	}
	return s
}

// ReadSnapshot reads a snapshot from JSON: a report written by audit
// -json, or the manifest of a registry (package mcpeffect/manifest, as
// WriteJSON writes it). Each tool of a report is read by the hints it
// declared; each tool of a manifest by its four hints, or, if it has none,
// by its effect: in both, what a host is told before a call, the worst
// case where a tool's effect depends on its arguments. The outcomes of
// such a tool are read too, where the report shows them (those its server
// published) or the manifest lists them; and, from a report, the undo
// each tool publishes and whether the server declares idempotency, where
// the report has them (summary.recoveries, summary.idempotency: a report
// written before the audit read them has not). Fields it does not know
// are ignored, so that a newer report or manifest can be read.
func ReadSnapshot(data []byte, source string) (Snapshot, error) {
	var doc struct {
		Server  *connect.Server    `json:"server"`
		Tools   *[]json.RawMessage `json:"tools"`
		Summary struct {
			Recoveries  *int  `json:"recoveries"`
			Idempotency *bool `json:"idempotency"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return Snapshot{}, fmt.Errorf("%s: not JSON: %w", source, err)
	}
	if doc.Tools == nil {
		return Snapshot{}, fmt.Errorf("%s: no \"tools\": not an audit -json report nor a registry manifest", source)
	}
	s := Snapshot{Source: source, Kind: "manifest"}
	if doc.Server != nil {
		s.Kind, s.Server = "report", *doc.Server
		s.Idempotency, s.RecoveriesKnown = doc.Summary.Idempotency, doc.Summary.Recoveries != nil
	}
	seen := map[string]bool{}
	for i, raw := range *doc.Tools {
		t, err := readSnapshotTool(raw)
		if err != nil {
			return Snapshot{}, fmt.Errorf("%s: tool %d: %w", source, i, err)
		}
		if seen[t.Name] {
			return Snapshot{}, fmt.Errorf("%s: tool %q is listed twice", source, t.Name)
		}
		seen[t.Name] = true
		s.Tools = append(s.Tools, t)
	}
	return s, nil
}

func readSnapshotTool(raw json.RawMessage) (SnapshotTool, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return SnapshotTool{}, errors.New("not a JSON object")
	}
	var t SnapshotTool
	if err := json.Unmarshal(obj["name"], &t.Name); err != nil || t.Name == "" {
		return SnapshotTool{}, errors.New("no name")
	}
	if v, ok := obj["title"]; ok {
		if err := json.Unmarshal(v, &t.Title); err != nil {
			return SnapshotTool{}, fmt.Errorf("%q: title is not a string", t.Name)
		}
	}
	if v, ok := obj["description"]; ok {
		var d string
		if err := json.Unmarshal(v, &d); err != nil {
			return SnapshotTool{}, fmt.Errorf("%q: description is not a string", t.Name)
		}
		t.Description = &d
	}
	var err error
	switch declared, ok := obj["declared"]; {
	case ok:
		// An audit report: the hints as the server declared them.
		t.Hints, err = host.ParseDeclared(declared)
	default:
		// A manifest: the hints at the top of the tool, or its effect.
		t.Hints, err = host.ParseDeclared(raw)
		if err == nil && t.Hints == (host.Declared{}) {
			if v, ok := obj["effect"]; ok {
				var e mcpeffect.Effect
				if err := json.Unmarshal(v, &e); err != nil {
					return SnapshotTool{}, fmt.Errorf("%q: effect: %w", t.Name, err)
				}
				t.Hints = host.DeclaredOf(e.Annotations())
			}
		}
	}
	if err != nil {
		return SnapshotTool{}, fmt.Errorf("%q: %w", t.Name, err)
	}
	if err := readSnapshotOutcomes(obj, &t); err != nil {
		return SnapshotTool{}, fmt.Errorf("%q: %w", t.Name, err)
	}
	if v, ok := obj["recovery"]; ok && !isNull(v) {
		var rec mcpeffect.Recovery
		if err := json.Unmarshal(v, &rec); err != nil {
			return SnapshotTool{}, fmt.Errorf("%q: recovery: %v", t.Name, err)
		}
		if err := rec.Validate(); err != nil {
			return SnapshotTool{}, fmt.Errorf("%q: recovery: %w", t.Name, err)
		}
		t.Recovery = &rec
	}
	return t, nil
}

// readSnapshotOutcomes reads the outcomes of the tool obj into t, if it
// has any: "outcomes", each with an "effect" and, in the common form, a
// "value" ("" when absent, as both formats leave it out), the argument of
// the common form being "argument" in a report and a manifest alike.
func readSnapshotOutcomes(obj map[string]json.RawMessage, t *SnapshotTool) error {
	raw, ok := obj["outcomes"]
	if !ok || isNull(raw) {
		return nil
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return errors.New("outcomes: want a non-empty array of objects")
	}
	var argument string
	if v, ok := obj["argument"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &argument); err != nil {
			return errors.New("argument is not a string")
		}
	}
	seen := map[string]bool{}
	for i, o := range list {
		var out mcpeffect.Outcome
		if err := json.Unmarshal(o["effect"], &out.Effect); err != nil || isNull(o["effect"]) {
			return fmt.Errorf("outcome %d: no valid effect", i+1)
		}
		if argument != "" {
			if v, ok := o["value"]; ok && (isNull(v) || json.Unmarshal(v, &out.Value) != nil) {
				return fmt.Errorf("outcome %d: value is not a string", i+1)
			}
			if seen[out.Value] {
				return fmt.Errorf("outcome %d: the value %s is given twice", i+1, quoteShort(out.Value))
			}
			seen[out.Value] = true
		}
		t.Outcomes = append(t.Outcomes, out)
	}
	t.Argument = argument
	return nil
}

// A Direction says what a change does to what a tool may do.
type Direction string

// The directions of a [Change].
const (
	// Widened: the tool may now do more than before, as hosts that
	// assume the worst for a missing hint see it. A diff with a widening
	// fails.
	Widened Direction = "widened"
	// Narrowed: the tool may now do less.
	Narrowed Direction = "narrowed"
	// Changed: neither, but a host that pinned what it approved would ask
	// again, or a host that reads hints its own way may see a difference.
	Changed Direction = "changed"
)

// A ChangeKind names a change to one tool.
type ChangeKind string

// The kinds of change.
const (
	ReadToWrite         ChangeKind = "read-to-write"
	WriteToRead         ChangeKind = "write-to-read"
	NowDestructive      ChangeKind = "now-destructive"
	NoLongerDestructive ChangeKind = "no-longer-destructive"
	NowNonIdempotent    ChangeKind = "now-non-idempotent"
	NowIdempotent       ChangeKind = "now-idempotent"
	NowOpenWorld        ChangeKind = "now-open-world"
	NowClosedWorld      ChangeKind = "now-closed-world"
	// HintRemoved: a hint the server declared is gone, and the worst case
	// that hosts must assume for it is wider than what it said.
	HintRemoved ChangeKind = "hint-removed"
	// HintChanged: a hint's declared value changed, but not what hosts that
	// assume the worst case make of it (true to missing, for one), and
	// some host reads the missing hint its own way.
	HintChanged        ChangeKind = "hint-changed"
	TitleChanged       ChangeKind = "title-changed"
	DescriptionChanged ChangeKind = "description-changed"

	// The changes to the outcomes of a tool whose effect depends on its
	// arguments, where both snapshots have them. An outcome in both (the
	// same value of the same argument) is compared as a tool is, with the
	// kinds above: action="get" that becomes a write widens, even when
	// the tool's worst case does not change.

	// OutcomeAdded: a new outcome, such as a new value of the argument.
	// It widens when, on some axis, it may do more than every outcome
	// before it (a write on a tool whose outcomes were all reads), and
	// otherwise changes the tool.
	OutcomeAdded ChangeKind = "outcome-added"
	// OutcomeRemoved: an outcome is gone. It narrows when, on some axis,
	// it did more than every outcome left.
	OutcomeRemoved ChangeKind = "outcome-removed"
	// OutcomeArgumentChanged: another argument selects the outcomes, or
	// they are now computed from the arguments, or the reverse. The
	// outcomes are then compared by their effects alone.
	OutcomeArgumentChanged ChangeKind = "outcome-argument-changed"
	// OutcomesUnlisted: the old snapshot has the tool's outcomes, the new
	// one does not; they can no longer be compared.
	OutcomesUnlisted ChangeKind = "outcomes-unlisted"

	// The changes to the undo a tool publishes (SEP-3172), where both
	// snapshots know them; each changes the tool, as neither side is
	// wider: an orchestrator that compensated a call with the old undo
	// must see it.

	// RecoveryAdded: the tool now publishes an undo.
	RecoveryAdded ChangeKind = "recovery-added"
	// RecoveryRemoved: it no longer does: its calls can no longer be
	// undone by the server's word.
	RecoveryRemoved ChangeKind = "recovery-removed"
	// RecoveryChanged: another undo, or other arguments.
	RecoveryChanged ChangeKind = "recovery-changed"

	// The changes to what the server declares of itself, on a Change
	// without a tool, where both snapshots know it.

	// IdempotencyDeclared: the server now declares
	// capabilities.tools.idempotency (SEP-3182).
	IdempotencyDeclared ChangeKind = "idempotency-declared"
	// IdempotencyWithdrawn: it no longer does: a retry of a write that is
	// not idempotent, with a key, may run it twice.
	IdempotencyWithdrawn ChangeKind = "idempotency-withdrawn"
)

// A Change is one difference in one tool between two snapshots, or, with
// no Tool, in what the server declares of itself.
type Change struct {
	Tool      string     `json:"tool"`
	Direction Direction  `json:"direction"`
	Kind      ChangeKind `json:"kind"`
	// Outcome names the outcome of the tool that changed, if the change is
	// about one: `action="get"`, or in the general form "calls of effect
	// write".
	Outcome string `json:"outcome,omitempty"`
	// Hint is the hint whose value changed, if the change is about one.
	Hint string `json:"hint,omitempty"`
	// Old and New are the values before and after: a hint's declared
	// value ("true", "false" or "missing"), an outcome's effect ("" where
	// there is none), the argument that selects outcomes, a title, a
	// description.
	Old string `json:"old"`
	New string `json:"new"`
	// Message says what changed, and what it means, for people.
	Message string `json:"message"`
}

// A DiffTool is a tool added or removed, with its effect.
type DiffTool struct {
	Name   string           `json:"name"`
	Effect mcpeffect.Effect `json:"effect"`
}

// A DiffReport is what changed between two snapshots of a server's tools.
type DiffReport struct {
	Old     Snapshot    `json:"old"`
	New     Snapshot    `json:"new"`
	Changes []Change    `json:"changes"`
	Added   []DiffTool  `json:"added"`
	Removed []DiffTool  `json:"removed"`
	Summary DiffSummary `json:"summary"`
}

// DiffSummary counts the tools widened, narrowed and otherwise changed
// (a tool may be in several), added and removed.
type DiffSummary struct {
	OldTools int `json:"oldTools"`
	NewTools int `json:"newTools"`
	Widened  int `json:"widened"`
	Narrowed int `json:"narrowed"`
	Changed  int `json:"changed"`
	Added    int `json:"added"`
	Removed  int `json:"removed"`
	// Server counts the changes to what the server declares of itself
	// (its capabilities), which are no tool's.
	Server int `json:"server"`
}

// Widened reports whether any tool may do more in the new snapshot than
// in the old.
func (d *DiffReport) Widened() bool { return d.Summary.Widened > 0 }

// Diff compares two snapshots of a server's tools: the tools added and
// removed, in the order of each snapshot, and for each tool in both, in
// the order of the new snapshot, every change to what it may do, as hosts
// that assume the worst case for a missing hint see it, every change to
// its hints, to its outcomes where the old snapshot has them (see
// [OutcomeAdded]), and to its title and description. Descriptions are
// compared only where both snapshots keep them.
func Diff(old, new Snapshot) *DiffReport {
	d := &DiffReport{Old: old, New: new, Changes: []Change{}, Added: []DiffTool{}, Removed: []DiffTool{}}
	d.Summary.OldTools, d.Summary.NewTools = len(old.Tools), len(new.Tools)
	if old.Idempotency != nil && new.Idempotency != nil && *old.Idempotency != *new.Idempotency {
		c := Change{Direction: Changed, Kind: IdempotencyDeclared, Old: "false", New: "true",
			Message: fmt.Sprintf("the server now declares capabilities.tools.%s (SEP-3182): a write that is not idempotent, retried with the same idempotency key, runs once", mcpeffect.IdempotencyCapability)}
		if *old.Idempotency {
			c.Kind, c.Old, c.New = IdempotencyWithdrawn, "true", "false"
			c.Message = fmt.Sprintf("the server no longer declares capabilities.tools.%s (SEP-3182): a retry of a write that is not idempotent may run it twice", mcpeffect.IdempotencyCapability)
		}
		d.Changes = append(d.Changes, c)
		d.Summary.Server++
	}
	recoveries := old.RecoveriesKnown && new.RecoveriesKnown
	oldTools := map[string]SnapshotTool{}
	for _, t := range old.Tools {
		oldTools[t.Name] = t
	}
	newTools := map[string]bool{}
	for _, t := range new.Tools {
		newTools[t.Name] = true
		o, ok := oldTools[t.Name]
		if !ok {
			d.Added = append(d.Added, DiffTool{t.Name, t.Hints.Effect()})
			continue
		}
		changes := compareTool(o, t)
		if recoveries {
			changes = append(changes, compareRecovery(o, t)...)
		}
		for _, dir := range []Direction{Widened, Narrowed, Changed} {
			if slices.ContainsFunc(changes, func(c Change) bool { return c.Direction == dir }) {
				switch dir {
				case Widened:
					d.Summary.Widened++
				case Narrowed:
					d.Summary.Narrowed++
				case Changed:
					d.Summary.Changed++
				}
			}
		}
		d.Changes = append(d.Changes, changes...)
	}
	for _, t := range old.Tools {
		if !newTools[t.Name] {
			d.Removed = append(d.Removed, DiffTool{t.Name, t.Hints.Effect()})
		}
	}
	d.Summary.Added, d.Summary.Removed = len(d.Added), len(d.Removed)
	return d
}

// An axis is one way in which a tool may do more or less, and the hint
// that declares it.
type axis struct {
	hint string
	// wide reports whether effect e is at the wide end of the axis.
	wide             func(e mcpeffect.Effect) bool
	widened, narrowd ChangeKind
	wideName, narrow string // the ends of the axis, for messages
	declared         func(h host.Declared) *bool
}

var axes = []axis{
	{"readOnlyHint", func(e mcpeffect.Effect) bool { return e&mcpeffect.Write != 0 }, ReadToWrite, WriteToRead,
		"a write", "a read", func(h host.Declared) *bool { return h.ReadOnly }},
	{"destructiveHint", func(e mcpeffect.Effect) bool { return e&mcpeffect.Destructive == mcpeffect.Destructive }, NowDestructive, NoLongerDestructive,
		"destructive", "not destructive", func(h host.Declared) *bool { return h.Destructive }},
	{"idempotentHint", func(e mcpeffect.Effect) bool {
		return e&mcpeffect.Write != 0 && e&mcpeffect.Idempotent != mcpeffect.Idempotent
	}, NowNonIdempotent, NowIdempotent,
		"not idempotent", "idempotent", func(h host.Declared) *bool { return h.Idempotent }},
	{"openWorldHint", func(e mcpeffect.Effect) bool { return e&mcpeffect.OpenWorld != 0 }, NowOpenWorld, NowClosedWorld,
		"open-world", "closed-world", func(h host.Declared) *bool { return h.OpenWorld }},
}

// hostsReadDifferently reports whether some host reads the hint named
// differently from the specification when it is missing, for a tool of
// effect old and new: Claude Code takes a missing destructiveHint or
// openWorldHint for false, VS Code a missing openWorldHint. A change of
// such a hint between missing and the specification's default is then
// worth reporting, though it changes nothing for hosts that assume the
// worst case. No host reads a read's destructiveHint, nor reads a
// missing readOnlyHint or idempotentHint other than as false.
func hostsReadDifferently(hint string, old, new mcpeffect.Effect) bool {
	switch hint {
	case "openWorldHint":
		return true
	case "destructiveHint":
		return old&mcpeffect.Write != 0 && new&mcpeffect.Write != 0
	}
	return false
}

func hintText(b *bool) string {
	if b == nil {
		return "missing"
	}
	return strconv.FormatBool(*b)
}

// compareTool returns the changes of one tool, in the order of axes, then
// its title and description.
func compareTool(o, n SnapshotTool) []Change {
	var out []Change
	oe, ne := o.Hints.Effect(), n.Hints.Effect()
	for _, a := range axes {
		ow, nw := a.wide(oe), a.wide(ne)
		oh, nh := a.declared(o.Hints), a.declared(n.Hints)
		c := Change{Tool: n.Name, Hint: a.hint, Old: hintText(oh), New: hintText(nh)}
		switch {
		case !ow && nw:
			c.Direction, c.Kind = Widened, a.widened
			c.Message = fmt.Sprintf("now %s, was %s", a.wideName, a.narrow)
			if oh != nil && nh == nil {
				c.Kind = HintRemoved
				c.Message = fmt.Sprintf("%s removed (was %s): hosts must now assume it is %s", a.hint, c.Old, a.wideName)
			} else if hintText(oh) != hintText(nh) {
				c.Message += fmt.Sprintf(" (%s %s → %s)", a.hint, c.Old, c.New)
			} else if a.hint == "readOnlyHint" {
				c.Message += " (destructiveHint true now contradicts readOnlyHint true: hosts must take it for a destructive write)"
			} else {
				c.Message += fmt.Sprintf(" (%s is %s: it applies now that the tool is a write)", a.hint, c.New)
			}
		case ow && !nw:
			c.Direction, c.Kind = Narrowed, a.narrowd
			c.Message = fmt.Sprintf("now %s, was %s", a.narrow, a.wideName)
			if hintText(oh) != hintText(nh) {
				c.Message += fmt.Sprintf(" (%s %s → %s)", a.hint, c.Old, c.New)
			}
		case hintText(oh) != hintText(nh) && hostsReadDifferently(a.hint, oe, ne):
			c.Direction, c.Kind = Changed, HintChanged
			c.Message = fmt.Sprintf("%s %s → %s: the same for hosts that assume the worst case, not for those that read a missing hint their own way (mcpeffect help hosts)", a.hint, c.Old, c.New)
		default:
			continue
		}
		out = append(out, c)
	}
	out = append(out, compareOutcomes(o, n)...)
	if o.Title != n.Title {
		out = append(out, Change{Tool: n.Name, Direction: Changed, Kind: TitleChanged, Old: o.Title, New: n.Title,
			Message: fmt.Sprintf("title %s → %s", quoteShort(o.Title), quoteShort(n.Title))})
	}
	if o.Description != nil && n.Description != nil && *o.Description != *n.Description {
		out = append(out, Change{Tool: n.Name, Direction: Changed, Kind: DescriptionChanged, Old: *o.Description, New: *n.Description,
			Message: fmt.Sprintf("description %s → %s: read it, as models do", quoteShort(*o.Description), quoteShort(*n.Description))})
	}
	return out
}

// outcomeName names an outcome o of a tool whose outcomes argument
// selects: `action="get"`, or in the general form "calls of effect write".
func outcomeName(argument string, o mcpeffect.Outcome) string {
	if argument != "" {
		if r := []rune(argument); len(r) > 60 {
			argument = string(r[:60]) + "…"
		}
		return printable(argument) + "=" + quoteShort(o.Value)
	}
	return "calls of effect " + o.Effect.String()
}

// describeArgument says what selects the outcomes of a tool, for a
// message.
func describeArgument(argument string) string {
	if argument == "" {
		return "computed from its arguments"
	}
	return "selected by " + quoteShort(argument)
}

// compareOutcomes returns the changes to the outcomes of a tool, where
// the old snapshot has them: see [OutcomeAdded] and the kinds beside it.
// The outcomes of the same value of the same argument are matched; in
// the general form, or when the argument changed, those of the same
// effect.
func compareOutcomes(o, n SnapshotTool) []Change {
	switch {
	case o.Outcomes == nil:
		return nil
	case n.Outcomes == nil:
		return []Change{{Tool: n.Name, Direction: Changed, Kind: OutcomesUnlisted,
			Message: fmt.Sprintf("its outcomes (%d, %s) are no longer listed: the effect of each call can no longer be compared", len(o.Outcomes), describeArgument(o.Argument))}}
	}
	var out []Change
	byValue := o.Argument != "" && o.Argument == n.Argument
	if o.Argument != n.Argument {
		out = append(out, Change{Tool: n.Name, Direction: Changed, Kind: OutcomeArgumentChanged, Old: o.Argument, New: n.Argument,
			Message: fmt.Sprintf("outcomes now %s, were %s: compared by their effects alone", describeArgument(n.Argument), describeArgument(o.Argument))})
	}
	same := func(a, b mcpeffect.Outcome) bool {
		if byValue {
			return a.Value == b.Value
		}
		return a.Effect == b.Effect
	}
	label := func(argument string, oc mcpeffect.Outcome) string {
		if byValue {
			return outcomeName(argument, oc)
		}
		return "calls of effect " + oc.Effect.String()
	}
	effects := func(list []mcpeffect.Outcome) []mcpeffect.Effect {
		var es []mcpeffect.Effect
		for _, oc := range list {
			es = append(es, oc.Effect)
		}
		return es
	}
	for _, no := range n.Outcomes {
		i := slices.IndexFunc(o.Outcomes, func(oo mcpeffect.Outcome) bool { return same(oo, no) })
		name := label(n.Argument, no)
		if i < 0 {
			added := name + " added"
			if byValue {
				added += ", " + no.Effect.String()
			}
			c := Change{Tool: n.Name, Outcome: name, Direction: Changed, Kind: OutcomeAdded, New: no.Effect.String(),
				Message: added + ": within the worst case of the outcomes before"}
			if w := widerThanAll(no.Effect, effects(o.Outcomes)); len(w) > 0 {
				c.Direction = Widened
				c.Message = fmt.Sprintf("%s: %s, which no outcome was before", added, strings.Join(w, ", "))
			}
			out = append(out, c)
			continue
		}
		oe, ne := o.Outcomes[i].Effect, no.Effect
		for _, a := range axes {
			c := Change{Tool: n.Name, Outcome: name, Hint: a.hint, Old: oe.String(), New: ne.String()}
			switch ow, nw := a.wide(oe), a.wide(ne); {
			case !ow && nw:
				c.Direction, c.Kind = Widened, a.widened
				c.Message = fmt.Sprintf("%s now %s, was %s (%s → %s)", name, a.wideName, a.narrow, oe, ne)
			case ow && !nw:
				c.Direction, c.Kind = Narrowed, a.narrowd
				c.Message = fmt.Sprintf("%s now %s, was %s (%s → %s)", name, a.narrow, a.wideName, oe, ne)
			default:
				continue
			}
			out = append(out, c)
		}
	}
	for _, oo := range o.Outcomes {
		if slices.ContainsFunc(n.Outcomes, func(no mcpeffect.Outcome) bool { return same(oo, no) }) {
			continue
		}
		name := label(o.Argument, oo)
		c := Change{Tool: n.Name, Outcome: name, Direction: Changed, Kind: OutcomeRemoved, Old: oo.Effect.String(), Message: name + " removed"}
		if byValue {
			c.Message += ", " + oo.Effect.String()
		}
		if w := widerThanAll(oo.Effect, effects(n.Outcomes)); len(w) > 0 {
			c.Direction = Narrowed
			c.Message += fmt.Sprintf(": no outcome left is %s", strings.Join(w, ", "))
		}
		out = append(out, c)
	}
	return out
}

// widerThanAll returns the ends of the axes on which a call of effect e
// may do more than every effect of others ("a write", "destructive"), or
// none.
func widerThanAll(e mcpeffect.Effect, others []mcpeffect.Effect) []string {
	var out []string
	for _, a := range axes {
		if a.wide(e) && !slices.ContainsFunc(others, a.wide) {
			out = append(out, a.wideName)
		}
	}
	return out
}

// compareRecovery returns the change to the undo of a tool, if any.
func compareRecovery(o, n SnapshotTool) []Change {
	text := func(r *mcpeffect.Recovery) string {
		if r == nil {
			return ""
		}
		return RecoveryText(*r)
	}
	ot, nt := text(o.Recovery), text(n.Recovery)
	c := Change{Tool: n.Name, Direction: Changed, Old: ot, New: nt}
	switch {
	case sameRecovery(o.Recovery, n.Recovery):
		return nil
	case ot == "":
		c.Kind, c.Message = RecoveryAdded, "now publishes its undo (SEP-3172): "+shortText(nt, 200)
	case nt == "":
		c.Kind, c.Message = RecoveryRemoved, "no longer publishes its undo (SEP-3172), which was "+shortText(ot, 200)+": its calls can no longer be undone by the server's word"
	default:
		c.Kind, c.Message = RecoveryChanged, "its undo (SEP-3172) changed: "+shortText(ot, 200)+" → "+shortText(nt, 200)
	}
	return []Change{c}
}

// sameRecovery reports whether a and b are the same undo, or both none:
// compared member by member, as their texts could be alike for two
// different ones.
func sameRecovery(a, b *mcpeffect.Recovery) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Strategy == b.Strategy && a.CompensatingOperation.OperationID == b.CompensatingOperation.OperationID &&
		maps.Equal(a.CompensatingOperation.Parameters, b.CompensatingOperation.Parameters)
}

// isNull reports whether raw is JSON null, or nothing.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// quoteShort quotes s for a message, cut to 60 characters.
func quoteShort(s string) string {
	r := []rune(s)
	if len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return strconv.Quote(s)
}

// MarshalJSON writes a snapshot's source, kind, server and number of
// tools; the tools themselves are in the changes.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Source string         `json:"source"`
		Kind   string         `json:"kind"`
		Server connect.Server `json:"server"`
		Tools  int            `json:"tools"`
	}{s.Source, s.Kind, s.Server, len(s.Tools)})
}
