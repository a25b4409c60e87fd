package store

import (
	"fmt"
	"slices"
	"testing"
)

// TestSearchReadsAtMostMaxSearchScan: a search reads at most
// MaxSearchScan tasks a call, so that one that finds little costs a
// bounded read however many tasks there are. Where it stops before its
// page is full, its page is short (even empty) and its cursor goes on
// from the last task read; following the cursors finds every match, once
// and in order, whatever the page size.
func TestSearchReadsAtMostMaxSearchScan(t *testing.T) {
	ctx := t.Context()
	s, k, _ := openWithToken(t, nil)
	var ids []string
	for i := range MaxSearchScan + 50 {
		title := fmt.Sprintf("task %d", i)
		switch i {
		case 3, MaxSearchScan - 1, MaxSearchScan, MaxSearchScan + 40:
			title += " needle"
		}
		task, err := s.CreateTask(ctx, k.Actor(), NewTask{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	want := []string{ids[3], ids[MaxSearchScan-1], ids[MaxSearchScan], ids[MaxSearchScan+40]}

	for _, c := range []struct {
		query string
		limit int
		want  []string
		pages []int // the number of tasks on each page, in order
	}{
		// The first call reads MaxSearchScan tasks and finds two; the
		// second reads the rest.
		{"needle", 10, want, []int{2, 2}},
		// A page filled before the bound ends where it is full.
		{"needle", 1, want, []int{1, 1, 1, 1}},
		// Nothing found: one short page, empty, with a cursor, then the end.
		{"haystack", 10, nil, []int{0, 0}},
	} {
		t.Run(fmt.Sprintf("%s, %d a page", c.query, c.limit), func(t *testing.T) {
			var got []string
			var pages []int
			cursor := ""
			for range 10 {
				page, err := s.SearchTasks(ctx, c.query, Page{Limit: c.limit, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				pages = append(pages, len(page.Items))
				for _, task := range page.Items {
					got = append(got, task.ID)
				}
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			if !slices.Equal(got, c.want) || !slices.Equal(pages, c.pages) {
				t.Errorf("found %v in pages of %v, want %v in pages of %v", got, pages, c.want, c.pages)
			}
		})
	}
}
