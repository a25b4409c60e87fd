package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestTurnOrder(t *testing.T) {
	for n := 1; n <= 9; n++ {
		place := make([][]int, n) // place[target][position] counts
		for i := range place {
			place[i] = make([]int, n)
		}
		last := -1
		for c := range 4 * n {
			order := turnOrder(c, n)
			if s := slices.Sorted(slices.Values(order)); !slices.Equal(s, turnOrder(0, n)) || s[0] != 0 || s[n-1] != n-1 {
				t.Fatalf("turnOrder(%d, %d) = %v: not every target once", c, n, order)
			}
			for pos, i := range order {
				place[i][pos]++
			}
			if n > 2 && order[0] == last {
				t.Errorf("turnOrder(%d, %d) = %v starts with the target that ended turn %d", c, n, order, c-1)
			}
			last = order[n-1]
		}
		for i := range place {
			for pos, k := range place[i] {
				if k != 4 {
					t.Errorf("n=%d: target %d took place %d in %d of %d turns, want 4", n, i, pos, k, 4*n)
				}
			}
		}
	}
}

// A fake is a target whose CPU time grows by cost at each call, and which
// logs its calls in the order they come.
type fake struct {
	id   int
	cost time.Duration
	used time.Duration
	log  *[]int
	fail error
}

func (f *fake) call(context.Context) error {
	if f.fail != nil {
		return f.fail
	}
	f.used += f.cost
	*f.log = append(*f.log, f.id)
	return nil
}

func (f *fake) cpu() (time.Duration, error) { return f.used, nil }

func TestRunRounds(t *testing.T) {
	for _, tt := range []struct {
		name                string
		rounds, calls, turn int
	}{
		{"call by call", 3, 4, 1},
		{"turns of 2", 2, 4, 2},
		{"a last turn cut short", 2, 5, 2},
		{"one turn a round", 4, 3, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log []int
			costs := []time.Duration{10 * time.Microsecond, 25 * time.Microsecond, 40 * time.Microsecond}
			targets := make([]target, len(costs))
			for i, c := range costs {
				targets[i] = &fake{id: i, cost: c, log: &log}
			}
			var progress []int
			rounds, err := runRounds(context.Background(), targets, tt.rounds, tt.calls, tt.turn, true, func(done int) { progress = append(progress, done) })
			if err != nil {
				t.Fatal(err)
			}
			if len(rounds) != tt.rounds || len(progress) != tt.rounds || progress[len(progress)-1] != tt.rounds {
				t.Fatalf("%d rounds, progress %v; want %d", len(rounds), progress, tt.rounds)
			}
			for r, rd := range rounds {
				for i, c := range costs {
					if rd.cpu[i] != c {
						t.Errorf("round %d: target %d: %v a call, want %v", r, i, rd.cpu[i], c)
					}
					if rd.wall[i] < 0 {
						t.Errorf("round %d: target %d: wall %v", r, i, rd.wall[i])
					}
				}
			}
			// The log is made of turns: runs of turn calls (fewer at a
			// round's end) of one target, the targets of each cycle of
			// turns in the order of turnOrder.
			var want []int
			turns := 0
			for range tt.rounds {
				for c := 0; c*tt.turn < tt.calls; c++ {
					k := min(tt.turn, tt.calls-c*tt.turn)
					for _, i := range turnOrder(turns, len(costs)) {
						for range k {
							want = append(want, i)
						}
					}
					turns++
				}
			}
			if !slices.Equal(log, want) {
				t.Errorf("calls in the order\n%v\nwant\n%v", log, want)
			}
			if len(log) != tt.rounds*tt.calls*len(costs) {
				t.Errorf("%d calls, want %d", len(log), tt.rounds*tt.calls*len(costs))
			}
		})
	}

	t.Run("no CPU", func(t *testing.T) {
		var log []int
		rounds, err := runRounds(context.Background(), []target{&fake{cost: time.Millisecond, log: &log}}, 2, 3, 1, false, nil)
		if err != nil || len(rounds) != 2 || rounds[0].cpu != nil || len(log) != 6 {
			t.Fatalf("runRounds without CPU: %+v, %v, %d calls", rounds, err, len(log))
		}
	})
	t.Run("a call fails", func(t *testing.T) {
		var log []int
		boom := errors.New("boom")
		_, err := runRounds(context.Background(), []target{&fake{log: &log}, &fake{id: 1, log: &log, fail: boom}}, 2, 3, 1, true, nil)
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want boom", err)
		}
	})
	t.Run("no calls", func(t *testing.T) {
		if _, err := runRounds(context.Background(), nil, 1, 0, 1, true, nil); err == nil {
			t.Error("0 calls a round: no error")
		}
		if _, err := runRounds(context.Background(), nil, 1, 1, 0, true, nil); err == nil {
			t.Error("turns of 0: no error")
		}
	})
}

func TestRatios(t *testing.T) {
	rounds := []round{
		{cpu: []time.Duration{100 * time.Microsecond, 110 * time.Microsecond}, wall: []time.Duration{time.Millisecond, time.Millisecond}},
		{cpu: []time.Duration{200 * time.Microsecond, 180 * time.Microsecond}, wall: []time.Duration{time.Millisecond, time.Millisecond}},
	}
	if got := perRound(rounds, 1); !slices.Equal(got, []float64{110, 180}) {
		t.Errorf("perRound = %v", got)
	}
	// Paired round by round, not the ratio of the medians.
	if got := ratios(rounds, 1, 0); !slices.Equal(got, []float64{1.1, 0.9}) {
		t.Errorf("ratios = %v, want [1.1 0.9]", got)
	}
	// Without CPU, the wall time.
	rounds[0].cpu, rounds[1].cpu = nil, nil
	rounds[1].wall[1] = 3 * time.Millisecond
	if got := ratios(rounds, 1, 0); !slices.Equal(got, []float64{1, 3}) {
		t.Errorf("ratios of wall = %v, want [1 3]", got)
	}
}
