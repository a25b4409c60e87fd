package progress

import (
	"io"
	"os"
)

// IsTerminal reports whether w is a terminal: a file that the system
// takes for one, as a person's shell window is, and /dev/null, a pipe or
// a file are not; or a writer that says whether it is one, with a method
// IsTerminal() bool, such as one that writes to a terminal through
// another.
func IsTerminal(w io.Writer) bool {
	switch w := w.(type) {
	case interface{ IsTerminal() bool }:
		return w.IsTerminal()
	case *os.File:
		return isTerminal(w.Fd())
	}
	return false
}
