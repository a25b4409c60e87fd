package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// cpuClock is how this system reads the CPU time of another process.
const cpuClock = "the process's CPU clock, all threads (clock_gettime)"

// processCPU returns the CPU time, user and system, that the process pid
// has used in all its threads, those that ended included, in
// nanoseconds: the clock that clock_getcpuclockid(3) names for pid.
func processCPU(pid int) (time.Duration, error) {
	// The clock of a process, as the kernel encodes it
	// (include/linux/posix-timers.h): the pid's complement shifted by 3,
	// CPUCLOCK_SCHED (2), and no CPUCLOCK_PERTHREAD_MASK (4).
	// A pid of 0 would be this process, and one of 2^29 or more does not
	// fit the clock's 32 bits (Linux's pids stop at 2^22).
	if pid <= 0 || pid >= 1<<29 {
		return 0, fmt.Errorf("no CPU clock for process %d", pid)
	}
	clock := uintptr(uint32(^int32(pid)<<3 | 2))
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clock, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, fmt.Errorf("the CPU clock of process %d: %w", pid, e)
	}
	return time.Duration(ts.Nano()), nil
}

// statCPU returns the CPU time of the process pid as /proc/PID/stat has
// it, in clock ticks: the check of processCPU.
func statCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	d, err := parseStat(b)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return d, nil
}

// clockTick is the unit of the CPU times of /proc/PID/stat, USER_HZ:
// 100 a second on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// parseStat returns the CPU time, user and system, of all the threads of
// a process, from stat, the content of its /proc/PID/stat (see proc(5)):
// utime and stime, its 14th and 15th fields, in clock ticks.
func parseStat(stat []byte) (time.Duration, error) {
	// The second field is the command's name in parentheses, which may
	// itself hold spaces and parentheses: the fields that follow start
	// after its last one.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no ')' closes the command's name")
	}
	fields := bytes.Fields(stat[i+1:])
	// fields[0] is the state, the 3rd field: utime is fields[11].
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("%d fields after the command's name, want at least %d", len(fields), stime+1)
	}
	var ticks int64
	for _, f := range []int{utime, stime} {
		v, err := strconv.ParseInt(string(fields[f]), 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("field %d is %q, not a count of ticks", f+3, fields[f])
		}
		ticks += v
	}
	return time.Duration(ticks) * clockTick, nil
}
