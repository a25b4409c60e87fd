package store

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
)

// A Label tags tasks across projects.
type Label struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Color     string `json:"color,omitempty"`
	CreatedAt string `json:"created_at"`
}

const labelColumns = `l.id, l.name, l.color, l.created_at`

func scanLabel(row scanner) (Label, error) {
	var l Label
	err := row.Scan(&l.ID, &l.Name, &l.Color, &l.CreatedAt)
	return l, err
}

var colorPattern = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// CreateLabel creates a label. Names are unique, ignoring ASCII case.
func (s *Store) CreateLabel(ctx context.Context, by Actor, name, color string) (Label, error) {
	return write(ctx, s, by, func(t *tx) (Label, error) {
		if err := checkName("name", name); err != nil {
			return Label{}, err
		}
		if color != "" && !colorPattern.MatchString(color) {
			return Label{}, invalidf("color %s is not valid: want #rrggbb", quote(color))
		}
		var existing string
		err := t.queryRow(t.pick(`SELECT id FROM labels WHERE name = ?`, `SELECT id FROM labels WHERE lower(name) = lower(?)`), name).Scan(&existing)
		switch {
		case err == nil:
			return Label{}, conflictf("a label named %s already exists: %q", quote(name), existing)
		case !errors.Is(err, sql.ErrNoRows):
			return Label{}, err
		}
		id := newID()
		if _, err := t.exec(`INSERT INTO labels (id, name, color, created_at) VALUES (?, ?, ?, ?)`, id, name, color, t.nowText()); err != nil {
			return Label{}, err
		}
		if err := t.record("create_label", "label", id, "", map[string]any{"name": name}); err != nil {
			return Label{}, err
		}
		return scanLabel(t.queryRow(`SELECT `+labelColumns+` FROM labels l WHERE l.id = ?`, id))
	})
}

// label loads the label called field.
func (t *tx) label(field, id string) (Label, error) {
	if err := checkID(field, id); err != nil {
		return Label{}, err
	}
	l, err := scanLabel(t.queryRow(`SELECT `+labelColumns+` FROM labels l WHERE l.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return l, notFoundf("label %q does not exist", id)
	}
	return l, err
}

// taskLabels returns the labels of a task, by name.
func (t *tx) taskLabels(taskID string) ([]Label, error) {
	return collect(t, scanLabel, `SELECT `+labelColumns+` FROM labels l JOIN task_labels tl ON tl.label_id = l.id
		WHERE tl.task_id = ? ORDER BY `+t.pick(`l.name`, `lower(l.name)`)+`, l.id`, taskID)
}

// AddLabelToTask puts a label on a task; it returns the task's labels. A
// label already there changes nothing.
func (s *Store) AddLabelToTask(ctx context.Context, by Actor, taskID, labelID string) ([]Label, error) {
	return write(ctx, s, by, func(t *tx) ([]Label, error) {
		if _, err := t.writableTask("task_id", taskID); err != nil {
			return nil, err
		}
		l, err := t.label("label_id", labelID)
		if err != nil {
			return nil, err
		}
		if err := t.checkRoom("labels", "task_labels", "label_id = ?", taskID, MaxTaskLabels, labelID); err != nil {
			return nil, err
		}
		res, err := t.exec(`INSERT INTO task_labels (task_id, label_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, taskID, labelID)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			if err := t.touchTask(taskID); err != nil {
				return nil, err
			}
			if err := t.record("add_label_to_task", "task", taskID, taskID, map[string]any{"label_id": labelID, "label": l.Name}); err != nil {
				return nil, err
			}
		}
		return t.taskLabels(taskID)
	})
}

// RemoveLabelFromTask takes a label off a task; it returns the task's
// labels. A label that is not there is not an error.
func (s *Store) RemoveLabelFromTask(ctx context.Context, by Actor, taskID, labelID string) ([]Label, error) {
	return write(ctx, s, by, func(t *tx) ([]Label, error) {
		if _, err := t.writableTask("task_id", taskID); err != nil {
			return nil, err
		}
		l, err := t.label("label_id", labelID)
		if err != nil {
			return nil, err
		}
		res, err := t.exec(`DELETE FROM task_labels WHERE task_id = ? AND label_id = ?`, taskID, labelID)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			if err := t.touchTask(taskID); err != nil {
				return nil, err
			}
			if err := t.record("remove_label_from_task", "task", taskID, taskID, map[string]any{"label_id": labelID, "label": l.Name}); err != nil {
				return nil, err
			}
		}
		return t.taskLabels(taskID)
	})
}

// ListLabels returns every label, by name, one page at a time.
func (s *Store) ListLabels(ctx context.Context, p Page) (List[Label], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[Label], error) {
		after, err := afterKey("list_labels", p.Cursor, "", "")
		if err != nil {
			return List[Label]{}, err
		}
		return pageOf(t, p, scanLabel, func(l Label) string { return keyCursor(l.Name, l.ID) },
			t.pick(`SELECT `+labelColumns+` FROM labels l WHERE (l.name, l.id) > (?, ?) ORDER BY l.name, l.id LIMIT +?`,
				`SELECT `+labelColumns+` FROM labels l WHERE (lower(l.name), l.id) > (lower(?), ?) ORDER BY lower(l.name), l.id LIMIT +?`), after[0], after[1])
	})
}
