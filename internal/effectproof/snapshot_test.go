package effectproof

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// state is a state as mcpeffecttest.State is one: records by key.
type state map[string]map[string]any

func TestDiff(t *testing.T) {
	when := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name          string
		before, after state
		want          []string // the changes, as a failure shows them
	}{
		{
			name:   "the same",
			before: state{"task/1": {"title": "Milk", "done": false, "priority": 0, "due": when, "labels": []string{"a"}}},
			after:  state{"task/1": {"title": "Milk", "done": false, "priority": 0, "due": when, "labels": []string{"a"}}},
		},
		{
			name:   "every empty value is the same as an absent field",
			before: state{"task/1": {"a": nil, "b": "", "c": []int{}, "d": map[string]int{}, "e": []byte{}}},
			after:  state{"task/1": {"a": "", "b": nil, "c": map[string]any{}, "e": nil}},
		},
		{
			name:   "objects compare whatever order their keys were written in",
			before: state{"task/1": {"meta": json.RawMessage(`{"b": 1, "a": {"d": [], "c": 2}}`)}},
			after:  state{"task/1": {"meta": map[string]any{"a": map[string]any{"c": 2, "d": []int{}}, "b": 1}}},
		},
		{
			name:   "false and 0 are values",
			before: state{"task/1": {"done": nil, "priority": nil}},
			after:  state{"task/1": {"done": false, "priority": 0}},
			want: []string{
				`record "task/1", field "done": empty → false`,
				`record "task/1", field "priority": empty → 0`,
			},
		},
		{
			name:   "numbers as written",
			before: state{"n/1": {"v": int64(math.MaxInt64)}},
			after:  state{"n/1": {"v": int64(math.MaxInt64 - 1)}},
			want:   []string{`record "n/1", field "v": 9223372036854775807 → 9223372036854775806`},
		},
		{
			name:   "every kind of change, by key and field",
			before: state{"task/2": {"title": "Eggs"}, "task/1": {"title": "Milk", "note": "x", "owner": "ann"}},
			after:  state{"task/1": {"title": "Bread", "note": "", "owner": "ann", "due": when}, "task/3": {"title": "Tea"}, "task/4": nil},
			want: []string{
				`record "task/1", field "due": empty → "2025-06-02T09:00:00Z"`,
				`record "task/1", field "note": "x" → empty`,
				`record "task/1", field "title": "Milk" → "Bread"`,
				`record "task/2" removed; it was {"title":"Eggs"}`,
				`record "task/3" added: {"title":"Tea"}`,
				`record "task/4" added: {}`,
			},
		},
		{
			name:   "HTML is shown as written",
			before: state{"c/1": {"body": nil}},
			after:  state{"c/1": {"body": "<b>&</b>"}},
			want:   []string{`record "c/1", field "body": empty → "<b>&</b>"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := Canonical(tt.before)
			if err != nil {
				t.Fatal(err)
			}
			after, err := Canonical(tt.after)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range Diff(before, after) {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("diff =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestDiffKinds holds which changes destroy what existed: the line between
// a non-destructive write and a destructive one.
func TestDiffKinds(t *testing.T) {
	before, _ := Canonical(state{"a": {"x": 1, "y": 2}, "b": {"x": 1}})
	after, _ := Canonical(state{"a": {"x": 1, "y": 3, "z": 4}, "c": {"x": 1}})
	want := map[string]bool{
		`record "a", field "y": 2 → 3`:       true,
		`record "a", field "z": empty → 4`:   false,
		`record "b" removed; it was {"x":1}`: true,
		`record "c" added: {"x":1}`:          false,
	}
	changes := Diff(before, after)
	if len(changes) != len(want) {
		t.Fatalf("diff found %d changes, want %d: %v", len(changes), len(want), changes)
	}
	for _, c := range changes {
		d, ok := want[c.String()]
		if !ok {
			t.Errorf("unexpected change %s", c)
		} else if c.Kind.Destroys() != d {
			t.Errorf("%s: destroys() = %t, want %t", c, c.Kind.Destroys(), d)
		}
	}
}

func TestCanonicalError(t *testing.T) {
	_, err := Canonical(state{"task/1": {"f": func() {}}})
	if err == nil || !strings.Contains(err.Error(), `record "task/1", field "f": json: unsupported type: func()`) {
		t.Errorf("canonical of a func = %v, want an error naming the record and field", err)
	}
}

func TestShown(t *testing.T) {
	long := strings.Repeat("é", MaxShownValue) // two bytes each
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "empty"},
		{"plain", `"Milk"`, `"Milk"`},
		{"a right-to-left override", "\"abc\u202Edef\"", `"abc\u202Edef"`},
		{"a terminal escape", "\"\x1b[2J\"", `"\u001B[2J"`},
		{"outside the BMP and not printable", "\"\U000E0001\"", `"\U000E0001"`},
		{"invalid UTF-8", "\"\xff\"", "\"\uFFFD\""},
		{"cut on a character", long, strings.Repeat("é", MaxShownValue/2) + fmt.Sprintf("… (%d bytes in all)", 2*MaxShownValue)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Shown(tt.in)
			if got != tt.want {
				t.Errorf("Shown(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Shown(%q) = %q is not valid UTF-8", tt.in, got)
			}
		})
	}
	// A cut that would fall inside a character moves back before it.
	odd := "a" + long
	got := Shown(odd)
	if want := "a" + strings.Repeat("é", MaxShownValue/2-1) + "…"; !strings.HasPrefix(got, want) {
		t.Errorf("shown of %d bytes = %q, want it to start %q", len(odd), got, want)
	}
}

func TestDescribeBounded(t *testing.T) {
	var changes []Change
	for i := range MaxShownChanges + 5 {
		changes = append(changes, Change{Kind: RecordAdded, Key: fmt.Sprintf("task/%d", i), After: "{}"})
	}
	got := Describe(changes)
	if n := strings.Count(got, "\n\t"); n != MaxShownChanges+1 {
		t.Errorf("describe showed %d lines, want %d:\n%s", n, MaxShownChanges+1, got)
	}
	if !strings.HasSuffix(got, "\n\t… and 5 more") {
		t.Errorf("describe = %q, want it to end with the count of what it left out", got)
	}
}
