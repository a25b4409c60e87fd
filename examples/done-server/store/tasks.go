package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Status is the state of a task.
type Status string

// The states of a task. A task that is not auto-close goes from open to
// done only through awaiting_approval and a human's approval.
const (
	StatusOpen             Status = "open"
	StatusBlocked          Status = "blocked"
	StatusAwaitingApproval Status = "awaiting_approval"
	StatusDone             Status = "done"
)

// Statuses lists every Status, for schemas and validation.
var Statuses = []Status{StatusOpen, StatusBlocked, StatusAwaitingApproval, StatusDone}

// Priority orders tasks: get_next_task takes the most urgent first.
type Priority string

// The priorities, from least to most urgent.
const (
	PriorityLow    Priority = "low"
	PriorityNormal Priority = "normal"
	PriorityHigh   Priority = "high"
	PriorityUrgent Priority = "urgent"
)

// Priorities lists every Priority from least to most urgent.
var Priorities = []Priority{PriorityLow, PriorityNormal, PriorityHigh, PriorityUrgent}

// A Task is a unit of work, for a person or an agent.
type Task struct {
	ID          string   `json:"id"`
	ProjectID   string   `json:"project_id,omitempty"`
	ParentID    string   `json:"parent_id,omitempty"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Status      Status   `json:"status"`
	Priority    Priority `json:"priority"`
	// Assignee is the name of the person or agent the task is for.
	Assignee string `json:"assignee,omitempty"`
	// AutoClose tasks close directly; the others need a human's approval.
	AutoClose bool `json:"auto_close"`
	// AutoCloseBy is the person who made the task auto-close: directly, or
	// through the default of its project or parent task. Only a person may
	// decide that a task skips the approval gate, so an auto-close task
	// always names one.
	AutoCloseBy   string `json:"auto_close_by,omitempty"`
	Due           string `json:"due,omitempty"`
	BlockedReason string `json:"blocked_reason,omitempty"`
	BlockedBy     string `json:"blocked_by,omitempty"`
	// ScheduledStart and ScheduledEnd are when the task is planned: both
	// dates (the end included) or both times; empty if it is not.
	ScheduledStart string `json:"scheduled_start,omitempty"`
	ScheduledEnd   string `json:"scheduled_end,omitempty"`
	CreatedAt      string `json:"created_at"`
	CreatedBy      string `json:"created_by"`
	UpdatedAt      string `json:"updated_at"`
	ClosedAt       string `json:"closed_at,omitempty"`
}

const taskColumns = `t.id, COALESCE(t.project_id, ''), COALESCE(t.parent_id, ''), t.title, t.description,
	t.status, t.priority, t.assignee, t.auto_close, t.auto_close_by, t.due, t.blocked_reason, COALESCE(t.blocked_by, ''),
	t.scheduled_start, t.scheduled_end, t.created_at, t.created_by, t.updated_at, COALESCE(t.closed_at, '')`

func scanTask(row scanner) (Task, error) {
	var x Task
	err := row.Scan(&x.ID, &x.ProjectID, &x.ParentID, &x.Title, &x.Description,
		&x.Status, &x.Priority, &x.Assignee, &x.AutoClose, &x.AutoCloseBy, &x.Due, &x.BlockedReason, &x.BlockedBy,
		&x.ScheduledStart, &x.ScheduledEnd, &x.CreatedAt, &x.CreatedBy, &x.UpdatedAt, &x.ClosedAt)
	return x, err
}

// taskRecord is a task with where it stands: in the Trash or not, in an
// archived project or not.
type taskRecord struct {
	Task
	trashID  string
	archived bool
}

// taskRow loads a task, live or in the Trash.
func (t *tx) taskRow(id string) (taskRecord, error) {
	var r taskRecord
	var err error
	r.Task, err = scanTask(scanExtra(t.queryRow(`SELECT `+taskColumns+`, COALESCE(t.trash_id, ''), p.archived_at IS NOT NULL
		FROM tasks t LEFT JOIN projects p ON p.id = t.project_id WHERE t.id = ?`, id), &r.trashID, &r.archived))
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFoundf("task %q does not exist", id)
	}
	return r, err
}

// scanExtra returns a scanner that scans the columns of row beyond those
// its caller asks for into extra.
func scanExtra(row scanner, extra ...any) scanner {
	return scanFunc(func(dest ...any) error { return row.Scan(append(dest, extra...)...) })
}

type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// liveTask loads the task called field, which must not be in the Trash.
func (t *tx) liveTask(field, id string) (taskRecord, error) {
	if err := checkID(field, id); err != nil {
		return taskRecord{}, err
	}
	r, err := t.taskRow(id)
	if err != nil {
		return r, err
	}
	if r.trashID != "" {
		return r, conflictf("task %q is in the Trash: restore it first", id)
	}
	return r, nil
}

// writableTask loads a live task that may change: its project, if any, is
// not archived.
func (t *tx) writableTask(field, id string) (taskRecord, error) {
	r, err := t.liveTask(field, id)
	if err != nil {
		return r, err
	}
	if r.archived {
		return r, conflictf("task %q is in archived project %q, which is read-only: unarchive it first", id, r.ProjectID)
	}
	return r, nil
}

// touchTask sets the task's updated_at.
func (t *tx) touchTask(id string) error {
	_, err := t.exec(`UPDATE tasks SET updated_at = ? WHERE id = ?`, t.nowText(), id)
	return err
}

// NewTask holds the fields of a task to create, as create_task takes
// them. Empty fields take their defaults: no project, normal priority,
// and from the project, if any, its auto-close setting and its default
// assignee.
type NewTask struct {
	Title       string   `json:"title" jsonschema:"a short title, one line"`
	Description string   `json:"description,omitempty"`
	ProjectID   string   `json:"project_id,omitempty" jsonschema:"the project of the task; it gives the defaults of auto_close and assignee"`
	ParentID    string   `json:"parent_id,omitempty" jsonschema:"makes the new task a subtask of this one"`
	Assignee    string   `json:"assignee,omitempty" jsonschema:"the name of the person or agent the task is for"`
	AutoClose   *bool    `json:"auto_close,omitempty" jsonschema:"true (humans only): close_task finishes the task at once; false: closing needs a human's approval; left out, the project's or parent task's"`
	Due         string   `json:"due,omitempty" jsonschema:"the due date, YYYY-MM-DD"`
	Priority    Priority `json:"priority,omitempty" jsonschema:"normal if left out"`
}

// CreateTask creates a task.
func (s *Store) CreateTask(ctx context.Context, by Actor, n NewTask) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		task, err := t.createTask(n)
		if err != nil {
			return Task{}, err
		}
		details := map[string]any{"title": task.Title}
		if task.AutoClose {
			details["auto_close_by"] = task.AutoCloseBy
		}
		return task, t.record("create_task", "task", task.ID, task.ID, details)
	})
}

func (t *tx) createTask(n NewTask) (Task, error) {
	if err := checkName("title", n.Title); err != nil {
		return Task{}, err
	}
	if err := checkText("description", n.Description, MaxText); err != nil {
		return Task{}, err
	}
	if err := checkDue("due", n.Due); err != nil {
		return Task{}, err
	}
	if n.Priority == "" {
		n.Priority = PriorityNormal
	}
	if err := checkPriority(n.Priority); err != nil {
		return Task{}, err
	}
	// A task takes its auto_close from its parent task, or else from its
	// project, with the person who decided it there.
	autoClose, autoCloseBy := false, ""
	if n.ParentID != "" {
		parent, err := t.writableTask("parent_id", n.ParentID)
		if err != nil {
			return Task{}, err
		}
		autoClose, autoCloseBy = parent.AutoClose, parent.AutoCloseBy
	}
	if n.ProjectID != "" {
		p, err := t.writableProject("project_id", n.ProjectID)
		if err != nil {
			return Task{}, err
		}
		if n.ParentID == "" {
			autoClose, autoCloseBy = p.AutoClose, p.AutoCloseBy
		}
		// A paused default assignee is passed over: it takes no work,
		// and the task waits for someone.
		if n.Assignee == "" && p.DefaultAssignee != "" {
			paused, err := t.pause(p.DefaultAssignee)
			if err != nil {
				return Task{}, err
			}
			if paused == nil {
				n.Assignee = p.DefaultAssignee
			}
		}
	}
	if err := t.checkAssignee("assignee", n.Assignee); err != nil {
		return Task{}, err
	}
	if n.Assignee != "" {
		if err := t.checkTakesWork(n.Assignee); err != nil {
			return Task{}, err
		}
	}
	if n.AutoClose != nil && *n.AutoClose != autoClose {
		if err := t.decideAutoClose("task", *n.AutoClose); err != nil {
			return Task{}, err
		}
		autoClose, autoCloseBy = *n.AutoClose, t.autoCloseBy(*n.AutoClose)
	}
	id := newID()
	now := t.nowText()
	_, err := t.exec(`INSERT INTO tasks (id, project_id, parent_id, title, description, status, priority, assignee,
			auto_close, auto_close_by, due, created_at, created_by, updated_at)
		VALUES (?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, nullable(n.ProjectID), nullable(n.ParentID), n.Title, n.Description, string(n.Priority), n.Assignee,
		autoClose, autoCloseBy, n.Due, now, t.by.Name, now)
	if err != nil {
		return Task{}, err
	}
	r, err := t.taskRow(id)
	return r.Task, err
}

