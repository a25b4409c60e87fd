package store

import (
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
)

// TestTaskActivitySince: the activity of a task from a moment on, page
// by page in the order it happened, entries of one same time included
// once each, with the id of the newest entry; a cursor that is not one
// it gave is refused.
func TestTaskActivitySince(t *testing.T) {
	ctx := t.Context()
	s, c := openClocked(t)
	alice, _, _ := s.MintToken(ctx, NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})
	task, err := s.CreateTask(ctx, alice.Actor(), NewTask{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.CommentOnTask(ctx, alice.Actor(), task.ID, "before"); err != nil {
			t.Fatal(err)
		}
	}
	c.add(time.Minute)
	since := formatTime(c.Now())
	// Five entries at the same moment, and two later.
	for range 5 {
		if _, err := s.CommentOnTask(ctx, alice.Actor(), task.ID, "at"); err != nil {
			t.Fatal(err)
		}
	}
	c.add(time.Second)
	for range 2 {
		if _, err := s.CommentOnTask(ctx, alice.Actor(), task.ID, "after"); err != nil {
			t.Fatal(err)
		}
	}
	var seen []int64
	var newest int64
	for p := (Page{Limit: 2}); ; {
		a, err := s.TaskActivitySince(ctx, task.ID, since, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range a.Items {
			if e.At < since {
				t.Errorf("an entry of %s, before %s", e.At, since)
			}
			seen = append(seen, e.ID)
		}
		newest = a.Newest
		if a.NextCursor == "" {
			break
		}
		p.Cursor = a.NextCursor
	}
	if len(seen) != 7 {
		t.Errorf("%d entries since, want 7: %v", len(seen), seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Errorf("out of order, or twice: %v", seen)
		}
	}
	if newest != seen[len(seen)-1] {
		t.Errorf("newest %d, want %d", newest, seen[len(seen)-1])
	}
	for _, cursor := range []string{"x", keyCursor("2020-01-01T00:00:00.000Z", "0"), keyCursor(since, "a")} {
		if _, err := s.TaskActivitySince(ctx, task.ID, since, Page{Cursor: cursor}); err == nil {
			t.Errorf("cursor %q taken", cursor)
		}
	}
	if _, err := s.TaskActivitySince(ctx, task.ID, "yesterday", Page{}); err == nil {
		t.Error("a since that is not a time taken")
	}
}
