package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// The exit codes of every command.
const (
	exitOK       = 0 // done, and nothing to report at the level asked
	exitFindings = 1 // done, with findings at the level asked
	exitError    = 2 // could not run, or bad usage
)

// A command is one subcommand of mcpeffect.
type command struct {
	name    string
	summary string // one line for the list of commands
	// run runs the command with the arguments that follow its name, and
	// returns the exit code.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
	// help writes the command's full help.
	help func(w io.Writer)
}

// commands returns every command, in the order help lists them.
func commands() []*command {
	return []*command{auditCommand(), diffCommand(), verifyCommand(), policyCommand(), manifestCommand()}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command line args (without the program name) and returns
// the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitError
	}
	name, args := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) == 0 {
			usage(stdout)
			return exitOK
		}
		if len(args) > 1 {
			fmt.Fprintf(stderr, "mcpeffect help: too many arguments; usage: mcpeffect help [command]\n")
			return exitError
		}
		if args[0] == "hosts" {
			hostsHelp(stdout)
			return exitOK
		}
		c := lookup(args[0])
		if c == nil {
			fmt.Fprintf(stderr, "mcpeffect help: unknown command %q; run 'mcpeffect help' for the list\n", args[0])
			return exitError
		}
		c.help(stdout)
		return exitOK
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(stderr, "mcpeffect: unknown command %q; run 'mcpeffect help' for the list\n", name)
		return exitError
	}
	return c.run(ctx, args, stdout, stderr)
}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "mcpeffect checks what MCP tools declare they do.\n\nUsage:\n\n\tmcpeffect <command> [arguments]\n\nThe commands are:\n\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "\t%-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'mcpeffect help <command>' for more about a command,\nand 'mcpeffect help hosts' for the host and directory profiles.\n")
}

// badUsage reports msg, a mistake in how the command called name was
// called, with usage, the command's usage lines, if not "", and where its
// help is; it returns exitError.
func badUsage(stderr io.Writer, name, usage, msg string) int {
	if usage != "" {
		msg += "\n" + usage
	}
	fmt.Fprintf(stderr, "mcpeffect %s: %s\nRun 'mcpeffect help %s' for details.\n", name, msg, name)
	return exitError
}

// failed reports an error of the command called name that is not one of
// its usage; it returns exitError.
func failed(stderr io.Writer, name, format string, a ...any) int {
	fmt.Fprintf(stderr, "mcpeffect %s: %s\n", name, fmt.Sprintf(format, a...))
	return exitError
}

// parseFlags parses args with fs, whose own output is discarded: -help
// writes help on stdout and ends the command (done, with exitOK); an
// error is a bad usage of the command called name, reported with usage
// (done, with exitError).
func parseFlags(fs *flag.FlagSet, args []string, name, usage string, help func(io.Writer), stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return exitOK, false
	case errors.Is(err, flag.ErrHelp):
		help(stdout)
		return exitOK, true
	}
	return badUsage(stderr, name, usage, err.Error()), true
}
