package effectproof

import (
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

// TestJudge holds each rule of the classification to the changes that
// break it, and to those that do not.
func TestJudge(t *testing.T) {
	added := Change{Kind: RecordAdded, Key: "task/2", After: `{"title":"Tea"}`}
	filled := Change{Kind: FieldFilled, Key: "task/1", Field: "due", After: `"2025-06-02"`}
	changed := Change{Kind: FieldChanged, Key: "task/1", Field: "title", Before: `"Milk"`, After: `"Bread"`}
	removed := Change{Kind: RecordRemoved, Key: "task/1", Before: `{"title":"Milk"}`}
	tests := []struct {
		name          string
		e             mcpeffect.Effect
		first, second []Change
		want          []string // the rules broken, with a record named in each message
		out           Evidence
	}{
		{name: "a read that reads", e: mcpeffect.Read, out: Evidence{Reached: true}},
		{name: "a read that adds", e: mcpeffect.Read, first: []Change{added}, want: []string{"read"},
			out: Evidence{Reached: true, Changed: true}},
		{name: "a read whose repeat changes", e: mcpeffect.Read, second: []Change{changed}, want: []string{"read"},
			out: Evidence{Reached: true, Changed: true, Destroyed: true, RepeatChanged: true}},
		{name: "a write that adds and fills", e: mcpeffect.Write, first: []Change{added, filled}, second: []Change{added},
			out: Evidence{Reached: true, Changed: true, RepeatChanged: true}},
		{name: "a write that changes", e: mcpeffect.Write, first: []Change{added, changed}, want: []string{"non-destructive"},
			out: Evidence{Reached: true, Changed: true, Destroyed: true}},
		{name: "an idempotent write that removes", e: mcpeffect.Idempotent, first: []Change{removed}, want: []string{"non-destructive"},
			out: Evidence{Reached: true, Changed: true, Destroyed: true}},
		{name: "an idempotent write whose repeat adds", e: mcpeffect.Idempotent, first: []Change{added}, second: []Change{added},
			want: []string{"idempotent"}, out: Evidence{Reached: true, Changed: true, RepeatChanged: true}},
		{name: "a destructive write that removes", e: mcpeffect.Destructive, first: []Change{removed}, second: []Change{changed},
			out: Evidence{Reached: true, Changed: true, Destroyed: true, RepeatChanged: true}},
		{name: "a destructive idempotent write whose repeat changes", e: mcpeffect.Destructive | mcpeffect.Idempotent,
			first: []Change{changed}, second: []Change{changed}, want: []string{"idempotent"},
			out: Evidence{Reached: true, Changed: true, Destroyed: true, RepeatChanged: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, lies := Judge("t", "ex", tt.e, tt.first, tt.second)
			if out != tt.out {
				t.Errorf("outcome = %+v, want %+v", out, tt.out)
			}
			var rules []string
			for _, l := range lies {
				rules = append(rules, l.Rule)
				if !strings.Contains(l.Message, `tool "t"`) || !strings.Contains(l.Message, `example "ex"`) || !strings.Contains(l.Message, `record "task/`) {
					t.Errorf("message %q does not name the tool, the example and the record", l.Message)
				}
				if len(l.Changes) == 0 {
					t.Errorf("lie %q holds no change", l.Message)
				}
			}
			if strings.Join(rules, ",") != strings.Join(tt.want, ",") {
				t.Errorf("rules broken = %v, want %v", rules, tt.want)
			}
		})
	}
}

func TestUnshown(t *testing.T) {
	tests := []struct {
		name string
		e    mcpeffect.Effect
		all  Evidence
		want []string // a word of each claim
	}{
		{"a read claims nothing", mcpeffect.Read, Evidence{Reached: true}, nil},
		{"a write that changed nothing", mcpeffect.Write, Evidence{Reached: true}, []string{"no example changed anything"}},
		{"a destructive write that destroyed nothing", mcpeffect.Destructive, Evidence{Reached: true, Changed: true, RepeatChanged: true},
			[]string{"no example changed or removed"}},
		{"a write whose repeat never changed", mcpeffect.Destructive, Evidence{Reached: true, Changed: true, Destroyed: true},
			[]string{"no example's repeat changed anything"}},
		{"an idempotent write, shown", mcpeffect.Idempotent, Evidence{Reached: true, Changed: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unshown("t", tt.e, "", tt.all)
			if len(got) != len(tt.want) {
				t.Fatalf("Unshown = %q, want %d claims", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("claim %q does not say %q", got[i], w)
				}
			}
		})
	}
}

func TestExpectedError(t *testing.T) {
	changed := []Change{{Kind: FieldChanged, Key: "a", Field: "f", Before: "1", After: "2"}}
	tests := []struct {
		name, got string
		changes   []Change
		want      string
	}{
		{"refused whole", "not found: task 9", nil, ""},
		{"succeeded", "", nil, "succeeded"},
		{"another error", "permission denied", nil, "failed with another"},
		{"refused, but changed", "not found: task 9", changed, `record "a", field "f"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ExpectedError("at", "not found", tt.got, "first call", tt.changes)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("ExpectedError = %q, want one containing %q", got, tt.want)
			}
		})
	}
}