// decideAutoClose returns an error unless the caller may set the
// auto_close of a task or project (what) to on: only a person may decide
// whether closing a task needs a human's approval, since an agent that
// could decide it could close what it must not. An agent may still turn
// it off, which only adds the gate back.
func (t *tx) decideAutoClose(what string, on bool) error {
	if on && t.by.Kind != Human {
		return forbiddenf("only a human may make a %s auto-close: it lets closing skip a human's approval, and %s is an agent", what, quote(t.by.Name))
	}
	return nil
}

// autoCloseBy returns who an auto_close set to on by the caller names.
func (t *tx) autoCloseBy(on bool) string {
	if on {
		return t.by.Name
	}
	return ""
}

func checkDue(field, due string) error {
	if due == "" {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, due); err != nil {
		return invalidf("%s %s is not a date in the form 2025-12-31", field, quote(due))
	}
	return nil
}

func checkPriority(p Priority) error {
	for _, q := range Priorities {
		if p == q {
			return nil
		}
	}
	return invalidf("priority %s is not valid: want low, normal, high or urgent", quote(string(p)))
}

// checkAssignee returns an error unless name, the argument called field,
// is empty or names a person or an agent that has, or had, a token.
func (t *tx) checkAssignee(field, name string) error {
	if name == "" {
		return nil
	}
	if err := checkName(field, name); err != nil {
		return err
	}
	ok, err := t.exists(`SELECT 1 FROM tokens WHERE name = ?`, name)
	if err != nil {
		return err
	}
	if !ok {
		return notFoundf("%s %s is nobody Done knows: no token has that name", field, quote(name))
	}
	return nil
}

