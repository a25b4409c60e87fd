//go:build !linux

package main

import (
	"errors"
	"runtime"
	"time"
)

// clockTick is the unit of /proc/PID/stat's CPU times, on Linux.
const clockTick = 10 * time.Millisecond

// cpuClock is how this system reads the CPU time of another process.
const cpuClock = ""

var errNoCPU = errors.New("the CPU time of another process is read on Linux only, not on " + runtime.GOOS)

// processCPU returns an error: elsewhere than on Linux, percall reports
// the client's wall time a call.
func processCPU(int) (time.Duration, error) { return 0, errNoCPU }

// statCPU returns an error, as processCPU.
func statCPU(int) (time.Duration, error) { return 0, errNoCPU }
