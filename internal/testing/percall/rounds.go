package main

import (
	"context"
	"fmt"
	"time"
)

// A target is one server as the rounds see it.
type target interface {
	// call makes one tools/call of the server and waits for its result.
	call(context.Context) error
	// cpu returns the CPU time that the server's process has used so far.
	cpu() (time.Duration, error)
}

// turnOrder returns the order in which n targets take turn c: the order
// of turn 0 rotated by c, so that over n turns each target takes each
// place once, and a drift of the machine's load weighs on all alike;
// and, with more than two targets, no target calls twice in a row across
// two turns, where the second call would find the caches as the first
// left them.
func turnOrder(c, n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = (c + i) % n
	}
	return order
}

// A round is what one round measured of each target, a call.
type round struct {
	// cpu is the CPU time of each target's process a call, nil when the
	// CPU time of the processes cannot be read.
	cpu []time.Duration
	// wall is the time each target's call took, as its client saw it.
	wall []time.Duration
}

// runRounds makes rounds rounds of calls calls of each target. A round
// is made of turns: in each, every target makes turn calls (the last
// turn may have fewer), one target after another in the order of
// turnOrder, so that every target sees the same moments of a shared
// machine. With cpu, it reads each target's CPU time before and after
// each round. It calls progress, if not nil, after each round.
func runRounds(ctx context.Context, targets []target, rounds, calls, turn int, cpu bool, progress func(done int)) ([]round, error) {
	if calls <= 0 || turn <= 0 {
		return nil, fmt.Errorf("%d calls a round in turns of %d: want at least 1 of each", calls, turn)
	}
	n := len(targets)
	out := make([]round, 0, rounds)
	readCPU := func(into []time.Duration) error {
		for i, t := range targets {
			d, err := t.cpu()
			if err != nil {
				return err
			}
			into[i] = d
		}
		return nil
	}
	before, after := make([]time.Duration, n), make([]time.Duration, n)
	// Turns are counted across rounds, so that the order goes on
	// alternating from one round to the next.
	turns := 0
	for r := range rounds {
		res := round{wall: make([]time.Duration, n)}
		if cpu {
			if err := readCPU(before); err != nil {
				return nil, err
			}
		}
		for c := 0; c*turn < calls; c++ {
			k := min(turn, calls-c*turn)
			for _, i := range turnOrder(turns, n) {
				for range k {
					start := time.Now()
					if err := targets[i].call(ctx); err != nil {
						return nil, err
					}
					res.wall[i] += time.Since(start)
				}
			}
			turns++
		}
		if cpu {
			if err := readCPU(after); err != nil {
				return nil, err
			}
			res.cpu = make([]time.Duration, n)
			for i := range res.cpu {
				res.cpu[i] = (after[i] - before[i]) / time.Duration(calls)
			}
		}
		for i := range res.wall {
			res.wall[i] /= time.Duration(calls)
		}
		out = append(out, res)
		if progress != nil {
			progress(r + 1)
		}
	}
	return out, nil
}
