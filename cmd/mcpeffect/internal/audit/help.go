package audit

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

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
	case RuleRecoveryMalformed:
		fix = "Publish the recovery as SEP-3172 gives it: {\"strategy\": \"compensation\", \"compensatingOperation\": {\"operationId\": TOOL, \"parameters\": {NAME: \"$request.body#/ptr\" or \"$response.body#/ptr\"}}}."
	case RuleRecoveryOfRead:
		fix = "If the tool writes, say so in its hints; if it only reads, publish no undo."
	case RuleRecoveryUndoUnlisted:
		fix = "Name as the undo a tool the server lists, to every caller who may call the tool it undoes."
	case RuleRecoveryUndoReadOnly:
		fix = "Name as the undo the write that undoes the call, or, if the undo does write, make its hints say so."
	case RuleRecoveryUndoUnhinted:
		fix = "Declare the undo's hints, readOnlyHint false among them."
	case RuleRecoveryParameters:
		fix = "Bind every parameter the undo requires, each to a member the tool's input schema (or output schema, for $response.body) declares and requires, of a type the undo takes."
	case RuleDuplicateName:
		fix = "Give each tool a name of its own."
	}
	return strings.TrimSpace(r.Summary() + ". " + fix)
}

// printable returns s, or s as a Go quoted string if it holds a character
// that is not printable: a server's words cannot send escapes to a
// terminal.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// plural writes n nouns: "1 tool", "3 tools".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
