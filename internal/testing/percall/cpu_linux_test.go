package main

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	for _, tt := range []struct {
		name, stat string
		want       time.Duration
		err        string
	}{
		{
			name: "a process",
			stat: "4242 (gosdkserver) S 4200 4242 4200 0 -1 4194560 1234 0 0 0 731 129 0 0 20 0 7 0 123456 1234567 890 18446744073709551615\n",
			want: (731 + 129) * clockTick,
		},
		{
			// The name may hold spaces and parentheses: the fields are
			// counted after its last ')'.
			name: "a name with spaces and parentheses",
			stat: "7 (a) b (c) d) R 1 7 7 0 -1 0 0 0 0 0 5 6 7 8 20 0 1 0 1 1 1",
			want: 11 * clockTick,
		},
		{
			// cutime and cstime, the children's, are not the process's.
			name: "children not counted",
			stat: "9 (sh) S 1 9 9 0 -1 0 0 0 0 0 1 2 300 400 20 0 1 0 1 1 1",
			want: 3 * clockTick,
		},
		{name: "no name", stat: "9 sh S 1 9 9 0 -1 0 0 0 0 0 1 2", err: "no ')'"},
		{name: "cut short", stat: "9 (sh) S 1 9 9 0 -1 0 0 0 0 0 1", err: "12 fields after"},
		{name: "not a number", stat: "9 (sh) S 1 9 9 0 -1 0 0 0 0 0 x 2", err: `field 14 is "x"`},
		{name: "negative", stat: "9 (sh) S 1 9 9 0 -1 0 0 0 0 0 1 -2", err: `field 15 is "-2"`},
		{name: "empty", stat: "", err: "no ')'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.stat))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parseStat = %v, %v; want an error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseStat = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestProcessCPU reads the CPU time of a child that spins, by its clock
// and by /proc/PID/stat: both grow, and agree within stat's ticks.
func TestProcessCPU(t *testing.T) {
	if os.Getenv("PERCALL_SPIN") == "1" {
		// Spin until killed.
		for {
			runtime.Gosched()
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestProcessCPU$")
	cmd.Env = append(os.Environ(), "PERCALL_SPIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	pid := cmd.Process.Pid
	first, err := processCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Until the child has spun for 200 ms of CPU, however busy the
	// machine: no deadline on how long that takes.
	var clock time.Duration
	for clock < first+200*time.Millisecond {
		time.Sleep(10 * time.Millisecond)
		if clock, err = processCPU(pid); err != nil {
			t.Fatal(err)
		}
	}
	stat, err := statCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	after, err := processCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	// stat was read between clock and after, in ticks, which the kernel
	// may count up to a tick late for a thread that is running.
	if stat < clock-2*clockTick || stat > after+clockTick {
		t.Errorf("/proc/%d/stat says %v, between the clock's %v and %v", pid, stat, clock, after)
	}
	cmd.Process.Kill()
	cmd.Wait()
	killed = true
	for _, pid := range []int{pid, 0, -1, 1 << 30} {
		if d, err := processCPU(pid); err == nil {
			t.Errorf("processCPU(%d) of no process of ours = %v, no error", pid, d)
		}
	}
}
