package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/write"
)

const diffUsage = `usage: mcpeffect diff [-format text|json|sarif|markdown] [-header "Name: value"]... [-timeout d] OLD NEW
       mcpeffect diff [-format text|json|sarif|markdown] [-header "Name: value"]... [-timeout d] OLD -- command [args...]`

func diffCommand() *command {
	return &command{
		name:    "diff",
		summary: "compare the tools of two versions of a server; fail if one may do more",
		run:     runDiff,
		help:    diffHelp,
	}
}

func diffHelp(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", diffUsage)
	fmt.Fprint(w, `Diff compares the tools of two versions of an MCP server, and reports the
tools added and removed, and for each tool in both, every change to what it
may do as hosts that assume the worst case for a missing hint see it:

  widened   read-to-write, now-destructive, now-non-idempotent, now-open-world,
            hint-removed (a hint is gone, and its worst case is wider)
  narrowed  write-to-read, no-longer-destructive, now-idempotent,
            now-closed-world
  changed   hint-changed (the same for the worst case, but a host reads the
            missing hint its own way), title-changed, description-changed
            (a changed description can tell a model to do something else);
            recovery-added, recovery-changed, recovery-removed (the undo a
            tool publishes, SEP-3172); and, for the server as a whole,
            idempotency-declared, idempotency-withdrawn (its
            capabilities.tools.idempotency, SEP-3182), where both sides have
            them: a live server, or a report of an audit that read them (a
            manifest has neither)

A tool whose effect depends on its arguments is also compared outcome by
outcome, where both sides have its outcomes (a manifest lists them; a report
or a live server has those the server publishes, as servers built with
mcpeffect do). An outcome in both, the same value of the same argument, is
compared as a tool is: action="get" that becomes a write widens, even when
the tool's hints, its worst case, are the same. And:

  outcome-added             widened if it may do more, on some axis, than
                            every outcome before it (a write among reads);
                            changed otherwise
  outcome-removed           narrowed if it did more than every outcome left;
                            changed otherwise
  outcome-argument-changed  changed: another argument selects the outcomes,
                            which are then compared by their effects alone
  outcomes-unlisted         changed: the new side does not list them

Each of OLD and NEW is one of:

  a file     the JSON of 'mcpeffect audit -json', or the manifest of an
             mcpeffect Registry (manifest.Of, WriteJSON); - reads it
             from standard input
  a URL      http:// or https://: a Streamable HTTP server, listed now, with
             the -header flags
  a command  NEW only, after --: a server run over stdio, listed now

A manifest is read by each tool's four hints, or its effect if it has none:
what hosts are told before a call; and by its outcomes. Fields diff does not
know are ignored.
Descriptions are compared only where both sides have them (a manifest has
none). -timeout bounds the listing of each live side.

-format says how the diff is written: text for people; json, one object
(-json is the same); sarif, a SARIF 2.1.0 log with a result for each
change (a widening is an error), located as audit locates its findings
(-location); markdown, for a pull-request comment: one line for each tool
that changed, widened tools first, with its effect before and after and
the kinds of its changes.

The exit status is 0 when no tool may do more than before, 1 when one may
(narrowing, additions, removals and other changes are reported, and do not
fail), and 2 when the diff could not run.

Flags:
`)
	fs, _ := diffFlags()
	fs.SetOutput(w)
	fs.PrintDefaults()
}

type diffOptions struct {
	output  outputFlags
	header  headerFlag
	timeout time.Duration
}

func diffFlags() (*flag.FlagSet, *diffOptions) {
	o := &diffOptions{header: headerFlag{}}
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	o.output.register(fs, "diff", "the new side's command, URL or file")
	fs.Var(o.header, "header", "add the header `\"Name: value\"` to every HTTP request of a URL side (repeatable)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up listing a live side after this `duration`; 0 waits for ever")
	return fs, o
}

// maxSnapshotFile bounds the size of a file diff reads: a report of
// thousands of tools is a few megabytes.
const maxSnapshotFile = 64 << 20