// TaskPatch holds the fields update_task may overwrite, as it takes them;
// nil leaves a field as it is.
type TaskPatch struct {
	Title       *string   `json:"title,omitempty"`
	Description *string   `json:"description,omitempty"`
	Due         *string   `json:"due,omitempty" jsonschema:"the due date, YYYY-MM-DD, or an empty string for none"`
	Priority    *Priority `json:"priority,omitempty"`
	AutoClose   *bool     `json:"auto_close,omitempty" jsonschema:"only a human may set it to true"`
}

// UpdateTask overwrites the fields set in p. The activity entry keeps the
// old values. Setting fields to the values they have changes nothing.
//
// Only a human may make a task auto-close (see [Task.AutoCloseBy]); an
// agent may only turn it off, which puts the gate back.
func (s *Store) UpdateTask(ctx context.Context, by Actor, id string, p TaskPatch) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", id)
		if err != nil {
			return Task{}, err
		}
		d := diff{}
		if p.Title != nil {
			if err := checkName("title", *p.Title); err != nil {
				return Task{}, err
			}
			d.add("title", r.Title, *p.Title)
		}
		if p.Description != nil {
			if err := checkText("description", *p.Description, MaxText); err != nil {
				return Task{}, err
			}
			d.add("description", r.Description, *p.Description)
		}
		if p.Due != nil {
			if err := checkDue("due", *p.Due); err != nil {
				return Task{}, err
			}
			d.add("due", r.Due, *p.Due)
		}
		if p.Priority != nil {
			if err := checkPriority(*p.Priority); err != nil {
				return Task{}, err
			}
			d.add("priority", string(r.Priority), string(*p.Priority))
		}
		if p.AutoClose != nil && *p.AutoClose != r.AutoClose {
			if err := t.decideAutoClose("task", *p.AutoClose); err != nil {
				return Task{}, err
			}
			d.add("auto_close", r.AutoClose, *p.AutoClose)
			d.add("auto_close_by", r.AutoCloseBy, t.autoCloseBy(*p.AutoClose))
		}
		if len(d) == 0 {
			return r.Task, nil
		}
		_, err = t.exec(`UPDATE tasks SET title = ?, description = ?, due = ?, priority = ?, auto_close = ?, auto_close_by = ?, updated_at = ? WHERE id = ?`,
			d.str("title", r.Title), d.str("description", r.Description), d.str("due", r.Due),
			d.str("priority", string(r.Priority)), d.boolean("auto_close", r.AutoClose), d.str("auto_close_by", r.AutoCloseBy), t.nowText(), id)
		if err != nil {
			return Task{}, err
		}
		if err := t.record("update_task", "task", id, id, d.details()); err != nil {
			return Task{}, err
		}
		r, err = t.taskRow(id)
		return r.Task, err
	})
}

