package gctune

import (
	"runtime/debug"
	"testing"
)

// TestTune sets the collector as done-server serves, unless the
// environment sets it, and restores what it found.
func TestTune(t *testing.T) {
	current := func() (int, int64) {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p, debug.SetMemoryLimit(-1)
	}
	p0, l0 := current()
	for _, c := range []struct {
		name      string
		env       map[string]string
		percent   int
		limitSame bool
	}{
		{"defaults", nil, Percent, false},
		{"GOGC set", map[string]string{"GOGC": "50"}, p0, false},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, Percent, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			restore := Tune(func(k string) string { return c.env[k] })
			p, l := current()
			restore()
			if p != c.percent {
				t.Errorf("GOGC %d, want %d", p, c.percent)
			}
			if wantLimit := int64(MemoryLimit); !c.limitSame && l != wantLimit || c.limitSame && l != l0 {
				t.Errorf("memory limit %d (before: %d)", l, l0)
			}
			if p, l := current(); p != p0 || l != l0 {
				t.Errorf("restored to %d and %d, want %d and %d", p, l, p0, l0)
			}
		})
	}
}
