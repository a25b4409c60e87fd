package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// StepStatus is the state of a step.
type StepStatus string

// The states of a step.
const (
	StepTodo    StepStatus = "todo"
	StepDoing   StepStatus = "doing"
	StepDone    StepStatus = "done"
	StepSkipped StepStatus = "skipped"
)

// StepStatuses lists every StepStatus.
var StepStatuses = []StepStatus{StepTodo, StepDoing, StepDone, StepSkipped}

// A Step is one item of a task's checklist.
type Step struct {
	ID       string     `json:"id"`
	TaskID   string     `json:"task_id"`
	Position int        `json:"position"`
	Text     string     `json:"text"`
	Notes    string     `json:"notes,omitempty"`
	Status   StepStatus `json:"status"`
	// StatusChangedAt and StatusChangedBy tell when and by whom the status
	// was last set.
	StatusChangedAt string `json:"status_changed_at"`
	StatusChangedBy string `json:"status_changed_by"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
}

const stepColumns = `s.id, s.task_id, s.position, s.text, s.notes, s.status, s.status_changed_at, s.status_changed_by, s.created_at, s.updated_at`

func scanStep(row scanner) (Step, error) {
	var s Step
	err := row.Scan(&s.ID, &s.TaskID, &s.Position, &s.Text, &s.Notes, &s.Status, &s.StatusChangedAt, &s.StatusChangedBy, &s.CreatedAt, &s.UpdatedAt)
	return s, err
}

// steps returns the live steps of a task in order.
func (t *tx) steps(taskID string) ([]Step, error) {
	return collect(t, scanStep, `SELECT `+stepColumns+` FROM steps s WHERE s.task_id = ? AND s.trash_id IS NULL ORDER BY s.position, s.id`, taskID)
}

// stepRow loads a step, live or in the Trash.
func (t *tx) stepRow(id string) (s Step, trashID string, err error) {
	s, err = scanStep(scanExtra(t.queryRow(`SELECT `+stepColumns+`, COALESCE(s.trash_id, '') FROM steps s WHERE s.id = ?`, id), &trashID))
	if errors.Is(err, sql.ErrNoRows) {
		return s, "", notFoundf("step %q does not exist", id)
	}
	return s, trashID, err
}

// writableStep loads a live step of a task that may change.
func (t *tx) writableStep(id string) (Step, error) {
	if err := checkID("step_id", id); err != nil {
		return Step{}, err
	}
	s, trashID, err := t.stepRow(id)
	if err != nil {
		return s, err
	}
	if trashID != "" {
		return s, conflictf("step %q is in the Trash: restore it first", id)
	}
	if _, err := t.writableTask("task_id", s.TaskID); err != nil {
		return s, err
	}
	return s, nil
}

// insertStep appends a step to a task.
func (t *tx) insertStep(taskID, text, notes string) (Step, error) {
	if err := checkName("text", text); err != nil {
		return Step{}, err
	}
	if err := checkText("notes", notes, MaxText); err != nil {
		return Step{}, err
	}
	// Steps in the Trash keep their position, so that a restored step
	// comes back to its place; new steps go after them too.
	var pos int
	if err := t.queryRow(`SELECT COALESCE(max(position), 0) + 1 FROM steps WHERE task_id = ?`, taskID).Scan(&pos); err != nil {
		return Step{}, err
	}
	id, now := newID(), t.nowText()
	_, err := t.exec(`INSERT INTO steps (id, task_id, position, text, notes, status, status_changed_at, status_changed_by, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, 'todo', ?, ?, ?, ?)`, id, taskID, pos, text, notes, now, t.by.Name, now, now)
	if err != nil {
		return Step{}, err
	}
	s, _, err := t.stepRow(id)
	return s, err
}

// AddStep appends a step to a task.
func (s *Store) AddStep(ctx context.Context, by Actor, taskID, text, notes string) (Step, error) {
	return write(ctx, s, by, func(t *tx) (Step, error) {
		if _, err := t.writableTask("task_id", taskID); err != nil {
			return Step{}, err
		}
		st, err := t.insertStep(taskID, text, notes)
		if err != nil {
			return Step{}, err
		}
		return st, t.record("add_step", "step", st.ID, taskID, map[string]any{"text": text})
	})
}

// NewSubtask is a child task that [Store.DecomposeTask] creates, as
// decompose_task takes it.
type NewSubtask struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Assignee    string `json:"assignee,omitempty" jsonschema:"the name of the person or agent the subtask is for"`
}

// A Decomposition is what [Store.DecomposeTask] created.
type Decomposition struct {
	Subtasks []Task `json:"subtasks"`
	Steps    []Step `json:"steps"`
}

// DecomposeTask splits a task: it creates child tasks, in the task's
// project and with its auto_close, and appends steps. Each call adds new
// rows.
func (s *Store) DecomposeTask(ctx context.Context, by Actor, taskID string, subtasks []NewSubtask, steps []string) (Decomposition, error) {
	return write(ctx, s, by, func(t *tx) (Decomposition, error) {
		parent, err := t.writableTask("task_id", taskID)
		if err != nil {
			return Decomposition{}, err
		}
		if len(subtasks)+len(steps) == 0 {
			return Decomposition{}, invalidf("give at least one subtask or step")
		}
		const max = 100
		if len(subtasks) > max || len(steps) > max {
			return Decomposition{}, invalidf("at most %d subtasks and %d steps at once", max, max)
		}
		d := Decomposition{Subtasks: []Task{}, Steps: []Step{}}
		for i, n := range subtasks {
			autoClose := parent.AutoClose
			task, err := t.createTask(NewTask{
				Title: n.Title, Description: n.Description, Assignee: n.Assignee,
				ProjectID: parent.ProjectID, ParentID: taskID, AutoClose: &autoClose,
			})
			if err != nil {
				return Decomposition{}, within(fmt.Sprintf("subtasks[%d]", i), err)
			}
			d.Subtasks = append(d.Subtasks, task)
			if err := t.record("decompose_task", "task", task.ID, task.ID, map[string]any{"parent_id": taskID, "title": task.Title}); err != nil {
				return Decomposition{}, err
			}
		}
		for i, text := range steps {
			st, err := t.insertStep(taskID, text, "")
			if err != nil {
				return Decomposition{}, within(fmt.Sprintf("steps[%d]", i), err)
			}
			d.Steps = append(d.Steps, st)
		}
		ids := make([]string, len(d.Subtasks))
		for i, task := range d.Subtasks {
			ids[i] = task.ID
		}
		return d, t.record("decompose_task", "task", taskID, taskID, map[string]any{"subtasks": ids, "steps": len(d.Steps)})
	})
}

// UpdateStep overwrites the text or notes of a step; nil leaves them as
// they are. The activity entry keeps the old values.
func (s *Store) UpdateStep(ctx context.Context, by Actor, id string, text, notes *string) (Step, error) {
	return write(ctx, s, by, func(t *tx) (Step, error) {
		old, err := t.writableStep(id)
		if err != nil {
			return Step{}, err
		}
		d := diff{}
		if text != nil {
			if err := checkName("text", *text); err != nil {
				return Step{}, err
			}
			d.add("text", old.Text, *text)
		}
		if notes != nil {
			if err := checkText("notes", *notes, MaxText); err != nil {
				return Step{}, err
			}
			d.add("notes", old.Notes, *notes)
		}
		if len(d) == 0 {
			return old, nil
		}
		_, err = t.exec(`UPDATE steps SET text = ?, notes = ?, updated_at = ? WHERE id = ?`,
			d.str("text", old.Text), d.str("notes", old.Notes), t.nowText(), id)
		if err != nil {
			return Step{}, err
		}
		if err := t.record("update_step", "step", id, old.TaskID, d.details()); err != nil {
			return Step{}, err
		}
		st, _, err := t.stepRow(id)
		return st, err
	})
}

// SetStepStatus sets the status of a step.
func (s *Store) SetStepStatus(ctx context.Context, by Actor, id string, status StepStatus) (Step, error) {
	return write(ctx, s, by, func(t *tx) (Step, error) {
		if !slices.Contains(StepStatuses, status) {
			return Step{}, invalidf("status %s is not valid: want todo, doing, done or skipped", quote(string(status)))
		}
		old, err := t.writableStep(id)
		if err != nil {
			return Step{}, err
		}
		if old.Status == status {
			return old, nil
		}
		now := t.nowText()
		_, err = t.exec(`UPDATE steps SET status = ?, status_changed_at = ?, status_changed_by = ?, updated_at = ? WHERE id = ?`,
			string(status), now, t.by.Name, now, id)
		if err != nil {
			return Step{}, err
		}
		if err := t.record("set_step_status", "step", id, old.TaskID, map[string]any{"status": change{old.Status, status}}); err != nil {
			return Step{}, err
		}
		st, _, err := t.stepRow(id)
		return st, err
	})
}

// ReorderSteps sets the order of a task's steps. ids must hold each live
// step of the task exactly once.
func (s *Store) ReorderSteps(ctx context.Context, by Actor, taskID string, ids []string) ([]Step, error) {
	return write(ctx, s, by, func(t *tx) ([]Step, error) {
		if _, err := t.writableTask("task_id", taskID); err != nil {
			return nil, err
		}
		steps, err := t.steps(taskID)
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			if err := checkID(fmt.Sprintf("step_ids[%d]", i), id); err != nil {
				return nil, err
			}
		}
		current := make([]string, len(steps))
		for i, st := range steps {
			current[i] = st.ID
		}
		want, have := slices.Clone(ids), slices.Clone(current)
		slices.Sort(want)
		slices.Sort(have)
		if !slices.Equal(want, have) {
			return nil, invalidf("step_ids must list each of the %d steps of task %q exactly once, as list_steps shows them", len(current), taskID)
		}
		if slices.Equal(ids, current) {
			return steps, nil
		}
		// Positions are renumbered from after the highest in use, so that
		// steps in the Trash keep theirs.
		var base int
		if err := t.queryRow(`SELECT COALESCE(max(position), 0) FROM steps WHERE task_id = ?`, taskID).Scan(&base); err != nil {
			return nil, err
		}
		now := t.nowText()
		for i, id := range ids {
			if _, err := t.exec(`UPDATE steps SET position = ?, updated_at = ? WHERE id = ?`, base+1+i, now, id); err != nil {
				return nil, err
			}
		}
		if err := t.record("reorder_steps", "task", taskID, taskID, map[string]any{"order": change{current, ids}}); err != nil {
			return nil, err
		}
		return t.steps(taskID)
	})
}

// ListSteps returns the steps of a live task in order, one page at a
// time.
func (s *Store) ListSteps(ctx context.Context, taskID string, p Page) (List[Step], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[Step], error) {
		if _, err := t.liveTask("task_id", taskID); err != nil {
			return List[Step]{}, err
		}
		after, err := afterKey("list_steps", p.Cursor, "0", "")
		if err != nil {
			return List[Step]{}, err
		}
		position, err := strconv.Atoi(after[0])
		if err != nil {
			return List[Step]{}, badCursor("list_steps", p.Cursor)
		}
		return pageOf(t, p, scanStep, func(s Step) string { return keyCursor(strconv.Itoa(s.Position), s.ID) },
			`SELECT `+stepColumns+` FROM steps s WHERE s.task_id = ? AND s.trash_id IS NULL AND (s.position, s.id) > (?, ?)
			ORDER BY s.position, s.id LIMIT +?`, taskID, position, after[1])
	})
}

// GetStep returns a live step.
func (s *Store) GetStep(ctx context.Context, id string) (Step, error) {
	return read(ctx, s, Actor{}, func(t *tx) (Step, error) {
		if err := checkID("step_id", id); err != nil {
			return Step{}, err
		}
		st, trashID, err := t.stepRow(id)
		if err != nil {
			return st, err
		}
		if trashID != "" {
			return st, conflictf("step %q is in the Trash: restore it first", id)
		}
		if _, err := t.liveTask("task_id", st.TaskID); err != nil {
			return st, err
		}
		return st, nil
	})
}
