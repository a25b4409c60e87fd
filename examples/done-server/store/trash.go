package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// A TrashItem is one deletion that can be undone with
// [Store.RestoreFromTrash]: a project with its tasks, a task with its
// subtasks, steps and comments, a step or a comment.
type TrashItem struct {
	ID            string `json:"id"`
	ItemKind      string `json:"item_kind"`
	ItemID        string `json:"item_id"`
	Title         string `json:"title"`
	DeletedAt     string `json:"deleted_at"`
	DeletedBy     string `json:"deleted_by"`
	DeletedByKind Kind   `json:"deleted_by_kind"`
}

// Nothing in Done deletes data for good: a deletion hides rows behind a
// Trash entry, by setting their trash_id, and a restore clears it. The rows
// a deletion hides are those that were live when it happened, so that a
// step deleted on its own before its task keeps its own entry, and is not
// brought back with the task.

func (t *tx) moveToTrash(kind, id, title string) (string, error) {
	trashID := newID()
	_, err := t.exec(`INSERT INTO trash (id, item_kind, item_id, title, deleted_at, deleted_by, deleted_by_kind) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		trashID, kind, id, title, t.nowText(), t.by.Name, string(t.by.Kind))
	return trashID, err
}

// trashTasks hides the live tasks that query selects (given args), with
// their live subtasks, behind trashID.
func (t *tx) trashTasks(trashID, query string, args ...any) error {
	_, err := t.exec(`WITH RECURSIVE doomed(id) AS (`+query+`
			UNION SELECT c.id FROM tasks c JOIN doomed ON c.parent_id = doomed.id WHERE c.trash_id IS NULL)
		UPDATE tasks SET trash_id = ? WHERE id IN (SELECT id FROM doomed)`, append(args, trashID)...)
	return err
}

// DeleteTask moves a task to the Trash, with its subtasks, steps, comments
// and labels. A task already in the Trash is left as it is.
func (s *Store) DeleteTask(ctx context.Context, by Actor, id string) (TrashItem, error) {
	return write(ctx, s, by, func(t *tx) (TrashItem, error) {
		if err := checkID("task_id", id); err != nil {
			return TrashItem{}, err
		}
		r, err := t.taskRow(id)
		if err != nil {
			return TrashItem{}, err
		}
		if r.trashID != "" {
			return t.trashItem(r.trashID)
		}
		if r.archived {
			return TrashItem{}, conflictf("task %q is in archived project %q, which is read-only: unarchive it first", id, r.ProjectID)
		}
		trashID, err := t.moveToTrash("task", id, r.Title)
		if err != nil {
			return TrashItem{}, err
		}
		if err := t.trashTasks(trashID, `SELECT id FROM tasks WHERE id = ?`, id); err != nil {
			return TrashItem{}, err
		}
		if err := t.record("delete_task", "task", id, id, map[string]any{"trash_id": trashID}); err != nil {
			return TrashItem{}, err
		}
		return t.trashItem(trashID)
	})
}

// DeleteProject moves a project to the Trash with all its tasks.
func (s *Store) DeleteProject(ctx context.Context, by Actor, id string) (TrashItem, error) {
	return write(ctx, s, by, func(t *tx) (TrashItem, error) {
		if err := checkID("project_id", id); err != nil {
			return TrashItem{}, err
		}
		p, trashID, err := t.projectRow(id)
		if err != nil {
			return TrashItem{}, err
		}
		if trashID != "" {
			return t.trashItem(trashID)
		}
		if trashID, err = t.moveToTrash("project", id, p.Name); err != nil {
			return TrashItem{}, err
		}
		if _, err := t.exec(`UPDATE projects SET trash_id = ? WHERE id = ?`, trashID, id); err != nil {
			return TrashItem{}, err
		}
		if err := t.trashTasks(trashID, `SELECT id FROM tasks WHERE project_id = ? AND trash_id IS NULL`, id); err != nil {
			return TrashItem{}, err
		}
		if err := t.record("delete_project", "project", id, "", map[string]any{"trash_id": trashID}); err != nil {
			return TrashItem{}, err
		}
		return t.trashItem(trashID)
	})
}

// DeleteStep moves a step to the Trash.
func (s *Store) DeleteStep(ctx context.Context, by Actor, id string) (TrashItem, error) {
	return write(ctx, s, by, func(t *tx) (TrashItem, error) {
		if err := checkID("step_id", id); err != nil {
			return TrashItem{}, err
		}
		st, trashID, err := t.stepRow(id)
		if err != nil {
			return TrashItem{}, err
		}
		if trashID != "" {
			return t.trashItem(trashID)
		}
		if _, err := t.writableTask("task_id", st.TaskID); err != nil {
			return TrashItem{}, err
		}
		if trashID, err = t.moveToTrash("step", id, st.Text); err != nil {
			return TrashItem{}, err
		}
		if _, err := t.exec(`UPDATE steps SET trash_id = ? WHERE id = ?`, trashID, id); err != nil {
			return TrashItem{}, err
		}
		if err := t.record("delete_step", "step", id, st.TaskID, map[string]any{"trash_id": trashID}); err != nil {
			return TrashItem{}, err
		}
		return t.trashItem(trashID)
	})
}

// DeleteComment moves a comment to the Trash.
func (s *Store) DeleteComment(ctx context.Context, by Actor, id string) (TrashItem, error) {
	return write(ctx, s, by, func(t *tx) (TrashItem, error) {
		if err := checkID("comment_id", id); err != nil {
			return TrashItem{}, err
		}
		c, trashID, err := t.commentRow(id)
		if err != nil {
			return TrashItem{}, err
		}
		if trashID != "" {
			return t.trashItem(trashID)
		}
		if _, err := t.writableTask("task_id", c.TaskID); err != nil {
			return TrashItem{}, err
		}
		title := []rune(c.Body)
		if len(title) > 80 {
			title = append(title[:79], '…')
		}
		if trashID, err = t.moveToTrash("comment", id, string(title)); err != nil {
			return TrashItem{}, err
		}
		if _, err := t.exec(`UPDATE comments SET trash_id = ? WHERE id = ?`, trashID, id); err != nil {
			return TrashItem{}, err
		}
		if err := t.record("delete_comment", "comment", id, c.TaskID, map[string]any{"trash_id": trashID}); err != nil {
			return TrashItem{}, err
		}
		return t.trashItem(trashID)
	})
}

func (t *tx) trashItem(id string) (TrashItem, error) {
	var it TrashItem
	err := t.queryRow(`SELECT id, item_kind, item_id, title, deleted_at, deleted_by, deleted_by_kind FROM trash WHERE id = ?`, id).
		Scan(&it.ID, &it.ItemKind, &it.ItemID, &it.Title, &it.DeletedAt, &it.DeletedBy, &it.DeletedByKind)
	return it, err
}

// A Restored tells what [Store.RestoreFromTrash] brought back.
type Restored struct {
	ItemKind string `json:"item_kind"`
	ItemID   string `json:"item_id"`
	// Restored is false when the item was not in the Trash.
	Restored bool `json:"restored"`
}

// RestoreFromTrash brings back a deleted project, task, step or comment,
// whole and to its place, by the id it had. An item that is not in the
// Trash is left as it is. An item that went to the Trash with another (a
// task deleted with its project) comes back only with that other.
func (s *Store) RestoreFromTrash(ctx context.Context, by Actor, itemID string) (Restored, error) {
	return write(ctx, s, by, func(t *tx) (Restored, error) {
		if err := checkID("item_id", itemID); err != nil {
			return Restored{}, err
		}
		kind, trashID, taskID, err := t.findItem(itemID)
		if err != nil {
			return Restored{}, err
		}
		res := Restored{ItemKind: kind, ItemID: itemID}
		if trashID == "" {
			return res, nil
		}
		it, err := t.trashItem(trashID)
		if err != nil {
			return Restored{}, err
		}
		if it.ItemID != itemID {
			return Restored{}, conflictf("%s %q went to the Trash with %s %q: restore that instead", kind, itemID, it.ItemKind, it.ItemID)
		}
		if err := t.checkParentLive(kind, itemID); err != nil {
			return Restored{}, err
		}
		for _, table := range []string{"projects", "tasks", "steps", "comments"} {
			if _, err := t.exec(fmt.Sprintf(`UPDATE %s SET trash_id = NULL WHERE trash_id = ?`, table), trashID); err != nil {
				return Restored{}, err
			}
		}
		if _, err := t.exec(`DELETE FROM trash WHERE id = ?`, trashID); err != nil {
			return Restored{}, err
		}
		res.Restored = true
		return res, t.record("restore_from_trash", kind, itemID, taskID, map[string]any{"trash_id": trashID})
	})
}

// findItem finds what itemID is, and the Trash entry hiding it, if any.
// taskID is the task the item belongs to, if any.
func (t *tx) findItem(itemID string) (kind, trashID, taskID string, err error) {
	err = t.queryRow(`
		SELECT 'project', COALESCE(trash_id, ''), '' FROM projects WHERE id = ?1
		UNION ALL SELECT 'task', COALESCE(trash_id, ''), id FROM tasks WHERE id = ?1
		UNION ALL SELECT 'step', COALESCE(trash_id, ''), task_id FROM steps WHERE id = ?1
		UNION ALL SELECT 'comment', COALESCE(trash_id, ''), task_id FROM comments WHERE id = ?1`, itemID).
		Scan(&kind, &trashID, &taskID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", "", notFoundf("nothing has the id %q: not a project, task, step or comment", itemID)
	}
	return kind, trashID, taskID, err
}

// checkParentLive refuses to restore an item into a container that is
// itself in the Trash, where it would be live but out of reach.
func (t *tx) checkParentLive(kind, id string) error {
	var query, parentKind string
	switch kind {
	case "task":
		query, parentKind = `SELECT p.id FROM tasks t JOIN projects p ON p.id = t.project_id WHERE t.id = ?1 AND p.trash_id IS NOT NULL
			UNION ALL SELECT p.id FROM tasks t JOIN tasks p ON p.id = t.parent_id WHERE t.id = ?1 AND p.trash_id IS NOT NULL`, "its project or parent task"
	case "step":
		query, parentKind = `SELECT p.id FROM steps s JOIN tasks p ON p.id = s.task_id WHERE s.id = ?1 AND p.trash_id IS NOT NULL`, "its task"
	case "comment":
		query, parentKind = `SELECT p.id FROM comments c JOIN tasks p ON p.id = c.task_id WHERE c.id = ?1 AND p.trash_id IS NOT NULL`, "its task"
	default:
		return nil
	}
	var parent string
	err := t.queryRow(query+` LIMIT 1`, id).Scan(&parent)
	switch {
	case err == nil:
		return conflictf("%s %q cannot come back while %s (%q) is in the Trash: restore that first", kind, id, parentKind, parent)
	case errors.Is(err, sql.ErrNoRows):
		return nil
	}
	return err
}

// ListTrash returns what can be restored, most recent deletion first, one
// page at a time.
func (s *Store) ListTrash(ctx context.Context, p Page) (List[TrashItem], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[TrashItem], error) {
		// "~" sorts after every time and every id: the first page starts
		// before them all.
		before, err := afterKey("list_trash", p.Cursor, "~", "~")
		if err != nil {
			return List[TrashItem]{}, err
		}
		return pageOf(t, p, func(row scanner) (TrashItem, error) {
			var it TrashItem
			return it, row.Scan(&it.ID, &it.ItemKind, &it.ItemID, &it.Title, &it.DeletedAt, &it.DeletedBy, &it.DeletedByKind)
		}, func(it TrashItem) string { return keyCursor(it.DeletedAt, it.ID) },
			`SELECT id, item_kind, item_id, title, deleted_at, deleted_by, deleted_by_kind FROM trash
			WHERE (deleted_at, id) < (?, ?) ORDER BY deleted_at DESC, id DESC LIMIT +?`, before[0], before[1])
	})
}
