package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// A Comment is a message on a task, by a person or an agent.
type Comment struct {
	ID         string `json:"id"`
	TaskID     string `json:"task_id"`
	Author     string `json:"author"`
	AuthorKind Kind   `json:"author_kind"`
	Body       string `json:"body"`
	CreatedAt  string `json:"created_at"`
	EditedAt   string `json:"edited_at,omitempty"`
}

const commentColumns = `c.id, c.task_id, c.author, c.author_kind, c.body, c.created_at, COALESCE(c.edited_at, '')`

func scanComment(row scanner) (Comment, error) {
	var c Comment
	err := row.Scan(&c.ID, &c.TaskID, &c.Author, &c.AuthorKind, &c.Body, &c.CreatedAt, &c.EditedAt)
	return c, err
}

// commentRow loads a comment, live or in the Trash.
func (t *tx) commentRow(id string) (c Comment, trashID string, err error) {
	c, err = scanComment(scanExtra(t.queryRow(`SELECT `+commentColumns+`, COALESCE(c.trash_id, '') FROM comments c WHERE c.id = ?`, id), &trashID))
	if errors.Is(err, sql.ErrNoRows) {
		return c, "", notFoundf("comment %q does not exist", id)
	}
	return c, trashID, err
}

// writableComment loads a live comment on a task that may change.
func (t *tx) writableComment(id string) (Comment, error) {
	if err := checkID("comment_id", id); err != nil {
		return Comment{}, err
	}
	c, trashID, err := t.commentRow(id)
	if err != nil {
		return c, err
	}
	if trashID != "" {
		return c, conflictf("comment %q is in the Trash: restore it first", id)
	}
	if _, err := t.writableTask("task_id", c.TaskID); err != nil {
		return c, err
	}
	return c, nil
}

func checkBody(body string) error {
	if err := checkText("body", body, MaxText); err != nil {
		return err
	}
	if strings.TrimSpace(body) == "" {
		return invalidf("body must not be empty")
	}
	return nil
}

// CommentOnTask posts a comment on a task.
func (s *Store) CommentOnTask(ctx context.Context, by Actor, taskID, body string) (Comment, error) {
	return write(ctx, s, by, func(t *tx) (Comment, error) {
		if _, err := t.writableTask("task_id", taskID); err != nil {
			return Comment{}, err
		}
		if err := checkBody(body); err != nil {
			return Comment{}, err
		}
		id := newID()
		_, err := t.exec(`INSERT INTO comments (id, task_id, author, author_kind, body, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			id, taskID, t.by.Name, string(t.by.Kind), body, t.nowText())
		if err != nil {
			return Comment{}, err
		}
		if err := t.record("comment_on_task", "comment", id, taskID, nil); err != nil {
			return Comment{}, err
		}
		c, _, err := t.commentRow(id)
		return c, err
	})
}

// EditComment replaces the body of a comment. Only its author may edit
// it. The activity entry keeps the old body.
func (s *Store) EditComment(ctx context.Context, by Actor, id, body string) (Comment, error) {
	return write(ctx, s, by, func(t *tx) (Comment, error) {
		c, err := t.writableComment(id)
		if err != nil {
			return Comment{}, err
		}
		if c.Author != t.by.Name {
			return Comment{}, forbiddenf("comment %q was written by %s: only its author may edit it", id, quote(c.Author))
		}
		if err := checkBody(body); err != nil {
			return Comment{}, err
		}
		if c.Body == body {
			return c, nil
		}
		if _, err := t.exec(`UPDATE comments SET body = ?, edited_at = ? WHERE id = ?`, body, t.nowText(), id); err != nil {
			return Comment{}, err
		}
		if err := t.record("edit_comment", "comment", id, c.TaskID, map[string]any{"body": change{c.Body, body}}); err != nil {
			return Comment{}, err
		}
		c, _, err = t.commentRow(id)
		return c, err
	})
}

// ListComments returns the live comments of a live task, oldest first,
// one page at a time.
func (s *Store) ListComments(ctx context.Context, taskID string, p Page) (List[Comment], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[Comment], error) {
		if _, err := t.liveTask("task_id", taskID); err != nil {
			return List[Comment]{}, err
		}
		if err := checkOptionalID("cursor", p.Cursor); err != nil {
			return List[Comment]{}, err
		}
		return pageOf(t, p, scanComment, func(c Comment) string { return c.ID }, `SELECT `+commentColumns+` FROM comments c
			WHERE c.task_id = ? AND c.trash_id IS NULL AND c.id > ? ORDER BY c.id LIMIT +?`, taskID, p.Cursor)
	})
}
