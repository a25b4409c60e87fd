package store

import (
	"encoding/base64"
	"encoding/json"
)

// Every list is read one page at a time, so that no answer grows with the
// data: a page holds at most MaxLimit items, DefaultLimit unless the
// caller asks for fewer or more, and ends with the cursor of the next
// page, if there is one. Pages are read by key (the rows after the last
// one of the page before, in the list's order), never by offset, so that
// reading a page costs the same wherever it is in the list, and rows
// added or removed between two pages neither repeat nor skip the others.

// Limits of one page of a list.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// A Page asks for one page of a list, as the tools that list take it.
type Page struct {
	// Cursor is the NextCursor of the page before; empty for the first
	// page.
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page; left out, the first page"`
	// Limit is the most items of the page: DefaultLimit if 0, at most
	// MaxLimit.
	Limit int `json:"limit,omitempty" jsonschema:"the most items to return (1 to 200; default 50)"`
}

// A List is one page of a list: its items, and the cursor of the next
// page, empty on the last one.
type List[T any] struct {
	Items      []T
	NextCursor string
}

func checkLimit(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultLimit, nil
	case n < 0 || n > MaxLimit:
		return 0, invalidf("limit %d is out of range: want 1 to %d", n, MaxLimit)
	}
	return n, nil
}

// The most links a task may have of each kind: enough for any real task,
// and few enough that get_task and the answers of the tools that add and
// remove them stay small.
const (
	MaxTaskLabels   = 50
	MaxDependencies = 50
	MaxTaskRefs     = 100
)

// checkRoom returns an error unless the task taskID has room for one more
// row of table (one of its links, what, at most max), or already has the
// row that where selects, in which case adding it changes nothing.
func (t *tx) checkRoom(what, table, where, taskID string, max int, args ...any) error {
	if there, err := t.exists(`SELECT 1 FROM `+table+` WHERE task_id = ? AND `+where, append([]any{taskID}, args...)...); err != nil || there {
		return err
	}
	var n int
	if err := t.queryRow(`SELECT count(*) FROM `+table+` WHERE task_id = ?`, taskID).Scan(&n); err != nil {
		return err
	}
	if n >= max {
		return conflictf("task %q has %d %s, the most a task may have: remove one first", taskID, n, what)
	}
	return nil
}

// MaxShown is the most items of a list that a read of one thing shows
// inside it, such as the steps of a task in get_task; the list's own tool
// pages through them all.
const MaxShown = 50

// shown runs query, which takes its LIMIT as its last argument, and
// returns at most MaxShown rows, and whether there were more.
func shown[T any](t *tx, scan func(scanner) (T, error), query string, args ...any) ([]T, bool, error) {
	rows, err := collect(t, scan, query, append(args, MaxShown+1)...)
	if err != nil || len(rows) <= MaxShown {
		return rows, false, err
	}
	return rows[:MaxShown], true, nil
}

// cut returns the page of rows, read with a limit of one more than
// limit: at most limit of them, and the cursor of the next page, made by
// key from the last row kept, if a row was left out.
func cut[T any](rows []T, limit int, key func(T) string) List[T] {
	if len(rows) <= limit {
		return List[T]{Items: rows}
	}
	rows = rows[:limit]
	return List[T]{Items: rows, NextCursor: key(rows[limit-1])}
}

// pageOf runs query, which selects rows after the cursor and takes its
// LIMIT as its last argument, for one more row than p's limit, and
// returns the page, its cursor made by key.
func pageOf[T any](t *tx, p Page, scan func(scanner) (T, error), key func(T) string, query string, args ...any) (List[T], error) {
	limit, err := checkLimit(p.Limit)
	if err != nil {
		return List[T]{}, err
	}
	rows, err := collect(t, scan, query, append(args, limit+1)...)
	if err != nil {
		return List[T]{}, err
	}
	return cut(rows, limit, key), nil
}

// keyCursor returns the cursor after a row whose key in the list's order
// is made of parts, for a list ordered by more than an id. It is opaque
// to callers, who pass it back as it is.
func keyCursor(parts ...string) string {
	js, _ := json.Marshal(parts) // strings always marshal
	return base64.RawURLEncoding.EncodeToString(js)
}

// afterKey returns the key that a page starts after: first, for the
// first page (an empty cursor), or the parts of a cursor made by
// keyCursor, as many as first has, or an error for the caller, naming the
// tool whose cursor it should be.
func afterKey(tool, cursor string, first ...string) ([]string, error) {
	if cursor == "" {
		return first, nil
	}
	var parts []string
	js, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil {
		err = json.Unmarshal(js, &parts)
	}
	if err != nil || len(parts) != len(first) {
		return nil, badCursor(tool, cursor)
	}
	return parts, nil
}

func badCursor(tool, cursor string) error {
	return invalidf("cursor %s is not one that %s gave: pass next_cursor back as it is", quote(cursor), tool)
}