// diff collects the fields a write changes.
type diff map[string]change

// add notes field as changing from old to new, unless they are equal.
func (d diff) add(field string, old, new any) {
	if old != new {
		d[field] = change{old, new}
	}
}

// str returns the new value of field if it changes, and old otherwise.
func (d diff) str(field, old string) string {
	if c, ok := d[field]; ok {
		return c.New.(string)
	}
	return old
}

func (d diff) boolean(field string, old bool) bool {
	if c, ok := d[field]; ok {
		return c.New.(bool)
	}
	return old
}

func (d diff) details() map[string]any {
	m := make(map[string]any, len(d))
	for k, v := range d {
		m[k] = v
	}
	return m
}

// MoveTask puts a task in a project, or in none if projectID is empty.
func (s *Store) MoveTask(ctx context.Context, by Actor, id, projectID string) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", id)
		if err != nil {
			return Task{}, err
		}
		if projectID != "" {
			if _, err := t.writableProject("project_id", projectID); err != nil {
				return Task{}, err
			}
		}
		if r.ProjectID == projectID {
			return r.Task, nil
		}
		if _, err := t.exec(`UPDATE tasks SET project_id = ?, updated_at = ? WHERE id = ?`, nullable(projectID), t.nowText(), id); err != nil {
			return Task{}, err
		}
		if err := t.record("move_task", "task", id, id, map[string]any{"project_id": change{r.ProjectID, projectID}}); err != nil {
			return Task{}, err
		}
		r, err = t.taskRow(id)
		return r.Task, err
	})
}

// AssignTask sets who a task is for; an empty assignee leaves it for
// no one. A paused agent is refused: it takes no work.
func (s *Store) AssignTask(ctx context.Context, by Actor, id, assignee string) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", id)
		if err != nil {
			return Task{}, err
		}
		if err := t.checkAssignee("assignee", assignee); err != nil {
			return Task{}, err
		}
		if r.Assignee != assignee {
			if err := t.checkTakesWork(assignee); err != nil {
				return Task{}, err
			}
		}
		return t.setAssignee(r, assignee, "assign_task")
	})
}

