package effectproof

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

// A store is a state of records that a trial's calls change.
type store map[string]map[string]any

func (s store) capture() (Snapshot, error) { return Canonical(s) }

// TestProve runs trials on a state in memory, each its call doing what
// the case says, and holds Prove to the procedure both proofs share: the
// state captured before and after each of two calls, judged; an example
// that expects an error held to failing and changing nothing.
func TestProve(t *testing.T) {
	for _, tc := range []struct {
		name      string
		effect    mcpeffect.Effect
		hints     mcpeffect.Effect
		wantError string
		call      func(s store, n int) string // the nth call, from 1
		capture   func(n int) error           // fails the nth capture, from 1
		failure   string                      // in Result.Failure
		measured  int
		lies      []string // the rules broken
		refused   bool
		repeat    string // Result.RepeatError
	}{
		{name: "a read that reads", effect: mcpeffect.Read, call: func(store, int) string { return "" }, measured: 2},
		{name: "a read that writes", effect: mcpeffect.Read,
			call: func(s store, n int) string { s["views"] = map[string]any{"n": n}; return "" }, measured: 2, lies: []string{"read"}},
		{name: "a deletion whose repeat fails", effect: mcpeffect.Destructive | mcpeffect.Idempotent,
			call: func(s store, n int) string {
				if _, ok := s["task/1"]; !ok {
					return "no such task"
				}
				delete(s, "task/1")
				return ""
			}, measured: 2, repeat: "no such task"},
		{name: "an outcome the hints claim less than", effect: mcpeffect.Destructive, hints: mcpeffect.Read,
			call: func(s store, n int) string { s["task/1"]["title"] = "Tea"; return "" }, measured: 2, lies: []string{"read"}},
		{name: "a first call that fails", effect: mcpeffect.Write, call: func(store, int) string { return "denied" },
			failure: `tool "t", example "e": the example did not reach the tool's work: denied`, measured: 1},
		{name: "an error expected, and met", effect: mcpeffect.Write, wantError: "denied",
			call: func(store, int) string { return "denied: no scope" }, measured: 2, refused: true},
		{name: "an error expected, not met", effect: mcpeffect.Write, wantError: "denied",
			call: func(store, int) string { return "" }, measured: 1, failure: `expects an error containing "denied", but its first call succeeded`},
		{name: "an error expected, that changed the state on the repeat", effect: mcpeffect.Write, wantError: "denied",
			call: func(s store, n int) string {
				if n == 2 {
					s["log"] = map[string]any{"what": "denied"}
				}
				return "denied"
			}, measured: 2, failure: "its repeat failed, as expected, but changed the state"},
		{name: "a capture that fails", effect: mcpeffect.Write, call: func(store, int) string { return "" },
			capture: func(n int) error {
				if n == 2 {
					return errors.New("no database")
				}
				return nil
			}, failure: `tool "t", example "e": capturing the state: no database`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := store{"task/1": {"title": "Milk"}}
			calls, captures := 0, 0
			res := Prove(Trial{
				At: `tool "t", example "e"`, Tool: "t", Example: "e", Effect: tc.effect, Hints: tc.hints, WantError: tc.wantError,
				Capture: func() (Snapshot, error) {
					captures++
					if tc.capture != nil {
						if err := tc.capture(captures); err != nil {
							return nil, err
						}
					}
					return s.capture()
				},
				Call: func() string { calls++; return tc.call(s, calls) },
			})
			var rules []string
			for _, l := range res.Lies {
				rules = append(rules, l.Rule)
			}
			switch {
			case tc.failure == "" && res.Failure != "", tc.failure != "" && !strings.Contains(res.Failure, tc.failure):
				t.Errorf("failure %q, want %q", res.Failure, tc.failure)
			case res.Measured != tc.measured:
				t.Errorf("measured %d calls, want %d", res.Measured, tc.measured)
			case strings.Join(rules, ",") != strings.Join(tc.lies, ","):
				t.Errorf("lies %q, want %q", rules, tc.lies)
			case res.Refused != tc.refused || res.RepeatError != tc.repeat:
				t.Errorf("refused %t, repeat error %q; want %t, %q", res.Refused, res.RepeatError, tc.refused, tc.repeat)
			case tc.capture != nil && res.CaptureErr == nil:
				t.Error("no capture error")
			}
			if res.Failure == "" && !res.Refused && !res.Evidence.Reached {
				t.Errorf("a trial judged that reached nothing: %+v", res)
			}
		})
	}
}
