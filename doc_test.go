package mcpeffect

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// The effect table is written twice, for the two places people read it:
// the package documentation (doc.go) and the README. These tests hold
// both to the code, so that neither can drift from Effect.Annotations and
// the scopes.

// closedEffects are the valid effects without OpenWorld, one row each.
var closedEffects = []Effect{Read, Write, Idempotent, Destructive, Destructive | Idempotent}

// A tableRow is one row of an effect table: its first cell and the others
// by column name.
type tableRow struct {
	effect string
	cells  map[string]string
}

// expectedRow returns the cells the row for effect e must have, in the
// terms of the table: the four hints, the least scope (goName) and
// whether each scope may call the tool.
func expectedRow(e Effect, classified bool) map[string]string {
	a, need := NewRegistry().Annotations("unknown"), Scope(0)
	if classified {
		a, need = e.Annotations(), e.Required()
	}
	row := map[string]string{
		"readOnly":    fmt.Sprint(a.ReadOnlyHint),
		"destructive": fmt.Sprint(*a.DestructiveHint),
		"idempotent":  fmt.Sprint(a.IdempotentHint),
		"openWorld":   fmt.Sprint(*a.OpenWorldHint),
		"least scope": map[Scope]string{0: "none", ReadOnly: "ReadOnly", NonDestructive: "NonDestructive", Full: "Full"}[need],
	}
	for _, s := range []Scope{ReadOnly, NonDestructive, Full} {
		row[map[Scope]string{ReadOnly: "ReadOnly", NonDestructive: "NonDestructive", Full: "Full"}[s]] = map[bool]string{true: "yes", false: "no"}[classified && s.Allows(e)]
	}
	return row
}

// checkTable checks the rows of one table, whose columns are given.
func checkTable(t *testing.T, where string, rows []tableRow, columns []string) {
	t.Helper()
	var effects []Effect
	for _, r := range rows {
		switch r.effect {
		case "|OpenWorld on any":
			// Only openWorld is given, and it is true; the rest is as
			// without OpenWorld.
			for _, e := range closedEffects {
				open, closed := expectedRow(e|OpenWorld, true), expectedRow(e, true)
				closed["openWorld"] = "true"
				if fmt.Sprint(open) != fmt.Sprint(closed) {
					t.Errorf("%s: %s|OpenWorld is %v, not %s with openWorld true", where, e, open, e)
				}
			}
			for _, c := range columns {
				want := ""
				if c == "openWorld" {
					want = "true"
				}
				if r.cells[c] != want {
					t.Errorf("%s: row %q, column %s: %q, want %q", where, r.effect, c, r.cells[c], want)
				}
			}
		case "not classified":
			want := expectedRow(0, false)
			for _, c := range columns {
				if r.cells[c] != want[c] {
					t.Errorf("%s: row %q, column %s: %q, want %q", where, r.effect, c, r.cells[c], want[c])
				}
			}
		default:
			e, err := ParseEffect(r.effect)
			if err != nil {
				t.Errorf("%s: row %q: %v", where, r.effect, err)
				continue
			}
			effects = append(effects, e)
			want := expectedRow(e, true)
			for _, c := range columns {
				if r.cells[c] != want[c] {
					t.Errorf("%s: row %s, column %s: %q, want %q", where, r.effect, c, r.cells[c], want[c])
				}
			}
		}
	}
	if !slices.Equal(effects, closedEffects) {
		t.Errorf("%s: the effect rows are %v, want %v", where, effects, closedEffects)
	}
	if len(rows) != len(closedEffects)+2 {
		t.Errorf("%s: %d rows, want %d", where, len(rows), len(closedEffects)+2)
	}
}

func TestDocEffectTable(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "//\teffect ") })
	if start < 0 {
		t.Fatal("doc.go has no effect table")
	}
	header := strings.TrimPrefix(lines[start], "//\t")
	columns := []string{"readOnly", "destructive", "idempotent", "openWorld", "least scope"}
	at := make([]int, len(columns)+1)
	for i, c := range columns {
		at[i] = strings.Index(header, c)
		if at[i] < 0 {
			t.Fatalf("the header %q has no column %s", header, c)
		}
	}
	at[len(columns)] = 1 << 20
	var rows []tableRow
	for _, l := range lines[start+1:] {
		line, ok := strings.CutPrefix(l, "//\t")
		if !ok {
			break
		}
		cell := func(from, to int) string {
			from, to = min(from, len(line)), min(to, len(line))
			return strings.TrimSpace(line[from:to])
		}
		r := tableRow{effect: cell(0, at[0]), cells: map[string]string{}}
		for i, c := range columns {
			r.cells[c] = cell(at[i], at[i+1])
		}
		rows = append(rows, r)
	}
	checkTable(t, "doc.go", rows, columns)
}

func TestREADMEEffectTable(t *testing.T) {
	src, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const header = "| effect | readOnlyHint | destructiveHint | idempotentHint | openWorldHint | `ReadOnly` | `NonDestructive` | `Full` |"
	_, table, ok := strings.Cut(string(src), header+"\n")
	if !ok {
		t.Fatalf("README.md has no table with the header %s", header)
	}
	columns := []string{"readOnly", "destructive", "idempotent", "openWorld", "ReadOnly", "NonDestructive", "Full"}
	var rows []tableRow
	for i, line := range strings.Split(table, "\n") {
		if i == 0 {
			continue // | --- | ...
		}
		if !strings.HasPrefix(line, "| ") {
			break
		}
		// A bar inside a cell is escaped: \|.
		const bar = "\x00"
		cells := strings.Split(strings.ReplaceAll(line, `\|`, bar), "|")
		cells = cells[1 : len(cells)-1]
		for i, c := range cells {
			cells[i] = strings.TrimSpace(strings.ReplaceAll(c, bar, "|"))
		}
		if len(cells) != len(columns)+1 {
			t.Fatalf("README.md: row %q has %d cells, want %d", line, len(cells), len(columns)+1)
		}
		r := tableRow{effect: strings.ReplaceAll(cells[0], "`", ""), cells: map[string]string{}}
		for i, c := range columns {
			r.cells[c] = cells[i+1]
		}
		rows = append(rows, r)
	}
	checkTable(t, "README.md", rows, columns)
}
