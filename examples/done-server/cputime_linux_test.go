//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the CPU times in /proc: USER_HZ, 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// procStat returns the fields of /proc/pid/stat after the command's name
// (the state is field 0), or nil if the process is gone.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	// The name, in parentheses, may hold spaces and parentheses itself.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// ticks sums the fields of stat numbered from 0 at the state, as CPU time.
func ticks(stat []string, fields ...int) time.Duration {
	var n int64
	for _, f := range fields {
		if f < len(stat) {
			v, _ := strconv.ParseInt(stat[f], 10, 64)
			n += v
		}
	}
	return time.Duration(n) * clockTick
}

// processCPU returns the CPU time, user and system, that the process pid
// has used, or 0 if it is gone.
func processCPU(pid int) time.Duration {
	// utime and stime are fields 14 and 15 of proc(5), 11 and 12 here.
	return ticks(procStat(pid), 11, 12)
}

// processTreeCPU returns the CPU time of the process pid and of its
// children, those still running and those it has waited for: for
// PostgreSQL, the postmaster and its backends.
func processTreeCPU(pid int) time.Duration {
	// cutime and cstime, fields 16 and 17, are the children waited for.
	d := ticks(procStat(pid), 11, 12, 13, 14)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// ppid is field 4 of proc(5), 1 here.
		if stat := procStat(child); len(stat) > 1 && stat[1] == strconv.Itoa(pid) {
			d += ticks(stat, 11, 12)
		}
	}
	return d
}
