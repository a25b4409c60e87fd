package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
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
