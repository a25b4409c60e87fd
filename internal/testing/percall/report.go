package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// A result is what the command prints.
type result struct {
	when                  time.Time
	machine               string
	loadBefore, loadAfter string
	// measure names what a call's figure is: server CPU, or the client's
	// wall time where CPU cannot be read, and why.
	measure               string
	rounds, calls, warmup int
	turn                  int
	rows                  []row
	check                 string
	env                   string
}

// A row is one server's figures over the rounds.
type row struct {
	name, against string
	// perCall is the figure a call, in microseconds.
	perCall summary
	// ratio is its ratio to the server it is measured against, round by
	// round, when against is not empty.
	ratio summary
	// wall is the client's wall time a call, in microseconds.
	wall summary
}

// perRound returns, for each round, the figure a call of server i: its
// CPU time, or the client's wall time when the rounds have no CPU time.
func perRound(rounds []round, i int) []float64 {
	out := make([]float64, len(rounds))
	for r, rd := range rounds {
		d := rd.wall[i]
		if rd.cpu != nil {
			d = rd.cpu[i]
		}
		out[r] = float64(d) / float64(time.Microsecond)
	}
	return out
}

// ratios returns, round by round, the figure of server i over that of
// server j in the same round.
func ratios(rounds []round, i, j int) []float64 {
	a, b := perRound(rounds, i), perRound(rounds, j)
	out := make([]float64, len(rounds))
	for r := range out {
		out[r] = a[r] / b[r]
	}
	return out
}

// reportOf returns what the command prints of rounds, measured of specs.
func reportOf(c config, specs []*spec, rounds []round, cpuErr error, loadBefore, loadAfter, check string) result {
	res := result{
		when: time.Now().UTC(), machine: machine(), loadBefore: loadBefore, loadAfter: loadAfter,
		rounds: c.rounds, calls: c.calls, warmup: c.warmup, turn: c.turn, check: check,
		measure: "server CPU a call: the server process's CPU time, all its threads, user and system (" + cpuClock + ")",
		env:     "GOGC=" + envOr("GOGC", "unset") + ", GOMAXPROCS=" + envOr("GOMAXPROCS", "unset") + " in every server's environment",
	}
	if cpuErr != nil {
		res.measure = "the client's wall time a call, not the server's CPU (" + cpuErr.Error() + "): it counts the client, the pipes and the scheduler too"
	}
	for i, sp := range specs {
		w := make([]float64, len(rounds))
		for r, rd := range rounds {
			w[r] = float64(rd.wall[i]) / float64(time.Microsecond)
		}
		rw := row{name: sp.row, perCall: summarize(perRound(rounds, i)), wall: summarize(w)}
		if sp.against >= 0 {
			rw.against = specs[sp.against].short
			rw.ratio = summarize(ratios(rounds, i, sp.against))
		}
		res.rows = append(res.rows, rw)
	}
	return res
}

func envOr(key, none string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return none
}

// report prints res: a few lines that say what was measured, where and
// when, then the table, in Markdown.
func report(w io.Writer, res result) {
	fmt.Fprintf(w, "percall, %s: %s/%s, %s, %s", res.when.Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, res.machine, runtime.Version())
	if res.loadBefore != "" {
		fmt.Fprintf(w, "; load average (1, 5, 15 min) %s before, %s after", res.loadBefore, res.loadAfter)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%s; %s.\n", res.measure, res.env)
	fmt.Fprintf(w, "%d rounds of %d calls of each server, after %d calls each to warm up; one go-sdk client over stdio, one call at a time; "+
		"in each round the servers take turns of %d calls, the order rotated from one turn to the next.\n", res.rounds, res.calls, res.warmup, res.turn)
	conf := 0.0
	for _, r := range res.rows {
		if r.ratio.ciOK {
			conf = r.ratio.confidence
		}
	}
	fmt.Fprint(w, "A ratio is taken in each round, of two servers measured over the same seconds: the table gives their median over the rounds, their range, and ")
	if conf > 0 {
		fmt.Fprintf(w, "the interval that holds the median with %.1f%% confidence.\n", 100*conf)
	} else {
		fmt.Fprintf(w, "no interval of the median (that takes 6 rounds or more).\n")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| server | a call (median, range) | against | ratio | ratio's range | median's interval | client's wall a call |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range res.rows {
		cells := []string{r.name, fmt.Sprintf("%s µs (%s–%s)", us(r.perCall.median), us(r.perCall.min), us(r.perCall.max)), "", "", "", "", us(r.wall.median) + " µs"}
		if r.against != "" {
			cells[2] = r.against
			cells[3] = fmt.Sprintf("**%.3fx**", r.ratio.median)
			cells[4] = fmt.Sprintf("%.3f–%.3f", r.ratio.min, r.ratio.max)
			if r.ratio.ciOK {
				cells[5] = fmt.Sprintf("%.3f–%.3f", r.ratio.ciLow, r.ratio.ciHigh)
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	if res.check != "" {
		fmt.Fprintln(w)
		fmt.Fprintln(w, res.check)
	}
}

// us formats a figure in microseconds, to three significant digits.
func us(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// checkStat compares each server's CPU time as processCPU reads it with
// /proc/PID/stat's, which counts in ticks of 10 ms: they must agree
// within two ticks and a percent. It returns what it found, or "" where
// neither can be read.
func checkStat(servers []*server) string {
	var bad []string
	for _, s := range servers {
		clock, err1 := processCPU(s.pid)
		stat, err2 := statCPU(s.pid)
		if err1 != nil || err2 != nil {
			return ""
		}
		diff := clock - stat
		if diff < 0 {
			diff = -diff
		}
		if diff > 2*clockTick+clock/100 {
			bad = append(bad, fmt.Sprintf("%s: %v by its clock, %v by /proc/%d/stat", s.spec.key, clock.Round(time.Millisecond), stat, s.pid))
		}
	}
	if len(bad) > 0 {
		return "The CPU clocks and /proc/PID/stat disagree, so the figures above are in doubt: " + strings.Join(bad, "; ") + "."
	}
	return "Each server's CPU time by its clock agrees with /proc/PID/stat's at the end, within its ticks of 10 ms."
}
