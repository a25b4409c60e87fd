package effectproof

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

// TestProveUndo runs undo trials on a state in memory: a deletion to a
// Trash whose undo, bound from the request or the response, restores the
// record, or restores it only in part, or cannot be bound, or fails; and
// the trials that prove nothing.
func TestProveUndo(t *testing.T) {
	trash := func(s store) (json.RawMessage, string) {
		rec, ok := s["task/1"]
		if !ok {
			return nil, "no such task"
		}
		s["trash/7"] = map[string]any{"of": "task/1", "title": rec["title"], "done": rec["done"]}
		delete(s, "task/1")
		return json.RawMessage(`{"trash_id": 7}`), ""
	}
	restore := func(keepDone bool) func(s store, args map[string]any) string {
		return func(s store, args map[string]any) string {
			if args["item"] != json.Number("7") && args["item"] != float64(7) {
				return "no such item in the Trash"
			}
			item := s["trash/7"]
			rec := map[string]any{"title": item["title"]}
			if keepDone {
				rec["done"] = item["done"]
			}
			s["task/1"] = rec
			delete(s, "trash/7")
			return ""
		}
	}
	byResponse := mcpeffect.Compensation("restore", map[string]string{"item": "$response.body#/trash_id"})
	for _, tc := range []struct {
		name     string
		rec      mcpeffect.Recovery
		call     func(s store) (json.RawMessage, string)
		undo     func(s store, args map[string]any) string
		capture  int // the capture that fails, from 1
		restored bool
		failure  string
		left     []string // the records and fields the undo did not restore
	}{
		{name: "restored", rec: byResponse, call: trash, undo: restore(true), restored: true},
		{name: "restored in part", rec: byResponse, call: trash, undo: restore(false), left: []string{"task/1 done"}},
		{name: "not restored at all", rec: byResponse, call: trash, undo: func(store, map[string]any) string { return "" },
			left: []string{"task/1 ", "trash/7 "}},
		{name: "bound from the request", rec: mcpeffect.Compensation("restore", map[string]string{"item": "$request.body#/trash"}),
			call: trash, undo: restore(true), restored: true},
		{name: "a member the response has not", rec: mcpeffect.Compensation("restore", map[string]string{"item": "$response.body#/id"}),
			call: trash, undo: restore(true), failure: `its undo cannot be bound from the call, so no one should call it (SEP-3172): mcpeffect: the recovery by "restore" is unavailable for this call: parameter "item" ($response.body#/id): no member "id"`},
		{name: "a result without structured content", rec: byResponse,
			call: func(s store) (json.RawMessage, string) { _, f := trash(s); return nil, f }, undo: restore(true),
			failure: "there is nothing to read it from"},
		{name: "an undo that fails", rec: byResponse, call: trash, undo: func(store, map[string]any) string { return "denied" },
			failure: `its undo, "restore" with {"item":7}, failed: denied`},
		{name: "a call that fails", rec: byResponse, call: func(store) (json.RawMessage, string) { return nil, "denied" }, undo: restore(true),
			failure: "checking its undo, the example did not reach the tool's work: denied"},
		{name: "a call that changes nothing", rec: byResponse, call: func(store) (json.RawMessage, string) { return nil, "" }, undo: restore(true),
			failure: `checking its undo, "restore", the call changed nothing`},
		{name: "a capture that fails", rec: byResponse, call: trash, undo: restore(true), capture: 3, failure: "capturing the state: no database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := store{"task/1": {"title": "Milk", "done": true}}
			captures, undos := 0, 0
			res := ProveUndo(UndoTrial{
				At: `tool "trash", example "e"`, Tool: "trash", Example: "e", Recovery: tc.rec,
				Request: json.RawMessage(`{"task": 1, "trash": 7}`),
				Capture: func() (Snapshot, error) {
					if captures++; captures == tc.capture {
						return nil, errors.New("no database")
					}
					return s.capture()
				},
				Call: func() (json.RawMessage, string) { return tc.call(s) },
				Undo: func(raw json.RawMessage) string {
					undos++
					var args map[string]any
					if err := json.Unmarshal(raw, &args); err != nil {
						t.Fatalf("the undo's arguments %s: %v", raw, err)
					}
					return tc.undo(s, args)
				},
			})
			switch {
			case tc.failure == "" && res.Failure != "", tc.failure != "" && !strings.Contains(res.Failure, tc.failure):
				t.Fatalf("failure %q, want %q", res.Failure, tc.failure)
			case res.Restored != tc.restored:
				t.Errorf("restored %t, want %t", res.Restored, tc.restored)
			case tc.capture != 0 && res.CaptureErr == nil:
				t.Error("no capture error")
			}
			if strings.Contains(tc.failure, "cannot be bound") && undos != 0 {
				t.Errorf("an undo that cannot be bound was called %d times", undos)
			}
			var left []string
			if res.Lie != nil {
				for _, c := range res.Lie.Changes {
					left = append(left, c.Key+" "+c.Field)
				}
				if res.Lie.Rule != "undo" || res.Lie.When != "its undo" ||
					!strings.Contains(res.Lie.Message, `tool "trash" publishes "restore" as its undo, but in example "e", "restore" called with {"item":7} after the call did not restore`) {
					t.Errorf("lie %+v", res.Lie)
				}
			}
			if strings.Join(left, ",") != strings.Join(tc.left, ",") {
				t.Errorf("left %q, want %q", left, tc.left)
			}
			if tc.failure == "" && len(res.Changed) == 0 {
				t.Error("a trial judged whose call changed nothing")
			}
		})
	}
}
