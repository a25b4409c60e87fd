package main

import (
	"os"
	"syscall"
)

// maxRSS returns the maximum resident set of the process that ended with
// state, in bytes: Linux gives it in kilobytes.
func maxRSS(state *os.ProcessState) int64 {
	if ru, ok := state.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return -1
}
