package main

import (
	"flag"
	"io"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/progress"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/write"
)

// outputFlags are the flags that say how a command writes its result, the
// same for every command: -format, its alias -json, and -location for
// SARIF.
type outputFlags struct {
	format   write.Format
	location string
}

// register defines the flags on fs; what names what the command writes,
// and where what the SARIF results point at when -location is not given;
// extra are the command's formats besides those of every command.
func (o *outputFlags) register(fs *flag.FlagSet, what, where string, extra ...write.Format) {
	o.format = write.FormatText
	formats := append(write.Formats(), extra...)
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	names[0] = "`" + names[0] + "`"
	list := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	fs.Func("format", "write the "+what+" as "+list+" (default text)", func(s string) error {
		f, err := write.ParseFormatOf(s, formats)
		if err == nil {
			o.format = f
		}
		return err
	})
	fs.BoolFunc("json", "the same as -format json", func(s string) error {
		on, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		if on {
			o.format = write.FormatJSON
		} else if o.format == write.FormatJSON {
			o.format = write.FormatText
		}
		return nil
	})
	fs.StringVar(&o.location, "location", "", "with -format sarif, the `file` its results point at, relative to the repository's root (default: "+where+")")
}

// locationOr returns -location, or def if it was not given.
func (o *outputFlags) locationOr(def string) string {
	if o.location != "" {
		return o.location
	}
	return def
}

// version returns the version of mcpeffect, as the Go toolchain stamped
// it, or "devel".
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// startProgress returns a meter of the progress of the command called
// name, drawn on stderr if it is a terminal (see progress.IsTerminal);
// nil, which draws nothing, otherwise: a log or a pipe gets no progress.
func startProgress(stderr io.Writer, name string) *progress.Meter {
	if !progress.IsTerminal(stderr) {
		return nil
	}
	return progress.New(stderr, name)
}
