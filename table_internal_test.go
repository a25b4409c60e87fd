package mcpeffect

import (
	"fmt"
	"testing"
)

// TestToolTableOneByOne adds tools one by one past the size at which the
// table keeps recent additions apart from its map, and checks after each
// Add that every tool added is found, through each way of looking, and
// that the map holds at least four fifths of a large table.
func TestToolTableOneByOne(t *testing.T) {
	r := NewRegistry()
	const n = 3000
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%04d", i)
	}
	sawRecent := false
	for i, name := range names {
		e := Read
		if i%2 == 1 {
			e = Destructive
		}
		if err := r.Add(name, e); err != nil {
			t.Fatal(err)
		}
		tab := r.tools.Load()
		if tab.n > 0 {
			sawRecent = true
		}
		if i+1 > smallTable && 5*len(tab.base) < 4*(i+1) {
			t.Fatalf("after %d tools, the map holds %d", i+1, len(tab.base))
		}
		// The newest, the oldest and one in between.
		for _, k := range []int{i, 0, i / 2} {
			want := k%2 == 0
			if got := r.Allowed(names[k], ReadOnly); got != want {
				t.Fatalf("after %d tools, Allowed(%s, read-only) = %v, want %v", i+1, names[k], got, want)
			}
			if r.lookup(names[k]) == &unknown {
				t.Fatalf("after %d tools, %s is not found", i+1, names[k])
			}
		}
		if r.Allowed("tool_unknown", Full) || r.lookup("tool_unknown") != &unknown {
			t.Fatal("an unknown tool is found")
		}
	}
	if !sawRecent {
		t.Error("no tool was ever kept apart from the map: the test does not test the recent slots")
	}
	if r.Len() != n {
		t.Errorf("Len = %d, want %d", r.Len(), n)
	}
	seen := map[string]int{}
	for name := range r.All() {
		seen[name]++
	}
	for _, name := range names {
		if seen[name] != 1 {
			t.Errorf("All yields %s %d times", name, seen[name])
		}
	}
	// A batch after tools one by one: published whole, in the map.
	batch := map[string]Effect{}
	for i := range 100 {
		batch[fmt.Sprint("batch_", i)] = Write
	}
	if err := r.AddAll(batch); err != nil {
		t.Fatal(err)
	}
	if tab := r.tools.Load(); tab.n != 0 || len(tab.base) != n+100 {
		t.Errorf("after AddAll, %d in the map and %d apart, want %d and 0", len(tab.base), tab.n, n+100)
	}
}
