package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/write"
)

const verifyUsage = `usage: mcpeffect verify -examples FILE [-format text|json|sarif|markdown|justification] [-timeout d] [-parallel n] [-sqlite-reader PATH] -- command [args...]
       mcpeffect verify -examples FILE [-format text|json|sarif|markdown|justification] [-timeout d] [-sqlite-reader PATH] -url URL [-header "Name: value"]...`

func verifyCommand() *command {
	return &command{
		name:    "verify",
		summary: "prove the hints of any MCP server's tools by calling them",
		run:     runVerify,
		help:    verifyHelp,
	}
}

func verifyHelp(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", verifyUsage)
	fmt.Fprint(w, verifyHelpText)
	fs, _ := verifyFlags()
	fs.SetOutput(w)
	fs.PrintDefaults()
}

const verifyHelpText = `Verify proves, from outside, that the hints each tool of an MCP server
advertises (readOnlyHint, destructiveHint, idempotentHint) are true, by
the rules mcpeffecttest.Verify holds Go servers to, with the same engine.
For each example of the examples file it starts a fresh instance of the
server, in a new temporary directory that replaces {dir} in the server's
command line and environment (or, for a server given by -url, runs the
file's reset command), makes the example's fixtures through the server's
own tools, captures the state, calls the tool, captures the state, calls it
again with the same arguments, and captures the state a third time. What
each call changed must fit the tool's hints:

  read (readOnlyHint true)  the state is exactly the same after each call
  not destructive           every value that existed is still there,
    (destructiveHint false) unchanged: it only adds records, and values in
                            empty fields
  destructive               anything else: a value changed, a record removed
  idempotent                the repeat changes nothing
    (idempotentHint true)

A hint left out takes the value the specification gives it: a tool with no
hints is a destructive write that is not idempotent.

Each tool is then proven, a lie (a call did what its hints say it does not:
the report names the record and field, with the values before and after,
escaped), over-cautious (its hints claim more than any example showed: a
write that changed nothing, a destructive write that destroyed nothing, a
write not idempotent whose repeat changed nothing; hosts ask people for
nothing), failed (an example could not run as written) or not examined.

THE EXAMPLES FILE is JSON; its JSON Schema is verify-examples.schema.json in
cmd/mcpeffect of the mcpeffect repository. Its members:

  state         where the state is, one or more of:
                  "dir": "{dir}/root"    a directory tree: a record for each
                      path, with its kind, mode, and contents (as text, or
                      base64, or past 1 MiB its size and SHA-256), and a
                      link's target; links are never followed, special
                      files never opened
                  "sqlite": "{dir}/db"   a SQLite database: a record for
                      each row of every table, keyed table/primary key, read
                      by the command mcpeffect-sqlite (see -sqlite-reader;
                      go install ./cmd/mcpeffect ./cmd/mcpeffect-sqlite in a
                      clone of mcpeffect installs it beside mcpeffect)
                  "json": {"file": F, "lines": true, "at": "/ptr",
                      "key": ["/name"]}  a JSON document or JSON Lines: a
                      record for each member of the collection at the
                      pointer "at", keyed by the values at the "key"
                      pointers, or by its own JSON pointer
                  "command": [ARGS]      a command that prints the state
                      as a JSON object of records, each an object of fields
                with more than one, each record's key begins with its
                source's name and a colon ("sqlite:tasks/1", "dir:a.md");
                and "leaveOut": [{"record": "task/*", "field": "updated_at",
                "reason": "..."}], the bookkeeping left out, each with its
                reason (a reason is required); and "flags": [{"record":
                "tasks/*", "field": "deleted_at", "flag": "deleted",
                "reason": "..."}], fields whose empty value is a value users
                see ("not deleted"): each record matched also shows the
                flag, true when the field is set, false when it is empty or
                absent, so that setting it is a change, not a value added
  examples      [{"tool": T, "name": N, "fixtures": [...], "args": {...},
                "caller": C, "wantError": TEXT}]: at least one a tool. A
                fixture is {"tool", "args", "caller", "save": {"id":
                "/id"}}: a call made first, whose result's value at the
                JSON pointer (in its structured content, or its text read as
                JSON; "#text" for the text itself) later arguments use as
                {id}. wantError says the call must fail with an error
                holding that text and change nothing. For a tool whose
                effect depends on its arguments (it publishes its outcomes
                in _meta "io.github.mcpeffect/outcomes"), each call is held
                to the outcome its arguments select, as well as to the
                hints, and each outcome must show what it claims; "effect":
                "write|idempotent" says the outcome of a call whose
                arguments do not select one, as in the general form.
                "undo": true checks the undo the tool publishes (SEP-3172,
                annotations.recovery or _meta
                "io.github.mcpeffect/recovery"): on another fresh instance,
                the fixtures made again, verify captures the state, makes
                the call, binds the undo's arguments from the call's
                arguments and result, calls the undo as the same caller,
                and holds the state to the one before the call, with the
                same leaveOut and flags; an undo that leaves anything
                changed is a lie, naming each record and field. The call
                must succeed and change something: not with wantError.
  callers       {"name": {"env": {...}, "headers": {...}}}: who calls; a
                caller's env starts another process of the server, on the
                same {dir}; "default" makes calls that name no caller
  confirm       true: accept every question the server asks by a form
                elicitation (a confirmation before a destructive call), as
                a person who confirms each; without it, verify says it
                cannot be asked, and such calls are refused
  env           added to the server command's environment
  reset         a command run before each example, for -url
  overcautious  {"tool": "reason"}: claims waived, each with a reason
  skip          {"tool": "reason"}: tools not examined, each with a reason
  resultErrors  [{"tools": "*", "at": "/success", "equals": false,
                "message": "/error"}]: how to read a failure a tool reports
                in its result alone, without isError: a result whose value
                at the pointer "at" (in its structured content, or its text
                read as JSON) equals "equals" is a tool error, its text the
                value at "message" or the result's text; "tools" matches
                tool names with *. It holds for examples and fixtures alike

In every string, {dir} is the example's directory, {NAME} a value a fixture
saved, and {env:NAME} a variable of verify's own environment (a token, say).
A string that is a placeholder alone takes the value's own type.

Each kind of state leaves out by itself what is the system's rather than the
data (times, owners, inodes of files; SQLite's own sqlite_* tables); the
report lists all that was left out, with the reasons.

-timeout bounds the whole run, each capture of the state included. What
verify reads is bounded too: one message of the server of at most 16 MiB
and 2000000 JSON values;
one capture of the state of at most 16 MiB held (a JSON file, a command's
output, a tree's contents), 1000000 values once decoded (each member's name
counted as one) and 200000 records; a tree's files read up to 256 MiB. Past
a bound of the state, verify stops and names the source and the bound.

-format says how the report is written: text for people; json, one object;
sarif, a SARIF 2.1.0 log of the tools not proven, each result at its tool's
first example in the examples file (or in the file -location names);
markdown, for a pull-request comment; justification, in Markdown, for each
tool and each hint, the justification an app directory asks for, drawn
from what the examples showed: the records and fields a call changed, or
that none changed anything. Every format shows what each call changed.

When standard error is a terminal, verify draws its progress there on one
line: the tools done of all, those running, the time so far; erased before
the report. To a file or a pipe it writes none.

The exit status is 0 when every tool examined is proven, 1 when any is not
or a tool has no example, and 2 when verify could not run: a bad examples
file, a server that cannot be started or listed, a state past its bounds,
no SQLite reader for a SQLite state.

Flags:
`

