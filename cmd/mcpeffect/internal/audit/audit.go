// Package audit checks the tool annotations of an MCP server as a careful
// host reads them: hints the server declared, hints it left out and the
// worst-case value a host must assume for them, the effect they amount to,
// and findings where the hints are missing or contradict each other or the
// tool's name.
//
// [Review] builds the report from the tools a server listed (package
// connect lists them), and holds every rule; [Diff] compares two
// versions of a server, and the host and directory profiles say what
// hosts and app directories do with each tool.
package audit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/host"
)

// A Level is how serious a [Finding] is.
type Level uint8

// The levels, from least to most serious.
const (
	// Warning is a hint left out, or a name that contradicts the hints: a
	// host falls back to the worst case, or may be misled.
	Warning Level = iota + 1
	// Error is a tool no host can classify: no hints at all, or hints
	// that contradict each other.
	Error
)

// String returns "warning" or "error", the form [ParseLevel] reads.
func (l Level) String() string {
	switch l {
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// ParseLevel parses "warning" or "error", in any case.
func ParseLevel(s string) (Level, error) {
	for _, l := range []Level{Warning, Error} {
		if strings.EqualFold(s, l.String()) {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown level %q (want warning or error)", s)
}

// MarshalText implements [encoding.TextMarshaler].
func (l Level) MarshalText() ([]byte, error) {
	if l != Warning && l != Error {
		return nil, fmt.Errorf("cannot marshal invalid level %d", uint8(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseLevel].
func (l *Level) UnmarshalText(text []byte) error {
	v, err := ParseLevel(string(text))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// A Rule is one check of a tool's annotations; a [Finding] names the rule
// that a tool breaks. Each rule is checked once per tool.
type Rule string

// The rules, in the order a tool's findings are reported.
const (
	// RuleNoAnnotations: the tool declares none of the four hints, so a
	// host must treat it as a destructive, non-idempotent write on an
	// open world. A tool that breaks it gets no other finding about its
	// hints or name, as each would repeat it.
	RuleNoAnnotations Rule = "no-annotations"
	// RuleReadOnlyDestructive: readOnlyHint and destructiveHint are both
	// true, and a host cannot know which one is wrong.
	RuleReadOnlyDestructive Rule = "read-only-and-destructive"
	// RuleMissingDestructive: a write without destructiveHint.
	RuleMissingDestructive Rule = "missing-destructive-hint"
	// RuleMissingIdempotent: a write without idempotentHint.
	RuleMissingIdempotent Rule = "missing-idempotent-hint"
	// RuleMissingOpenWorld: a tool, read or write, without openWorldHint.
	RuleMissingOpenWorld Rule = "missing-open-world-hint"
	// RuleDeleteNotDestructive: a name with a word that deletes (delete,
	// remove, drop, purge, destroy, erase, wipe), wherever it stands, on a
	// tool that is not destructive.
	RuleDeleteNotDestructive Rule = "delete-name-not-destructive"
	// RuleReadNotReadOnly: a name with a word that reads (get, list,
	// search, read, find, describe) and none that changes anything (of
	// the other lists, or such as mark, archive, run, save), on a tool
	// that is not read-only.
	RuleReadNotReadOnly Rule = "read-name-not-read-only"
	// RuleWriteReadOnly: a name with a word that writes (create, update,
	// set, write, insert, add, edit, modify, rename, move, replace, upload,
	// send) on a tool that is read-only.
	RuleWriteReadOnly Rule = "write-name-read-only"
	// RuleOutcomeWider: the tool publishes the outcomes of its calls (in
	// its _meta, as a server built with mcpeffect does for a tool whose
	// effect depends on its arguments), and one of them may do more than
	// the tool's hints say: the server contradicts itself, and hosts,
	// which decide from the hints, would not ask as they should.
	RuleOutcomeWider Rule = "outcome-wider-than-hints"
	// RuleOutcomesMalformed: the tool publishes outcomes that cannot be
	// read; they are not shown. Hosts do not read them: only the audit
	// loses them.
	RuleOutcomesMalformed Rule = "outcomes-malformed"
	// RuleRecoveryMalformed: the tool publishes a recovery (SEP-3172: in
	// annotations.recovery, or in its _meta, as a server built with
	// mcpeffect does) that cannot be used: not an object of the draft's
	// shape, another strategy than compensation, a bad tool name, or a
	// parameter whose runtime expression is not $request.body# or
	// $response.body# and a JSON pointer. Hosts must take its calls as
	// not recoverable.
	RuleRecoveryMalformed Rule = "recovery-malformed"
	// RuleRecoveryOfRead: a tool whose hints say it is a read publishes
	// an undo. A read changes nothing, so there is nothing to undo: its
	// hints or its recovery are wrong, and if it is the hints, hosts run
	// a write without asking.
	RuleRecoveryOfRead Rule = "recovery-of-read"
	// RuleRecoveryUndoUnlisted: the undo a tool publishes names a tool
	// that the server does not list. A server that lists each caller
	// only the tools it may call may list it to others.
	RuleRecoveryUndoUnlisted Rule = "recovery-undo-unlisted"
	// RuleRecoveryUndoReadOnly: the undo is a tool whose hints say it is a
	// read: it changes nothing, so it cannot undo a call.
	RuleRecoveryUndoReadOnly Rule = "recovery-undo-read-only"
	// RuleRecoveryUndoUnhinted: the undo declares no readOnlyHint: it is a
	// write only by the worst case that hosts assume.
	RuleRecoveryUndoUnhinted Rule = "recovery-undo-unhinted"
	// RuleRecoveryParameters: the undo cannot be bound as published, as
	// far as the schemas tell: a parameter its input schema does not
	// have, a property it requires that nothing binds, an expression that
	// reads a member the tool's input or output schema does not have or
	// does not require, or the result of a tool without outputSchema, or
	// a value of a type the undo's parameter does not take.
	RuleRecoveryParameters Rule = "recovery-parameters"
	// RuleDuplicateName: the server lists another tool of the same name
	// before this one. A call names its tool, so it reaches one of them,
	// and a host cannot know which, nor which hints to go by. The finding
	// is on each tool after the first of its name.
	RuleDuplicateName Rule = "duplicate-name"
)

// Rules returns every rule of the audit itself, in the order a tool's
// findings are reported; the rules of directory profiles are in
// [DirectoryProfiles].
func Rules() []Rule {
	return []Rule{
		RuleNoAnnotations,
		RuleReadOnlyDestructive,
		RuleMissingDestructive,
		RuleMissingIdempotent,
		RuleMissingOpenWorld,
		RuleDeleteNotDestructive,
		RuleReadNotReadOnly,
		RuleWriteReadOnly,
		RuleHintsNeverSet,
		RuleOutcomeWider,
		RuleOutcomesMalformed,
		RuleRecoveryMalformed,
		RuleRecoveryOfRead,
		RuleRecoveryUndoUnlisted,
		RuleRecoveryUndoReadOnly,
		RuleRecoveryUndoUnhinted,
		RuleRecoveryParameters,
		RuleDuplicateName,
	}
}

// Summary says in a few words what breaks rule r.
func (r Rule) Summary() string {
	switch r {
	case RuleNoAnnotations:
		return "none of the four hints"
	case RuleReadOnlyDestructive:
		return "readOnlyHint and destructiveHint both true"
	case RuleMissingDestructive:
		return "a write without destructiveHint"
	case RuleMissingIdempotent:
		return "a write without idempotentHint"
	case RuleMissingOpenWorld:
		return "any tool without openWorldHint"
	case RuleDeleteNotDestructive:
		return "a word such as delete or remove, not destructive"
	case RuleReadNotReadOnly:
		return "a word such as get or list and none that writes, not read-only"
	case RuleWriteReadOnly:
		return "a word such as create or update, read-only"
	case RuleHintsNeverSet:
		return "every tool of the server declaring the worst case on all four hints"
	case RuleOutcomeWider:
		return "a published outcome that may do more than the hints say"
	case RuleOutcomesMalformed:
		return "published outcomes that cannot be read"
	case RuleRecoveryMalformed:
		return "a published undo (SEP-3172) that cannot be used"
	case RuleRecoveryOfRead:
		return "a read that publishes an undo"
	case RuleRecoveryUndoUnlisted:
		return "an undo that names a tool the server does not list"
	case RuleRecoveryUndoReadOnly:
		return "an undo that is a read"
	case RuleRecoveryUndoUnhinted:
		return "an undo without readOnlyHint"
	case RuleRecoveryParameters:
		return "an undo whose parameters the schemas cannot bind"
	case RuleDuplicateName:
		return "two tools of the same name"
	}
	if d, ok := directoryRule(r); ok {
		return d.Summary
	}
	return "unknown rule"
}

// Level returns the level of the findings of rule r: [Error] for a tool no
// host can classify, or that a directory would reject, [Warning] for the
// others.
func (r Rule) Level() Level {
	switch r {
	case RuleNoAnnotations, RuleReadOnlyDestructive, RuleOutcomeWider, RuleDuplicateName, RuleRecoveryOfRead, RuleRecoveryUndoReadOnly:
		return Error
	}
	if d, ok := directoryRule(r); ok {
		return d.Level
	}
	return Warning
}

// A Report is the audit of one server.
type Report struct {
	Server   connect.Server `json:"server"`
	Tools    []Tool         `json:"tools"`
	Findings []Finding      `json:"findings"`
	Summary  Summary        `json:"summary"`
	// Hosts holds what each host profile asked for does with the tools.
	Hosts []HostReport `json:"hosts,omitempty"`
	// Directories sums up the findings of each directory profile asked
	// for; the findings themselves are among Findings.
	Directories []DirectoryReport `json:"directories,omitempty"`
}

// A Tool is one audited tool.
type Tool struct {
	Name string `json:"name"`
	// Title is the tool's title, or if it has none the title of its
	// annotations, as hosts show it.
	Title string `json:"title,omitempty"`
	// Description is the tool's description, always present in the JSON
	// so that a report without it (from before it was kept) can be told
	// from an empty one.
	Description string `json:"description"`
	// Declared holds the hints the server sent; a missing hint is nil,
	// and absent from the JSON.
	Declared host.Declared `json:"declared"`
	// Assumed holds the hints as a host must take them: a missing hint
	// takes its worst case, except that a read's destructiveHint and
	// idempotentHint, which the specification reads only for writes, stay
	// nil when missing: they do not apply.
	Assumed host.Declared `json:"assumed"`
	// Effect is what the hints amount to for a host.
	Effect mcpeffect.Effect `json:"effect"`
	// Outcomes are the outcomes of the tool's calls as the server
	// publishes them in the tool's _meta (see [connect.PublishedOutcome]), if it
	// does and they can be read; and Argument, in the common form, the
	// argument whose value selects the outcome. Hosts decide from the
	// hints, whatever the outcomes say.
	Argument string                     `json:"argument,omitempty"`
	Outcomes []connect.PublishedOutcome `json:"outcomes,omitempty"`
	// Resolvable says that the server marks the tool resolvable, with the
	// experimental tool-resolution extension: a host could ask for the
	// hints of one call before making it.
	Resolvable bool `json:"resolvable,omitempty"`
	// Recovery is the undo the tool publishes (SEP-3172), if it does and
	// it can be used: the tool whose call undoes a call of this one, with
	// each argument bound from the original call. RecoveryIn is where it
	// was read: "annotations.recovery", where the draft puts it, or the
	// tool's _meta, where servers built with mcpeffect put it (neither
	// SDK can carry the draft's member). It is the server's claim, as the
	// hints are.
	Recovery   *mcpeffect.Recovery `json:"recovery,omitempty"`
	RecoveryIn string              `json:"recoveryIn,omitempty"`
}

// A Finding is one rule that one tool breaks.
type Finding struct {
	Tool  string `json:"tool"`
	Level Level  `json:"level"`
	Rule  Rule   `json:"rule"`
	// Message says in plain words what is wrong, and what hosts do
	// about it.
	Message string `json:"message"`
}

// Summary counts the tools by the effect their hints amount to, and the
// findings by level. Destructive and Idempotent count writes only; reads
// change nothing and are idempotent by nature.
type Summary struct {
	Tools       int `json:"tools"`
	Reads       int `json:"reads"`
	Writes      int `json:"writes"`
	Destructive int `json:"destructive"`
	Idempotent  int `json:"idempotent"`
	OpenWorld   int `json:"openWorld"`
	Errors      int `json:"errors"`
	Warnings    int `json:"warnings"`
	// Recoveries counts the tools that publish an undo that can be used
	// (see [Tool] Recovery).
	Recoveries int `json:"recoveries"`
	// Idempotency says that the server declares
	// capabilities.tools.idempotency (SEP-3182): a call with an
	// idempotency key runs at most once, so that a retry of a write that
	// is not idempotent, whose answer was lost, does not run it twice.
	Idempotency bool `json:"idempotency"`
}

// Worst returns the level of the most serious finding, or 0 if there is
// none.
func (r *Report) Worst() Level {
	var worst Level
	for _, f := range r.Findings {
		worst = max(worst, f.Level)
	}
	return worst
}

// Options are what [Review] checks beyond the annotations themselves.
type Options struct {
	// Hosts are the host profiles to apply to each tool: see
	// [Report.Hosts].
	Hosts []HostProfile
	// Directories are the directory profiles whose rules each tool is
	// checked against: see [Report.Directories].
	Directories []DirectoryProfile
}

// Review audits tools as server listed them, in the order given, with the
// profiles of opts, which may be nil. It fails only when a tool's
// annotations are not a JSON object or hold a hint that is neither a
// boolean nor null: a host could not read them at all. Outcomes that a
// tool publishes and that cannot be read are a finding
// ([RuleOutcomesMalformed]), not a failure: hosts do not read them.
func Review(server connect.Server, tools []connect.Listed, opts *Options) (*Report, error) {
	if opts == nil {
		opts = &Options{}
	}
	r := &Report{Server: server, Tools: []Tool{}, Findings: []Finding{}}
	r.Summary.Idempotency = server.Idempotency
	first := map[string]Tool{} // the first tool of each name
	neverSet := hintsNeverSet(tools)
	listed := map[string]connect.Listed{} // the first tool of each name, as listed
	for _, l := range tools {
		if _, ok := listed[l.Name]; !ok {
			listed[l.Name] = l
		}
	}
	for _, l := range tools {
		declared, err := host.ParseDeclared(l.Annotations)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", l.Name, err)
		}
		t := Tool{
			Name:        l.Name,
			Title:       cmpOr(l.Title, annotationsTitle(l.Annotations)),
			Description: l.Description,
			Declared:    declared,
			Assumed:     assumed(declared),
			Effect:      declared.Effect(),
		}
		var published error
		t.Argument, t.Outcomes, t.Resolvable, published = l.Published()
		rec, in, recFindings := recoveryChecks(t, l, listed)
		t.Recovery, t.RecoveryIn = rec, in
		if rec != nil {
			r.Summary.Recoveries++
		}
		r.Tools = append(r.Tools, t)
		r.Findings = append(r.Findings, check(t)...)
		if neverSet {
			r.Findings = append(r.Findings, neverSetFinding(t, len(tools)))
		}
		r.Findings = append(r.Findings, checkOutcomes(t, published)...)
		r.Findings = append(r.Findings, recFindings...)
		if f, ok := first[t.Name]; ok {
			r.Findings = append(r.Findings, Finding{Tool: t.Name, Level: RuleDuplicateName.Level(), Rule: RuleDuplicateName,
				Message: fmt.Sprintf("another tool of this name is listed before it (%s; this one %s): a call reaches one of them, and hosts cannot know which, nor which hints to go by", f.Effect, t.Effect)})
		} else {
			first[t.Name] = t
		}
		r.Summary.count(t.Effect)
	}
	for _, p := range opts.Directories {
		r.checkDirectory(p, tools)
	}
	r.AddHosts(opts.Hosts)
	for _, f := range r.Findings {
		switch f.Level {
		case Error:
			r.Summary.Errors++
		case Warning:
			r.Summary.Warnings++
		}
	}
	return r, nil
}

// annotationsTitle returns the title member of an annotations object, or
// "" if it has none.
func annotationsTitle(raw json.RawMessage) string {
	var a struct {
		Title string `json:"title"`
	}
	if json.Unmarshal(raw, &a) != nil {
		return ""
	}
	return a.Title
}

// assumed returns the hints a host must take h for: see [Tool].
func assumed(h host.Declared) host.Declared {
	a := h.Assumed()
	if h.Effect()&mcpeffect.Read != 0 {
		if h.Destructive == nil {
			a.Destructive = nil
		}
		if h.Idempotent == nil {
			a.Idempotent = nil
		}
	}
	return a
}

func (s *Summary) count(e mcpeffect.Effect) {
	s.Tools++
	if e&mcpeffect.Read != 0 {
		s.Reads++
	} else {
		s.Writes++
		if e&mcpeffect.Destructive == mcpeffect.Destructive {
			s.Destructive++
		}
		if e&mcpeffect.Idempotent == mcpeffect.Idempotent {
			s.Idempotent++
		}
	}
	if e&mcpeffect.OpenWorld != 0 {
		s.OpenWorld++
	}
}

// check returns the findings of one tool, in the order of [Rules].
func check(t Tool) []Finding {
	var out []Finding
	add := func(rule Rule, format string, args ...any) {
		out = append(out, Finding{Tool: t.Name, Level: rule.Level(), Rule: rule, Message: fmt.Sprintf(format, args...)})
	}
	h := t.Declared
	if h == (host.Declared{}) {
		add(RuleNoAnnotations, "declares none of the four hints: hosts must assume a destructive, non-idempotent write on an open world")
		return out
	}
	if h.Contradictory() {
		add(RuleReadOnlyDestructive, "readOnlyHint and destructiveHint are both true: hosts cannot tell which is wrong, and must treat it as a destructive write")
	}
	read := t.Effect&mcpeffect.Read != 0
	if !read {
		if h.Destructive == nil {
			add(RuleMissingDestructive, "a write without destructiveHint: hosts must assume it deletes or overwrites")
		}
		if h.Idempotent == nil {
			add(RuleMissingIdempotent, "a write without idempotentHint: hosts must assume that repeating it changes more")
		}
	}
	if h.OpenWorld == nil {
		add(RuleMissingOpenWorld, "no openWorldHint: hosts must assume it reaches outside its own data")
	}
	v := verbsOf(t.Name)
	switch {
	case v.delete != "" && t.Effect&mcpeffect.Destructive != mcpeffect.Destructive:
		add(RuleDeleteNotDestructive, "the name says %s, but %s", v.delete, describeDestructive(h))
	case v.readsOnly() && !read:
		add(RuleReadNotReadOnly, "the name says %s, but %s", v.read, describeReadOnly(h))
	case v.write != "" && read:
		add(RuleWriteReadOnly, "the name says %s, but readOnlyHint is true", v.write)
	}
	return out
}

// describeDestructive says why a tool whose name deletes is not
// destructive.
func describeDestructive(h host.Declared) string {
	if h.ReadOnly != nil && *h.ReadOnly {
		return "readOnlyHint is true"
	}
	return "destructiveHint is false"
}

// describeReadOnly says why a tool whose name reads is not read-only.
func describeReadOnly(h host.Declared) string {
	switch {
	case h.ReadOnly == nil:
		return "readOnlyHint is missing, so hosts treat it as a write"
	case h.Contradictory():
		return "destructiveHint is true as well as readOnlyHint"
	}
	return "readOnlyHint is false"
}
