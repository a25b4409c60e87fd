package progress

import (
	"io"
	"os"
)

// IsTerminal reports whether w is a terminal: a file that the system
// takes for one, as a person's shell window is, and /dev/null, a pipe or
// a file are not.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f.Fd())
}