func (t *tx) setAssignee(r taskRecord, assignee, action string) (Task, error) {
	if r.Assignee == assignee {
		return r.Task, nil
	}
	if _, err := t.exec(`UPDATE tasks SET assignee = ?, updated_at = ? WHERE id = ?`, assignee, t.nowText(), r.ID); err != nil {
		return Task{}, err
	}
	if err := t.record(action, "task", r.ID, r.ID, map[string]any{"assignee": change{r.Assignee, assignee}}); err != nil {
		return Task{}, err
	}
	r, err := t.taskRow(r.ID)
	return r.Task, err
}

// ClaimTask assigns an unassigned task to the caller. When the task has a
// run queued for the caller, claiming it starts the run: that is how an
// agent takes the work queued for it. Claiming a task one already holds
// changes nothing; claiming someone else's, or as a paused agent, is
// refused.
func (s *Store) ClaimTask(ctx context.Context, by Actor, id string) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", id)
		if err != nil {
			return Task{}, err
		}
		if r.Assignee != "" && r.Assignee != t.by.Name {
			return Task{}, conflictf("task %q is already assigned to %s", id, quote(r.Assignee))
		}
		run, ok, err := t.activeRun(id)
		if err != nil {
			return Task{}, err
		}
		if ok && run.Agent != t.by.Name {
			return Task{}, conflictf("task %q has run %q %s for agent %s", id, run.ID, run.Status, quote(run.Agent))
		}
		if ok && run.Status == RunQueued {
			if err := t.startRun(run); err != nil {
				return Task{}, err
			}
			details := map[string]any{"run_id": run.ID, "run_status": change{RunQueued, RunRunning}}
			if r.Assignee != t.by.Name {
				if _, err := t.exec(`UPDATE tasks SET assignee = ?, updated_at = ? WHERE id = ?`, t.by.Name, t.nowText(), id); err != nil {
					return Task{}, err
				}
				details["assignee"] = change{r.Assignee, t.by.Name}
			}
			if err := t.record("claim_task", "task", id, id, details); err != nil {
				return Task{}, err
			}
			r, err = t.taskRow(id)
			return r.Task, err
		}
		if r.Assignee == t.by.Name {
			return r.Task, nil
		}
		if r.Status == StatusDone || r.Status == StatusAwaitingApproval {
			return Task{}, conflictf("task %q is %s: there is nothing left to claim", id, r.Status)
		}
		if t.by.Kind == Agent {
			if p, err := t.pause(t.by.Name); err != nil || p != nil {
				if err == nil {
					err = pausedError(t.by.Name, p)
				}
				return Task{}, err
			}
		}
		return t.setAssignee(r, t.by.Name, "claim_task")
	})
}

// BlockTask marks a task blocked, with a reason and optionally the task it
// waits for. Blocking a task again with the same reason changes nothing.
func (s *Store) BlockTask(ctx context.Context, by Actor, id, reason, blockedBy string) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", id)
		if err != nil {
			return Task{}, err
		}
		if err := checkText("reason", reason, MaxText); err != nil {
			return Task{}, err
		}
		if strings.TrimSpace(reason) == "" {
			return Task{}, invalidf("reason is required: say what the task waits for")
		}
		if blockedBy != "" {
			if blockedBy == id {
				return Task{}, invalidf("task %q cannot block itself", id)
			}
			if _, err := t.liveTask("blocked_by", blockedBy); err != nil {
				return Task{}, err
			}
		}
		switch r.Status {
		case StatusBlocked:
			if r.BlockedReason == reason && r.BlockedBy == blockedBy {
				return r.Task, nil
			}
		case StatusOpen:
		default:
			return Task{}, conflictf("task %q is %s: only an open task can be blocked", id, r.Status)
		}
		_, err = t.exec(`UPDATE tasks SET status = 'blocked', blocked_reason = ?, blocked_by = ?, updated_at = ? WHERE id = ?`,
			reason, nullable(blockedBy), t.nowText(), id)
		if err != nil {
			return Task{}, err
		}
		details := map[string]any{"status": change{r.Status, StatusBlocked}, "reason": reason}
		if r.Status == StatusBlocked {
			details["reason"] = change{r.BlockedReason, reason}
		}
		if blockedBy != "" || r.BlockedBy != "" {
			details["blocked_by"] = change{r.BlockedBy, blockedBy}
		}
		if err := t.record("block_task", "task", id, id, details); err != nil {
			return Task{}, err
		}
		r, err = t.taskRow(id)
		return r.Task, err
	})
}

