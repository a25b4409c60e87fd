package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/progress"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/write"
)

const auditUsage = `usage: mcpeffect audit [-format text|json|sarif|markdown] [-host NAME,...|all] [-profile NAME,...|all] [-fail-on warning|error] [-timeout d] -- command [args...]
       mcpeffect audit [-format text|json|sarif|markdown] [-host NAME,...|all] [-profile NAME,...|all] [-fail-on warning|error] [-timeout d] -url URL [-header "Name: value"]...`

func auditCommand() *command {
	return &command{
		name:    "audit",
		summary: "check the tool annotations of any MCP server",
		run:     runAudit,
		help:    auditHelp,
	}
}

func auditHelp(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", auditUsage)
	fmt.Fprint(w, `Audit connects to an MCP server, lists all its tools, and reports for each
the four hints it declares (readOnlyHint, destructiveHint, idempotentHint,
openWorldHint), the value hosts must assume for each hint left out, the
effect the hints amount to, and findings:

`)
	for _, r := range audit.Rules() {
		fmt.Fprintf(w, "  %-8s %-28s %s\n", r.Level(), r, r.Summary())
	}
	fmt.Fprint(w, `
Every word of a name is read, words being separated by _ - . (any character
that is neither a letter nor a digit) or a change of case: kubectl_delete,
API-delete-a-block, deleteRepo and repo.remove all delete. A tool without any
hint gets the no-annotations error and no other finding. A read's
destructiveHint and idempotentHint, which the specification reads only for
writes, are shown as n/a when missing.

A tool whose effect depends on its arguments may publish the outcome of
each kind of call in its _meta (a server built with mcpeffect does, under
"io.github.mcpeffect/outcomes"): by the value of one argument, such as
action="get", or as the effects its calls may have. Each outcome is shown,
indented under its tool, with its hints and effect, and with -host what the
host does with its calls: what it does with the tool, since hosts decide
from the tool's hints, the worst case. The outcomes are the server's claim,
shown and checked, trusted for nothing else: one that may do more than the
tool's hints say is an error (the server contradicts itself, and hosts would
not ask as they should); outcomes that cannot be read, a warning. A tool the
server marks resolvable (the experimental tool-resolution extension) is
named: a host could ask for the hints of one call before making it.

A tool may publish its undo (SEP-3172): the tool whose call undoes a call of
it, with each argument bound from the call's arguments ($request.body#/ptr)
or its result's structured content ($response.body#/ptr). The draft puts it
in annotations.recovery; servers built with mcpeffect put it in _meta
"io.github.mcpeffect/recovery", which SDKs carry. Each undo is shown, in a
table of its own, and checked against the tools the server lists and their
schemas (the recovery-* rules): an undo that names no listed tool, that is a
read, of a tool that is a read, or whose parameters the schemas cannot
bind. An undo of a write that is not destructive is no fault (create_task
undone by delete_task). Whether the server declares
capabilities.tools.idempotency (SEP-3182: a call with an idempotency key
runs at most once) is said under the summary when it does, and is in the
JSON's summary always.

-host says what hosts do with each tool before a call, from its hints: run
it without asking, ask first, ask every time whatever was approved before,
refuse it, leave it to a model, or leave it to their own settings (hosts
that ignore hints); and whether a person reviews its output before the
model reads it. A host's modes are profiles of their own; each profile
names its source and the date it was read, as hosts change. The hosts are:

  `+strings.Join(audit.HostNames(), ", ")+`

-profile checks each tool against the rules by which an app directory
reviews servers, as far as a tool list shows them: claude-directory,
chatgpt-directory. A rule the directory documents as a reason to reject
is an error. 'mcpeffect help hosts' lists every profile and rule with its
source, date and confidence, and what cannot be checked.

The server is a command run over stdio, given after the flags (after --,
so that its own flags are not read as audit's), which inherits the
environment and whose standard error is kept, its last lines shown if the
audit fails; or the Streamable HTTP endpoint given with -url. -timeout
bounds everything, the server's shutdown included: when the time is up, a
server run as a command is killed, with the processes it started. What is
read is bounded too: one message of at most 16 MiB (a line over stdio, an
HTTP answer whole) and 2000000 JSON values, 10000 tools, 1000 pages; past a
limit, the audit fails and names it.

-format says how the report is written: text for people; json, one object
(-json is the same); sarif, a SARIF 2.1.0 log of the findings for GitHub
code scanning and other SARIF readers, each result located at the file that
-location names (the file where the server adds its tools, relative to the
root of the repository), line 1, and at the tool; markdown, the findings as
a table, for a pull-request comment or a job summary.

When standard error is a terminal, the audit draws its progress there on
one line (starting the server, listing tools: so many so far, the time so
far), erased before the report; to a file or a pipe it writes none.

The exit status is 0 when there is no finding at the level of -fail-on or
worse, 1 when there is, and 2 when the audit could not run.

Flags:
`)
	fs, _ := auditFlags()
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// auditOptions holds the flags of the audit command.
type auditOptions struct {
	output outputFlags
	hosts  profileFlag[audit.HostProfile]
	dirs   profileFlag[audit.DirectoryProfile]
	failOn audit.Level
	server targetFlags
}

func auditFlags() (*flag.FlagSet, *auditOptions) {
	o := &auditOptions{}
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	o.output.register(fs, "report", "the server's command or URL")
	o.hosts.parse, o.dirs.parse = audit.SelectHosts, audit.SelectDirectories
	fs.Var(&o.hosts, "host", "say what the hosts `NAME,...` (or all) do with each tool")
	fs.Var(&o.dirs, "profile", "check the tools against the directory rules of `NAME,...` (or all): claude-directory, chatgpt-directory")
	fs.TextVar(&o.failOn, "fail-on", audit.Error, "exit 1 on findings of this `level` or worse: warning or error")
	o.server.register(fs, "audit", 30*time.Second)
	return fs, o
}

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, o := auditFlags()
	if code, done := parseFlags(fs, args, "audit", auditUsage, auditHelp, stdout, stderr); done {
		return code
	}
	target, msg := o.server.target(fs.Args())
	if msg != "" {
		return badUsage(stderr, "audit", auditUsage, msg)
	}
	meter := startProgress(stderr, "mcpeffect audit")
	target.Progress = meter.Note
	server, tools, err := target.List(ctx)
	meter.Stop()
	if err != nil {
		fmt.Fprintf(stderr, "mcpeffect audit: %s: %v\n", target, err)
		return exitError
	}
	report, err := audit.Review(server, tools, &audit.Options{Hosts: o.hosts.profiles, Directories: o.dirs.profiles})
	if err != nil {
		fmt.Fprintf(stderr, "mcpeffect audit: %s: %v\n", target, err)
		return exitError
	}

	switch o.output.format {
	case write.FormatJSON:
		err = write.JSON(stdout, report)
	case write.FormatSARIF:
		err = write.AuditSARIF(stdout, report, o.output.locationOr(target.String()), version())
	case write.FormatMarkdown:
		err = write.AuditMarkdown(stdout, report)
	default:
		err = write.AuditText(stdout, report, useColor(stdout))
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpeffect audit: writing the report: %v\n", err)
		return exitError
	}
	if w := report.Worst(); w != 0 && w >= o.failOn {
		return exitFindings
	}
	return exitOK
}

// A profileFlag is a flag that names profiles, separated by commas; it
// may be given more than once.
type profileFlag[P any] struct {
	names    []string
	profiles []P
	parse    func(string) ([]P, error)
}

func (f *profileFlag[P]) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.names, ",")
}

func (f *profileFlag[P]) Set(s string) error {
	f.names = append(f.names, s)
	p, err := f.parse(strings.Join(f.names, ","))
	if err != nil {
		return err
	}
	f.profiles = p
	return nil
}

// useColor reports whether output to w may be coloured: w is a terminal,
// NO_COLOR (https://no-color.org) is unset or empty, and TERM is not dumb.
func useColor(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	// A character device is not enough: /dev/null is one.
	return progress.IsTerminal(w)
}
