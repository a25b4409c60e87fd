package mcpeffect

import (
	"fmt"
	"sync/atomic"
	"testing"
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

// BenchmarkAllowed compares Registry.Allowed with its baseline, a lookup in
// a plain map[string]uint8 and a bit test, single-threaded and in
// parallel. Compare the sub-benchmarks of one run: the machines that run
// them are shared, so only the ratio means something.
func BenchmarkAllowed(b *testing.B) {
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
	// Promote the tools to the lock-free snapshot, as the first calls of a
	// server do.
	for range 2 {
		for _, name := range benchNames {
			r.Allowed(name, ReadOnly)
		}
	}

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

// BenchmarkAdd10000 adds 10,000 tools to a fresh Registry, against the
// baseline of inserting them into a plain map.
func BenchmarkAdd10000(b *testing.B) {
	names := make([]string, 10000)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%05d", i)
	}
	b.Run("baseline=map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := make(map[string]Effect)
			for _, name := range names {
				m[name] = Write
			}
		}
	})
	b.Run("registry", func(b *testing.B) {
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