type verifyOptions struct {
	examples string
	output   outputFlags
	server   targetFlags
	sqlite   string
	parallel int
}

func verifyFlags() (*flag.FlagSet, *verifyOptions) {
	o := &verifyOptions{}
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.StringVar(&o.examples, "examples", "", "the examples `FILE`")
	o.output.register(fs, "report", "the examples file, each result at its tool's first example", write.FormatJustification)
	o.server.register(fs, "verify", 5*time.Minute)
	fs.IntVar(&o.parallel, "parallel", 1, "verify `n` tools at once, each example on an instance of its own (a command only)")
	fs.StringVar(&o.sqlite, "sqlite-reader", "", "the `PATH` of mcpeffect-sqlite, which reads a SQLite state (default: beside mcpeffect, or on $PATH)")
	return fs, o
}

func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, o := verifyFlags()
	bad := func(msg string) int { return badUsage(stderr, "verify", verifyUsage, msg) }
	if code, done := parseFlags(fs, args, "verify", verifyUsage, verifyHelp, stdout, stderr); done {
		return code
	}
	if o.examples == "" {
		return bad("no examples: give -examples FILE")
	}
	target, msg := o.server.target(fs.Args())
	if msg != "" {
		return bad(msg)
	}
	f, err := verify.ReadFile(o.examples)
	if err != nil {
		fmt.Fprintf(stderr, "mcpeffect verify: %v\n", err)
		return exitError
	}
	if o.parallel < 1 {
		return bad(fmt.Sprintf("-parallel %d: want 1 or more", o.parallel))
	}
	opts := verify.Options{Target: target, SQLiteReader: sqliteReader(o.sqlite), Parallel: o.parallel}
	if target.Timeout > 0 {
		// The run's deadline, which bounds the sessions too.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, target.Timeout)
		defer cancel()
	}
	opts.Progress = startProgress(stderr, "mcpeffect verify")
	report, err := verify.Run(ctx, f, opts)
	opts.Progress.Stop()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			fmt.Fprintf(stderr, "mcpeffect verify: no end within %v (-timeout): %v\n", target.Timeout, err)
		} else {
			fmt.Fprintf(stderr, "mcpeffect verify: %v\n", err)
		}
		return exitError
	}
	switch o.output.format {
	case write.FormatJSON:
		err = write.JSON(stdout, report)
	case write.FormatSARIF:
		// The results point at the examples file, each at its tool's
		// first example, unless -location names another file.
		loc := write.SARIFLocation{URI: o.output.location}
		if loc.URI == "" {
			loc = write.SARIFLocation{URI: repositoryPath(o.examples), Line: f.ExampleLine}
		}
		err = write.VerifySARIF(stdout, report, loc, version())
	case write.FormatMarkdown:
		err = write.VerifyMarkdown(stdout, report)
	case write.FormatJustification:
		err = write.Justification(stdout, report)
	default:
		err = write.VerifyText(stdout, report)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpeffect verify: writing the report: %v\n", err)
		return exitError
	}
	if report.Failing() {
		return exitFindings
	}
	return exitOK
}

// repositoryPath returns path as a SARIF reader finds it in the
// repository verify runs in: relative to the working directory when it
// is inside it, as it is given otherwise.
func repositoryPath(path string) string {
	if !filepath.IsAbs(path) {
		return filepath.ToSlash(filepath.Clean(path))
	}
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(rel)
}

// sqliteReader returns the command that reads a SQLite state: path if
// given, else mcpeffect-sqlite beside this program, else on $PATH; nil if
// there is none.
func sqliteReader(path string) []string {
	if path != "" {
		return []string{path}
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "mcpeffect-sqlite")
		if _, err := os.Stat(p); err == nil {
			return []string{p}
		}
	}
	if p, err := exec.LookPath("mcpeffect-sqlite"); err == nil {
		return []string{p}
	}
	return nil
}
