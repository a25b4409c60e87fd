package store

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
)

// TestAgendaPages reads an agenda of due and scheduled tasks (whole days
// and times of day, a task due the day its schedule starts, tasks outside
// the window) whole and a page at a time, with pages of 1, 2 and 3: the
// pages, put end to end, are the whole agenda, which holds each entry
// once, in order of its key, task id and kind.
func TestAgendaPages(t *testing.T) {
	ctx := t.Context()
	s, k, _ := openWithToken(t, nil)
	type entry struct{ key, id, kind string }
	var want []entry
	for i := range 40 {
		day := 1 + i%12 // 11 and 12 fall after the window
		task, err := s.CreateTask(ctx, k.Actor(), NewTask{Title: fmt.Sprintf("task %d", i), Due: fmt.Sprintf("2025-06-%02d", day)})
		if err != nil {
			t.Fatal(err)
		}
		if day <= 10 {
			want = append(want, entry{task.Due, task.ID, "due"})
		}
		var start, end string
		switch {
		case i%3 == 0: // whole days, starting the day it is due
			start, end = task.Due, fmt.Sprintf("2025-06-%02d", day+1)
		case i%5 == 0: // an hour
			start, end = fmt.Sprintf("2025-06-%02dT10:00:00Z", day), fmt.Sprintf("2025-06-%02dT11:00:00Z", day)
		default:
			continue
		}
		scheduled, err := s.ScheduleTask(ctx, k.Actor(), task.ID, start, end)
		if err != nil {
			t.Fatal(err)
		}
		if day <= 10 {
			want = append(want, entry{scheduled.ScheduledStart, task.ID, "scheduled"})
		}
	}
	slices.SortFunc(want, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id), cmp.Compare(a.kind, b.kind))
	})

	read := func(limit int) (got []entry, pages int) {
		cursor := ""
		for pages = 1; pages <= 200; pages++ {
			a, err := s.Agenda(ctx, k.Actor(), AgendaFilter{From: "2025-06-01", To: "2025-06-10", Page: Page{Limit: limit, Cursor: cursor}})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range a.Entries {
				got = append(got, entry{entryKey(e), e.Task.ID, e.Kind})
			}
			if cursor = a.NextCursor; cursor == "" {
				return got, pages
			}
		}
		t.Fatalf("pages of %d: no end after 200 pages", limit)
		return nil, 0
	}
	for _, limit := range []int{200, 1, 2, 3} {
		got, pages := read(limit)
		if !slices.Equal(got, want) {
			t.Errorf("pages of %d: %d entries in %d pages\n%v\nwant %d\n%v", limit, len(got), pages, got, len(want), want)
		} else if limit < 200 && pages < len(want)/limit {
			t.Errorf("pages of %d: %d pages for %d entries", limit, pages, len(want))
		}
	}
}
