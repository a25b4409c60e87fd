package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// An Activity is one entry of the activity log: a change, who made it and
// when.
type Activity struct {
	ID          int64          `json:"id"`
	At          string         `json:"at"`
	Actor       string         `json:"actor"`
	ActorKind   Kind           `json:"actor_kind"`
	Action      string         `json:"action"`
	SubjectKind string         `json:"subject_kind"`
	SubjectID   string         `json:"subject_id"`
	Details     map[string]any `json:"details,omitempty"`
}

// A change is the old and new value of one field that a write overwrote.
type change struct {
	Old any `json:"old"`
	New any `json:"new"`
}

// record appends an entry to the activity log. taskID is the task the
// subject belongs to, if any, so that the task's history shows it.
func (t *tx) record(action, subjectKind, subjectID, taskID string, details map[string]any) error {
	if t.by.TokenID == "" {
		// Every change made through the tools has someone behind it; a
		// write without one is a bug, and must not reach the log.
		return fmt.Errorf("store: %s without an actor", action)
	}
	if details == nil {
		details = map[string]any{}
	}
	js, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("store: activity details: %w", err)
	}
	_, err = t.exec(`INSERT INTO activity (at, token_id, actor, actor_kind, action, subject_kind, subject_id, task_id, details)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.nowText(), t.by.TokenID, t.by.Name, string(t.by.Kind), action, subjectKind, subjectID, nullable(taskID), string(js))
	return err
}

// TaskActivity returns the history of a task, oldest first, one page at a
// time: the changes to the task itself and to its steps, comments, labels
// and approvals.
func (s *Store) TaskActivity(ctx context.Context, taskID string, p Page) (List[Activity], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[Activity], error) {
		if err := checkID("task_id", taskID); err != nil {
			return List[Activity]{}, err
		}
		// A task in the Trash still has its history: that is where one
		// finds out who deleted it.
		if _, err := t.taskRow(taskID); err != nil {
			return List[Activity]{}, err
		}
		var after int64
		if p.Cursor != "" {
			var err error
			if after, err = strconv.ParseInt(p.Cursor, 10, 64); err != nil || after < 0 {
				return List[Activity]{}, badCursor("get_task_activity", p.Cursor)
			}
		}
		return pageOf(t, p, scanActivity, func(a Activity) string { return strconv.FormatInt(a.ID, 10) },
			`SELECT id, at, actor, actor_kind, action, subject_kind, subject_id, details
			FROM activity WHERE task_id = ? AND id > ? ORDER BY id LIMIT +?`, taskID, after)
	})
}

// ActivitySince is a page of a task's activity since a moment (see
// [Store.TaskActivitySince]), and the id of the task's newest entry.
type ActivitySince struct {
	List[Activity]
	// Newest is the id of the task's newest entry of activity, wherever
	// it falls: what changes when the task does.
	Newest int64
}

// TaskActivitySince returns the history of a task from since (a time as
// the store writes them, such as an approval's requested_at) on, oldest
// first, one page at a time, and the id of its newest entry. It reads
// the page from an index of the task's activity by time, so that it
// costs what the page holds, not what came before since.
func (s *Store) TaskActivitySince(ctx context.Context, taskID, since string, p Page) (ActivitySince, error) {
	return read(ctx, s, Actor{}, func(t *tx) (ActivitySince, error) {
		if err := checkID("task_id", taskID); err != nil {
			return ActivitySince{}, err
		}
		if _, err := time.Parse(timeFormat, since); err != nil {
			return ActivitySince{}, invalidf("since %s is not a time as Done writes them (2025-06-02T09:00:00.000Z)", quote(since))
		}
		if _, err := t.taskRow(taskID); err != nil {
			return ActivitySince{}, err
		}
		after, err := afterKey("the page of the request", p.Cursor, since, "0")
		if err != nil {
			return ActivitySince{}, err
		}
		afterID, err := strconv.ParseInt(after[1], 10, 64)
		if err != nil || after[0] < since {
			return ActivitySince{}, badCursor("the page of the request", p.Cursor)
		}
		var a ActivitySince
		// The first page starts at since itself: (since, 0) comes before
		// every entry of that time.
		a.List, err = pageOf(t, p, scanActivity, func(a Activity) string { return keyCursor(a.At, strconv.FormatInt(a.ID, 10)) },
			`SELECT id, at, actor, actor_kind, action, subject_kind, subject_id, details
			FROM activity WHERE task_id = ? AND (at, id) > (?, ?) ORDER BY at, id LIMIT +?`, taskID, after[0], afterID)
		if err != nil {
			return ActivitySince{}, err
		}
		err = t.queryRow(`SELECT COALESCE(max(id), 0) FROM activity WHERE task_id = ?`, taskID).Scan(&a.Newest)
		return a, err
	})
}

func scanActivity(row scanner) (Activity, error) {
	var a Activity
	var details string
	if err := row.Scan(&a.ID, &a.At, &a.Actor, &a.ActorKind, &a.Action, &a.SubjectKind, &a.SubjectID, &details); err != nil {
		return a, err
	}
	if err := json.Unmarshal([]byte(details), &a.Details); err != nil {
		return a, fmt.Errorf("store: activity %d: %w", a.ID, err)
	}
	if len(a.Details) == 0 {
		a.Details = nil
	}
	return a, nil
}
