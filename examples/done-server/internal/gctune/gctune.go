// Package gctune sets the garbage collector of a serving process for
// Done's load, unless the environment sets it: see the README beside this
// file for why, and where upstream would make it unneeded.
package gctune

import "runtime/debug"

// The settings of a serving process.
const (
	// Percent is the GOGC of a serving process: the heap may grow to five
	// times what is live before the collector runs.
	Percent = 400
	// MemoryLimit is its GOMEMLIMIT: near it, the collector runs as often
	// as it must to stay under. It counts the Go heap only, not what
	// modernc.org/sqlite allocates outside it (its page caches).
	MemoryLimit = 256 << 20
)

// Tune sets the collector of a serving process, unless getenv says that
// the environment sets it (GOGC, GOMEMLIMIT), and returns what restores
// the settings it found.
//
// go-sdk allocates much per call, most of it garbage at once, and with
// the default GOGC of 100 the collector runs often under load: a larger
// GOGC trades memory for it, and the memory limit keeps that bounded.
func Tune(getenv func(string) string) (restore func()) {
	var undo []func()
	if getenv("GOGC") == "" {
		old := debug.SetGCPercent(Percent)
		undo = append(undo, func() { debug.SetGCPercent(old) })
	}
	if getenv("GOMEMLIMIT") == "" {
		old := debug.SetMemoryLimit(MemoryLimit)
		undo = append(undo, func() { debug.SetMemoryLimit(old) })
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}