// UnblockTask clears the blocked state of a task. A task that is not
// blocked is left as it is.
func (s *Store) UnblockTask(ctx context.Context, by Actor, id string) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", id)
		if err != nil {
			return Task{}, err
		}
		if r.Status != StatusBlocked {
			return r.Task, nil
		}
		_, err = t.exec(`UPDATE tasks SET status = 'open', blocked_reason = '', blocked_by = NULL, updated_at = ? WHERE id = ?`, t.nowText(), id)
		if err != nil {
			return Task{}, err
		}
		err = t.record("unblock_task", "task", id, id, map[string]any{
			"status": change{StatusBlocked, StatusOpen}, "reason": r.BlockedReason, "blocked_by": r.BlockedBy})
		if err != nil {
			return Task{}, err
		}
		r, err = t.taskRow(id)
		return r.Task, err
	})
}

// CloseTask finishes a task. An auto-close task (one a person made so, see
// [Task.AutoCloseBy]) becomes done, and a close request pending for it is
// withdrawn, having no object. Any other becomes awaiting_approval with one
// close request for a human to decide: the one already pending (made with
// [Store.RequestApproval]), or a new one; closing it again while it waits
// changes nothing, so there is never a second request. A blocked task, or
// one that depends on a task not yet done, cannot close.
func (s *Store) CloseTask(ctx context.Context, by Actor, id string) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", id)
		if err != nil {
			return Task{}, err
		}
		switch r.Status {
		case StatusDone, StatusAwaitingApproval:
			return r.Task, nil
		}
		if err := t.checkClosable(r); err != nil {
			return Task{}, err
		}
		pending, ok, err := t.pendingClose(id)
		if err != nil {
			return Task{}, err
		}
		now := t.nowText()
		details := map[string]any{}
		if r.AutoClose {
			if _, err := t.exec(`UPDATE tasks SET status = 'done', closed_at = ?, updated_at = ? WHERE id = ?`, now, now, id); err != nil {
				return Task{}, err
			}
			details["status"], details["auto_close_by"] = change{r.Status, StatusDone}, r.AutoCloseBy
			if ok {
				if err := t.withdraw(pending.ID); err != nil {
					return Task{}, err
				}
				details["withdrawn_approval_id"] = pending.ID
			}
		} else {
			if _, err := t.exec(`UPDATE tasks SET status = 'awaiting_approval', updated_at = ? WHERE id = ?`, now, id); err != nil {
				return Task{}, err
			}
			if !ok {
				if pending, err = t.insertApproval(id, "", ApprovalClose, ""); err != nil {
					return Task{}, err
				}
			}
			details["status"], details["approval_id"] = change{r.Status, StatusAwaitingApproval}, pending.ID
		}
		if err := t.record("close_task", "task", id, id, details); err != nil {
			return Task{}, err
		}
		r, err = t.taskRow(id)
		return r.Task, err
	})
}

