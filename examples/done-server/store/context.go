package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"unicode"
)

// A ContextRef is a reference from a task to a document outside Done,
// which stays where it is.
type ContextRef struct {
	// Ref names the document: its connector's name and its id there, such
	// as local:notes/plan.md.
	Ref        string `json:"ref"`
	Title      string `json:"title,omitempty"`
	AttachedAt string `json:"attached_at"`
	AttachedBy string `json:"attached_by"`
}

// MaxRef is the longest ref, in characters.
const MaxRef = 2000

// checkRef returns an error unless ref looks like a reference to a
// document: connector:id, one line. Whether the connector exists is the
// caller's to check; whether the document does, no one's until it is read.
func checkRef(ref string) error {
	if err := checkText("ref", ref, MaxRef); err != nil {
		return err
	}
	name, id, ok := strings.Cut(ref, ":")
	if !ok || name == "" || strings.TrimSpace(id) == "" || strings.ContainsFunc(ref, unicode.IsControl) {
		return invalidf("ref %s is not a reference: want connector:id, such as local:notes/plan.md, as search_context gives", quote(ref))
	}
	return nil
}

func scanContextRef(row scanner) (ContextRef, error) {
	var c ContextRef
	return c, row.Scan(&c.Ref, &c.Title, &c.AttachedAt, &c.AttachedBy)
}

func (t *tx) taskContext(taskID string) ([]ContextRef, error) {
	return collect(t, scanContextRef, `SELECT ref, title, attached_at, attached_by FROM task_context WHERE task_id = ? ORDER BY attached_at, ref`, taskID)
}

// AttachContext stores a reference to a document on a task, and returns
// the task's references. A reference already there changes nothing.
func (s *Store) AttachContext(ctx context.Context, by Actor, taskID, ref, title string) ([]ContextRef, error) {
	return write(ctx, s, by, func(t *tx) ([]ContextRef, error) {
		if _, err := t.writableTask("task_id", taskID); err != nil {
			return nil, err
		}
		if err := checkRef(ref); err != nil {
			return nil, err
		}
		if title != "" {
			if err := checkName("title", title); err != nil {
				return nil, err
			}
		}
		if err := t.checkRoom("references", "task_context", "ref = ?", taskID, MaxTaskRefs, ref); err != nil {
			return nil, err
		}
		res, err := t.exec(`INSERT INTO task_context (task_id, ref, title, attached_at, attached_by) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, taskID, ref, title, t.nowText(), t.by.Name)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			if err := t.touchTask(taskID); err != nil {
				return nil, err
			}
			if err := t.record("attach_context_to_task", "task", taskID, taskID, map[string]any{"ref": ref, "title": title}); err != nil {
				return nil, err
			}
		}
		return t.taskContext(taskID)
	})
}

// DetachContext removes a reference from a task, and returns the task's
// references; the document itself is untouched. A reference that is not
// there is not an error. The activity entry keeps the reference.
func (s *Store) DetachContext(ctx context.Context, by Actor, taskID, ref string) ([]ContextRef, error) {
	return write(ctx, s, by, func(t *tx) ([]ContextRef, error) {
		if _, err := t.writableTask("task_id", taskID); err != nil {
			return nil, err
		}
		if err := checkRef(ref); err != nil {
			return nil, err
		}
		var title string
		err := t.queryRow(`DELETE FROM task_context WHERE task_id = ? AND ref = ? RETURNING title`, taskID, ref).Scan(&title)
		switch {
		case err == nil:
			if err := t.touchTask(taskID); err != nil {
				return nil, err
			}
			if err := t.record("detach_context_from_task", "task", taskID, taskID, map[string]any{"ref": ref, "title": title}); err != nil {
				return nil, err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
		return t.taskContext(taskID)
	})
}

// TaskContext returns the references of a live task, in the order they
// were attached, one page at a time.
func (s *Store) TaskContext(ctx context.Context, taskID string, p Page) (List[ContextRef], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[ContextRef], error) {
		if _, err := t.liveTask("task_id", taskID); err != nil {
			return List[ContextRef]{}, err
		}
		after, err := afterKey("list_task_context", p.Cursor, "", "")
		if err != nil {
			return List[ContextRef]{}, err
		}
		return pageOf(t, p, scanContextRef, func(c ContextRef) string { return keyCursor(c.AttachedAt, c.Ref) },
			`SELECT ref, title, attached_at, attached_by FROM task_context
			WHERE task_id = ? AND (attached_at, ref) > (?, ?) ORDER BY attached_at, ref LIMIT +?`, taskID, after[0], after[1])
	})
}

// RecordContextSaved records in the activity log that the caller saved a
// document outside Done, through a connector: the document is out of
// Done's reach, but who made it and when is not.
func (s *Store) RecordContextSaved(ctx context.Context, by Actor, ref, title string) error {
	_, err := write(ctx, s, by, func(t *tx) (struct{}, error) {
		if err := checkRef(ref); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, t.record("save_context", "document", ref, "", map[string]any{"title": title})
	})
	return err
}
