package mcpeffect

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchNames are 84 tool names, the size of the Done server.
var benchNames = func() []string {
	names := make([]string, 84)
	for i := range names {
		names[i] = fmt.Sprintf("tool_number_%02d", i)
	}
	return names
}()

var sink atomic.Bool

// allowedFixture returns a registry of benchNames, reads and destructive
// writes in turn, and the same classification in a plain map.
func allowedFixture(b *testing.B) (*Registry, map[string]uint8) {
	r := NewRegistry()
	plain := make(map[string]uint8, len(benchNames))
	for i, name := range benchNames {
		e := Read
		if i%2 == 1 {
			e = Destructive
		}
		if err := r.Add(name, e); err != nil {
			b.Fatal(err)
		}
		plain[name] = uint8(e)
	}
	return r, plain
}

// BenchmarkAllowed compares Registry.Allowed with its baseline, a lookup in
// a plain map[string]uint8 and a bit test, single-threaded and in
// parallel. Compare the sub-benchmarks of one run, with -count and
// benchstat: the machines that run them are shared, so only the ratio
// means something. BenchmarkAllowedPaired measures the same ratio in one
// sub-benchmark.
func BenchmarkAllowed(b *testing.B) {
	r, plain := allowedFixture(b)
	b.Run("baseline=map", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for i := 0; b.Loop(); i++ {
			if plain[benchNames[i%len(benchNames)]]&uint8(Read) != 0 {
				n++
			}
		}
		sink.Store(n > 0)
	})
	b.Run("registry", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for i := 0; b.Loop(); i++ {
			if r.Allowed(benchNames[i%len(benchNames)], ReadOnly) {
				n++
			}
		}
		sink.Store(n > 0)
	})
	b.Run("parallel/baseline=map", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var n, i int
			for ; pb.Next(); i++ {
				if plain[benchNames[i%len(benchNames)]]&uint8(Read) != 0 {
					n++
				}
			}
			sink.Store(n > 0)
		})
	})
	b.Run("parallel/registry", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var n, i int
			for ; pb.Next(); i++ {
				if r.Allowed(benchNames[i%len(benchNames)], ReadOnly) {
					n++
				}
			}
			sink.Store(n > 0)
		})
	})
}

// BenchmarkAllowedPaired alternates blocks of baseline lookups (a plain
// map[string]uint8 and a bit test) and of Registry.Allowed, timing each
// block, so that both see the machine at the same moment: on a shared
// machine, runs apart from each other differ by more than what is
// measured. It reports the time of a lookup of each and their ratio.
func BenchmarkAllowedPaired(b *testing.B) {
	r, plain := allowedFixture(b)
	b.Run("single", func(b *testing.B) {
		b.ReportAllocs()
		var spent [2]time.Duration
		n := 0
		for round := 0; b.Loop(); round++ {
			n += pairedBlock(r, plain, round, &spent)
		}
		sink.Store(n > 0)
		reportPaired(b, spent)
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var mu sync.Mutex
		var total [2]time.Duration
		b.RunParallel(func(pb *testing.PB) {
			var spent [2]time.Duration
			n := 0
			for round := 0; pb.Next(); round++ {
				n += pairedBlock(r, plain, round, &spent)
			}
			sink.Store(n > 0)
			mu.Lock()
			total[0] += spent[0]
			total[1] += spent[1]
			mu.Unlock()
		})
		reportPaired(b, total)
	})
}

// pairedBlock is 512 baseline lookups and 512 Allowed, each timed, the
// first going first in even rounds. It returns how many were allowed.
func pairedBlock(r *Registry, plain map[string]uint8, round int, spent *[2]time.Duration) int {
	n := 0
	for k := range 2 {
		which := (k + round) % 2
		start := time.Now()
		if which == 0 {
			for i := range pairedBlockSize {
				if plain[benchNames[i%len(benchNames)]]&uint8(Read) != 0 {
					n++
				}
			}
		} else {
			for i := range pairedBlockSize {
				if r.Allowed(benchNames[i%len(benchNames)], ReadOnly) {
					n++
				}
			}
		}
		spent[which] += time.Since(start)
	}
	return n
}

const pairedBlockSize = 512

func reportPaired(b *testing.B, spent [2]time.Duration) {
	lookups := float64(b.N) * pairedBlockSize
	b.ReportMetric(float64(spent[0].Nanoseconds())/lookups, "baseline-ns/lookup")
	b.ReportMetric(float64(spent[1].Nanoseconds())/lookups, "allowed-ns/lookup")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "ratio")
}

// BenchmarkAdd10000 classifies 10,000 tools in a fresh Registry with one
// AddAll, against the baseline of inserting them into a plain map.
func BenchmarkAdd10000(b *testing.B) {
	tools, names := manyTools(10000)
	b.Run("baseline=map", fillMap(names))
	b.Run("registry=AddAll", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := NewRegistry().AddAll(tools); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAddOneByOne10000 classifies 10,000 tools with one Add each, as
// AddTool adds them, against the baseline of inserting them into a plain
// map one by one.
func BenchmarkAddOneByOne10000(b *testing.B) {
	_, names := manyTools(10000)
	b.Run("baseline=map", fillMap(names))
	b.Run("registry=Add", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := NewRegistry()
			for _, name := range names {
				if err := r.Add(name, Write); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkDecisionPaired measures the decision of a tools/call as the
// middleware makes it (the caller's scope capped by the connection's, the
// lookup of the tool, the decision), against a plain map[string]uint8
// lookup and a bit test, alternating blocks as BenchmarkAllowedPaired
// does.
func BenchmarkDecisionPaired(b *testing.B) {
	r, plain := allowedFixture(b)
	e := r.Enforcer(nil)
	ctx := context.Background()
	full := Caller{Scope: Full, Scoped: true}
	b.ReportAllocs()
	var spent [2]time.Duration
	n := 0
	for round := 0; b.Loop(); round++ {
		for k := range 2 {
			which := (k + round) % 2
			start := time.Now()
			if which == 0 {
				for i := range pairedBlockSize {
					if plain[benchNames[i%len(benchNames)]]&uint8(Read) != 0 {
						n++
					}
				}
			} else {
				for i := range pairedBlockSize {
					name := benchNames[i%len(benchNames)]
					if e.decide(ctx, Operation{Method: methodCallTool, Name: name}, full, argsWire).Denied == nil {
						n++
					}
				}
			}
			spent[which] += time.Since(start)
		}
	}
	sink.Store(n > 0)
	reportPaired(b, spent)
}

// fillMap is the baseline of the benchmarks of Add: inserting names into a
// plain map.
func fillMap(names []string) func(*testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := make(map[string]Effect)
			for _, name := range names {
				m[name] = Write
			}
		}
	}
}

// manyTools returns n writes, as a map and their names.
func manyTools(n int) (map[string]Effect, []string) {
	tools := make(map[string]Effect, n)
	names := make([]string, 0, n)
	for i := range n {
		name := fmt.Sprintf("tool_%05d", i)
		tools[name] = Write
		names = append(names, name)
	}
	return tools, names
}