// checkClosable returns an error unless task r may become done now: it is
// not blocked, and every live task it depends on is done.
func (t *tx) checkClosable(r taskRecord) error {
	if r.Status == StatusBlocked {
		return conflictf("task %q is blocked (%s): unblock it first", r.ID, r.BlockedReason)
	}
	var waiting string
	err := t.queryRow(`SELECT d.id FROM task_dependencies td JOIN tasks d ON d.id = td.depends_on
		WHERE td.task_id = ? AND d.status <> 'done' AND d.trash_id IS NULL ORDER BY d.id LIMIT 1`, r.ID).Scan(&waiting)
	switch {
	case err == nil:
		return conflictf("task %q depends on task %q, which is not done", r.ID, waiting)
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	return nil
}

// withdraw marks a pending approval request withdrawn by the caller: it
// can no longer be decided.
func (t *tx) withdraw(approvalID string) error {
	_, err := t.exec(`UPDATE approvals SET status = 'withdrawn', decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'`,
		t.by.Name, t.nowText(), approvalID)
	return err
}

// ReopenTask sets a done or awaiting task back to open, withdrawing its
// pending approval request. A task that is not closed is left as it is.
func (s *Store) ReopenTask(ctx context.Context, by Actor, id string) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", id)
		if err != nil {
			return Task{}, err
		}
		if r.Status != StatusDone && r.Status != StatusAwaitingApproval {
			return r.Task, nil
		}
		now := t.nowText()
		if _, err := t.exec(`UPDATE tasks SET status = 'open', closed_at = NULL, updated_at = ? WHERE id = ?`, now, id); err != nil {
			return Task{}, err
		}
		if _, err := t.exec(`UPDATE approvals SET status = 'withdrawn', decided_by = ?, decided_at = ?
			WHERE task_id = ? AND kind = 'close' AND status = 'pending'`, t.by.Name, now, id); err != nil {
			return Task{}, err
		}
		if err := t.record("reopen_task", "task", id, id, map[string]any{"status": change{r.Status, StatusOpen}}); err != nil {
			return Task{}, err
		}
		r, err = t.taskRow(id)
		return r.Task, err
	})
}

// AddDependency makes task id depend on task dependsOn: id is not ready
// until dependsOn is done. Adding an edge that exists changes nothing; an
// edge that would close a cycle is refused.
func (s *Store) AddDependency(ctx context.Context, by Actor, id, dependsOn string) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", id)
		if err != nil {
			return Task{}, err
		}
		if _, err := t.liveTask("depends_on", dependsOn); err != nil {
			return Task{}, err
		}
		if id == dependsOn {
			return Task{}, invalidf("task %q cannot depend on itself", id)
		}
		// Does dependsOn already depend, directly or not, on id?
		cycle, err := t.exists(`WITH RECURSIVE deps(id) AS (
				SELECT depends_on FROM task_dependencies WHERE task_id = ?
				UNION SELECT td.depends_on FROM task_dependencies td JOIN deps ON td.task_id = deps.id)
			SELECT 1 FROM deps WHERE id = ?`, dependsOn, id)
		if err != nil {
			return Task{}, err
		}
		if cycle {
			return Task{}, conflictf("task %q already depends on task %q: the dependency would make a cycle", dependsOn, id)
		}
		if err := t.checkRoom("dependencies", "task_dependencies", "depends_on = ?", id, MaxDependencies, dependsOn); err != nil {
			return Task{}, err
		}
		res, err := t.exec(`INSERT INTO task_dependencies (task_id, depends_on) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, dependsOn)
		if err != nil {
			return Task{}, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return r.Task, nil
		}
		if err := t.touchTask(id); err != nil {
			return Task{}, err
		}
		if err := t.record("add_task_dependency", "task", id, id, map[string]any{"depends_on": dependsOn}); err != nil {
			return Task{}, err
		}
		r, err = t.taskRow(id)
		return r.Task, err
	})
}

// RemoveDependency removes the edge that makes id depend on dependsOn. An
// edge that does not exist is not an error: there is nothing to do.
func (s *Store) RemoveDependency(ctx context.Context, by Actor, id, dependsOn string) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", id)
		if err != nil {
			return Task{}, err
		}
		if err := checkID("depends_on", dependsOn); err != nil {
			return Task{}, err
		}
		res, err := t.exec(`DELETE FROM task_dependencies WHERE task_id = ? AND depends_on = ?`, id, dependsOn)
		if err != nil {
			return Task{}, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return r.Task, nil
		}
		if err := t.touchTask(id); err != nil {
			return Task{}, err
		}
		if err := t.record("remove_task_dependency", "task", id, id, map[string]any{"depends_on": dependsOn}); err != nil {
			return Task{}, err
		}
		r, err = t.taskRow(id)
		return r.Task, err
	})
}