func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int { return failed(stderr, "diff", format, a...) }
	bad := func(msg string) int { return badUsage(stderr, "diff", diffUsage, msg) }

	// The command of a live NEW side is everything after the first --,
	// which the flag package would otherwise take for its own.
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i+1:]
		if len(command) == 0 {
			return bad("no command after --")
		}
	}
	fs, o := diffFlags()
	var sides []string
	for {
		// Flags may come before, between or after the sides.
		if code, done := parseFlags(fs, args, "diff", diffUsage, diffHelp, stdout, stderr); done {
			return code
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		sides, args = append(sides, args[0]), args[1:]
	}
	switch want := 2 - min(len(command), 1); {
	case len(sides) != want && command != nil:
		return bad(fmt.Sprintf("give one side before --, the old one; got %d", len(sides)))
	case len(sides) != want:
		return bad(fmt.Sprintf("give two sides, OLD and NEW; got %d", len(sides)))
	}
	if o.timeout < 0 {
		return bad(fmt.Sprintf("-timeout %v is negative", o.timeout))
	}
	if len(o.header) > 0 && !slices.ContainsFunc(sides, isURL) {
		return bad("-header needs a side that is an http:// or https:// URL")
	}
	if slices.Equal(sides, []string{"-", "-"}) {
		return bad("only one side can be read from standard input")
	}

	var snaps []audit.Snapshot
	for _, side := range sides {
		s, err := o.snapshot(ctx, side, nil)
		if err != nil {
			return fail("%v", err)
		}
		snaps = append(snaps, s)
	}
	if command != nil {
		s, err := o.snapshot(ctx, "", command)
		if err != nil {
			return fail("%v", err)
		}
		snaps = append(snaps, s)
	}

	d := audit.Diff(snaps[0], snaps[1])
	var err error
	switch o.output.format {
	case write.FormatJSON:
		err = write.JSON(stdout, d)
	case write.FormatSARIF:
		err = write.DiffSARIF(stdout, d, o.output.locationOr(d.New.Source), version())
	case write.FormatMarkdown:
		err = write.DiffMarkdown(stdout, d)
	default:
		err = write.DiffText(stdout, d, useColor(stdout))
	}
	if err != nil {
		return fail("writing the diff: %v", err)
	}
	if d.Widened() {
		return exitFindings
	}
	return exitOK
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// snapshot reads one side: a file, standard input, a URL, or, with
// command, a server run over stdio.
func (o *diffOptions) snapshot(ctx context.Context, side string, command []string) (audit.Snapshot, error) {
	if command != nil || isURL(side) {
		t := connect.Target{Command: command, Header: http.Header(o.header), Timeout: o.timeout}
		if command == nil {
			if err := checkURL(side); err != nil {
				return audit.Snapshot{}, err
			}
			t.URL = side
		}
		server, tools, err := t.List(ctx)
		if err != nil {
			return audit.Snapshot{}, fmt.Errorf("%s: %w", t, err)
		}
		r, err := audit.Review(server, tools, nil)
		if err != nil {
			return audit.Snapshot{}, fmt.Errorf("%s: %w", t, err)
		}
		for _, f := range r.Findings {
			if f.Rule == audit.RuleDuplicateName {
				// Which of the two to compare cannot be known, as a
				// file that lists a tool twice is refused.
				return audit.Snapshot{}, fmt.Errorf("%s: tool %s is listed twice: audit it to see both", t, strconv.Quote(f.Tool))
			}
		}
		return audit.SnapshotOf(r, t.String(), "live"), nil
	}
	var (
		data []byte
		err  error
	)
	if side == "-" {
		data, err = readAtMost(os.Stdin, maxSnapshotFile)
		side = "standard input"
	} else {
		data, err = readFile(side)
	}
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err // the path is said once, below
	}
	if err != nil {
		return audit.Snapshot{}, fmt.Errorf("%s: %w", side, err)
	}
	return audit.ReadSnapshot(data, side)
}

// readFile reads the regular file at path: a directory, a device or a
// named pipe, which could hold the diff for ever, is refused.
func readFile(path string) ([]byte, error) {
	// Opening a named pipe blocks until a writer opens it: look first.
	if err := checkRegular(os.Stat(path)); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// What was opened may not be what was looked at.
	if err := checkRegular(f.Stat()); err != nil {
		return nil, err
	}
	return readAtMost(f, maxSnapshotFile)
}

func checkRegular(fi os.FileInfo, err error) error {
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	return nil
}

// readAtMost reads r to its end, or fails if it holds more than n bytes.
func readAtMost(r io.Reader, n int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, n+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > n {
		return nil, fmt.Errorf("more than %d MiB: not a report or a manifest", n>>20)
	}
	return data, nil
}
