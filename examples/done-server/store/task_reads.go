package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
)

// A TaskDetail is a task with what get_task shows around it.
type TaskDetail struct {
	Task
	// Steps are the first MaxShown steps of the task, in order; MoreSteps
	// says that list_steps has more.
	Steps     []Step `json:"steps"`
	MoreSteps bool   `json:"more_steps,omitempty"`
	// Labels are all the task's labels: a task has at most MaxTaskLabels.
	Labels []Label `json:"labels"`
	// DependsOn lists the tasks this one waits for, done or not: at most
	// MaxDependencies.
	DependsOn []TaskRef `json:"depends_on"`
	// Ready is true for an open task whose dependencies are all done.
	Ready bool `json:"ready"`
	// Approval is the pending approval request of the task, if any: its
	// close request first, the one whose approval makes the task done.
	Approval *Approval `json:"approval,omitempty"`
	// CurrentRun is the run under way on the task, queued or running.
	CurrentRun *Run `json:"current_run,omitempty"`
	Subtasks   int  `json:"subtasks"`
}

// A TaskRef names a task and gives its status.
type TaskRef struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status Status `json:"status"`
}

// GetTask returns a task with its steps, labels, dependencies, pending
// approval and current run.
func (s *Store) GetTask(ctx context.Context, id string) (TaskDetail, error) {
	return read(ctx, s, Actor{}, func(t *tx) (TaskDetail, error) {
		r, err := t.liveTask("task_id", id)
		if err != nil {
			return TaskDetail{}, err
		}
		d := TaskDetail{Task: r.Task}
		if d.Steps, d.MoreSteps, err = shown(t, scanStep, `SELECT `+stepColumns+` FROM steps s
			WHERE s.task_id = ? AND s.trash_id IS NULL ORDER BY s.position, s.id LIMIT +?`, id); err != nil {
			return d, err
		}
		if d.Labels, err = t.taskLabels(id); err != nil {
			return d, err
		}
		d.DependsOn, err = collect(t, func(row scanner) (TaskRef, error) {
			var ref TaskRef
			return ref, row.Scan(&ref.ID, &ref.Title, &ref.Status)
		}, `SELECT d.id, d.title, d.status FROM task_dependencies td JOIN tasks d ON d.id = td.depends_on
			WHERE td.task_id = ? AND d.trash_id IS NULL ORDER BY d.id`, id)
		if err != nil {
			return d, err
		}
		d.Ready = r.Status == StatusOpen
		for _, dep := range d.DependsOn {
			if dep.Status != StatusDone {
				d.Ready = false
			}
		}
		a, err := scanApproval(t.queryRow(`SELECT `+approvalColumns+` FROM approvals a
			WHERE a.task_id = ? AND a.status = 'pending' ORDER BY a.kind = 'close' DESC, a.id LIMIT 1`, id))
		switch {
		case err == nil:
			d.Approval = &a
		case !errors.Is(err, sql.ErrNoRows):
			return d, err
		}
		if run, ok, err := t.activeRun(id); err != nil {
			return d, err
		} else if ok {
			d.CurrentRun = &run
		}
		err = t.queryRow(`SELECT count(*) FROM tasks WHERE parent_id = ? AND trash_id IS NULL`, id).Scan(&d.Subtasks)
		return d, err
	})
}

// TaskFilter selects tasks for [Store.ListTasks] and [Store.ListMyTasks].
// Empty fields select everything.
type TaskFilter struct {
	ProjectID string
	Assignee  string
	Status    Status
	// DueBefore keeps tasks due on or before that date.
	DueBefore string
	// After is the cursor of a page: the last id of the page before.
	After string
	// Limit caps the number of tasks; 0 means DefaultLimit.
	Limit int
}

// A TaskPage is one page of tasks. NextCursor, when not empty, is the
// cursor of the next page.
type TaskPage struct {
	Tasks      []Task `json:"tasks"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// ListTasks returns tasks that match f, oldest first, one page at a time.
// Unless f names a project, tasks of archived projects are left out.
func (s *Store) ListTasks(ctx context.Context, f TaskFilter) (TaskPage, error) {
	return read(ctx, s, Actor{}, func(t *tx) (TaskPage, error) {
		return t.listTasks(f, false)
	})
}

// ListMyTasks returns the tasks assigned to the caller that match f. Done
// tasks are left out unless f asks for them by status.
func (s *Store) ListMyTasks(ctx context.Context, by Actor, f TaskFilter) (TaskPage, error) {
	return read(ctx, s, by, func(t *tx) (TaskPage, error) {
		f.Assignee = by.Name
		return t.listTasks(f, f.Status == "")
	})
}

func (t *tx) listTasks(f TaskFilter, notDone bool) (TaskPage, error) {
	if err := checkOptionalID("project_id", f.ProjectID); err != nil {
		return TaskPage{}, err
	}
	if err := checkOptionalID("cursor", f.After); err != nil {
		return TaskPage{}, err
	}
	if f.Status != "" {
		if err := checkStatus(f.Status); err != nil {
			return TaskPage{}, err
		}
	}
	if err := checkDue("due_before", f.DueBefore); err != nil {
		return TaskPage{}, err
	}
	if f.Assignee != "" {
		if err := checkName("assignee", f.Assignee); err != nil {
			return TaskPage{}, err
		}
	}
	limit, err := checkLimit(f.Limit)
	if err != nil {
		return TaskPage{}, err
	}
	if f.ProjectID != "" {
		if _, err := t.liveProject("project_id", f.ProjectID); err != nil {
			return TaskPage{}, err
		}
	}

	var where []string
	var args []any
	where = append(where, "t.trash_id IS NULL")
	if f.ProjectID != "" {
		where, args = append(where, "t.project_id = ?"), append(args, f.ProjectID)
	} else {
		where = append(where, "(p.id IS NULL OR p.archived_at IS NULL)")
	}
	if f.Assignee != "" {
		where, args = append(where, "t.assignee = ?"), append(args, f.Assignee)
	}
	if f.Status != "" {
		where, args = append(where, "t.status = ?"), append(args, string(f.Status))
	} else if notDone {
		where = append(where, "t.status <> 'done'")
	}
	if f.DueBefore != "" {
		where, args = append(where, "t.due <> '' AND t.due <= ?"), append(args, f.DueBefore)
	}
	if f.After != "" {
		where, args = append(where, "t.id > ?"), append(args, f.After)
	}
	// One more than the page holds tells whether there is a next page.
	args = append(args, limit+1)
	tasks, err := collect(t, scanTask, `SELECT `+taskColumns+` FROM tasks t LEFT JOIN projects p ON p.id = t.project_id
		WHERE `+strings.Join(where, " AND ")+` ORDER BY t.id LIMIT +?`, args...)
	if err != nil {
		return TaskPage{}, err
	}
	page := TaskPage{Tasks: tasks}
	if len(tasks) > limit {
		page.Tasks = tasks[:limit]
		page.NextCursor = tasks[limit-1].ID
	}
	return page, nil
}

func checkStatus(s Status) error {
	for _, v := range Statuses {
		if s == v {
			return nil
		}
	}
	return invalidf("status %s is not valid: want open, blocked, awaiting_approval or done", quote(string(s)))
}

// MaxSearchScan is the most tasks one call of [Store.SearchTasks] reads:
// a search that finds little would otherwise read every task and its
// comments at each call, which any token that may read could repeat at
// will.
const MaxSearchScan = 2000

// SearchTasks returns the live tasks whose title, description or comments
// contain query, ignoring case for ASCII letters, oldest first, one page
// at a time. It reads at most MaxSearchScan tasks a call: when it stops
// there before its page is full, the page holds fewer tasks than asked
// for, even none, and its cursor goes on from the last task read.
func (s *Store) SearchTasks(ctx context.Context, query string, p Page) (List[Task], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[Task], error) {
		if err := checkName("query", query); err != nil {
			return List[Task]{}, err
		}
		if err := checkOptionalID("cursor", p.Cursor); err != nil {
			return List[Task]{}, err
		}
		limit, err := checkLimit(p.Limit)
		if err != nil {
			return List[Task]{}, err
		}
		// The next MaxSearchScan live tasks, each with whether it matches,
		// read until the page is full: one more match than it holds says
		// that there is a next page. Only their ids come out of SQLite; the
		// tasks of the page are read after, by id.
		pattern := "%" + likeEscaper.Replace(query) + "%"
		const matches = `t.title LIKE +?1 ESCAPE '\' OR t.description LIKE +?1 ESCAPE '\'
				OR EXISTS (SELECT 1 FROM comments c WHERE c.task_id = t.id AND c.trash_id IS NULL AND c.body LIKE +?1 ESCAPE '\'`
		const scan = `FROM tasks t LEFT JOIN projects p ON p.id = t.project_id
			WHERE t.trash_id IS NULL AND (p.id IS NULL OR p.archived_at IS NULL) AND t.id > ?2
			ORDER BY t.id LIMIT +?3`
		var rows *sql.Rows
		if t.pg {
			// PostgreSQL runs a query to its end however few rows the
			// store reads: it is given the page's end (the matches, and
			// the last task of the scan, by its number), so that it stops
			// there, as SQLite does. OFFSET 0 keeps its planner from
			// making the EXISTS a hash of every task with a matching
			// comment, which reads all the comments of the workspace at
			// each search: each task's comments are looked up by index.
			rows, err = t.query(`SELECT id, m, n FROM (SELECT t.id, `+matches+` OFFSET 0) AS m, row_number() OVER (ORDER BY t.id) AS n
				`+scan+`) AS scan
				WHERE m OR n = ?3 LIMIT +?4`, pattern, p.Cursor, MaxSearchScan, limit+1)
		} else {
			rows, err = t.query(`SELECT t.id, `+matches+`) `+scan, pattern, p.Cursor, MaxSearchScan)
		}
		if err != nil {
			return List[Task]{}, err
		}
		found := []string{} // null in JSON would be no array
		read, last := 0, ""
		for len(found) <= limit && rows.Next() {
			var match bool
			if t.pg {
				err = rows.Scan(&last, &match, &read)
			} else {
				err = rows.Scan(&last, &match)
				read++
			}
			if err != nil {
				rows.Close()
				return List[Task]{}, err
			}
			if match {
				found = append(found, last)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return List[Task]{}, err
		}
		ids, err := json.Marshal(found)
		if err != nil {
			return List[Task]{}, err
		}
		tasks, err := collect(t, scanTask, `SELECT `+taskColumns+` FROM tasks t
			WHERE t.id IN `+t.pick(`(SELECT value FROM json_each(?))`, `(SELECT jsonb_array_elements_text(CAST(? AS jsonb)))`)+` ORDER BY t.id`, string(ids))
		if err != nil {
			return List[Task]{}, err
		}
		page := cut(tasks, limit, taskKey)
		if page.NextCursor == "" && read == MaxSearchScan {
			page.NextCursor = last
		}
		return page, nil
	})
}

func taskKey(x Task) string { return x.ID }

// likeEscaper escapes the wildcards of LIKE, so that a query matches
// literally.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// ListSubtasks returns the live child tasks of a task, oldest first, one
// page at a time.
func (s *Store) ListSubtasks(ctx context.Context, id string, p Page) (List[Task], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[Task], error) {
		if _, err := t.liveTask("task_id", id); err != nil {
			return List[Task]{}, err
		}
		if err := checkOptionalID("cursor", p.Cursor); err != nil {
			return List[Task]{}, err
		}
		return pageOf(t, p, scanTask, taskKey, `SELECT `+taskColumns+` FROM tasks t
			WHERE t.parent_id = ? AND t.trash_id IS NULL AND t.id > ? ORDER BY t.id LIMIT +?`, id, p.Cursor)
	})
}

// Next is what [Store.NextTask] finds for the caller.
type Next struct {
	// Task is the task to work on, or nil if there is none.
	Task *Task `json:"task,omitempty"`
	// Run is the caller's run on Task, queued or running, if it has one.
	Run *Run `json:"run,omitempty"`
	// Paused is set when the caller is a paused agent, to which nothing is
	// dispatched.
	Paused *Pause `json:"paused,omitempty"`
}

// NextTask returns the next task for the caller to work on, without
// claiming it: an open task, assigned to the caller or to no one, whose
// dependencies are all done, in a project that is not archived, and with
// no run under way for someone else. The task of the caller's running run
// comes first, then those of its queued runs, then its own tasks, then the
// most urgent, the earliest due, the oldest. A paused agent gets nothing.
func (s *Store) NextTask(ctx context.Context, by Actor) (Next, error) {
	return read(ctx, s, by, func(t *tx) (Next, error) {
		if by.Kind == Agent {
			if p, err := t.pause(by.Name); err != nil || p != nil {
				return Next{Paused: p}, err
			}
		}
		var runID string
		task, err := scanTask(scanExtra(t.queryRow(`SELECT `+taskColumns+`, COALESCE(r.id, '')
			FROM tasks t LEFT JOIN projects p ON p.id = t.project_id
			LEFT JOIN runs r ON r.task_id = t.id AND r.status IN ('queued', 'running')
			WHERE t.trash_id IS NULL AND t.status = 'open' AND (t.assignee = ?1 OR t.assignee = '')
			AND (p.id IS NULL OR p.archived_at IS NULL)
			AND (r.id IS NULL OR r.agent = ?1)
			AND NOT EXISTS (SELECT 1 FROM task_dependencies td JOIN tasks d ON d.id = td.depends_on
				WHERE td.task_id = t.id AND d.status <> 'done' AND d.trash_id IS NULL)
			ORDER BY COALESCE(r.status = 'running', false) DESC, r.id IS NOT NULL DESC, t.assignee = ?1 DESC,
				CASE t.priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END,
				t.due = '', t.due, t.id, r.queued_at, r.id
			LIMIT 1`, by.Name), &runID))
		if errors.Is(err, sql.ErrNoRows) {
			return Next{}, nil
		}
		if err != nil {
			return Next{}, err
		}
		next := Next{Task: &task}
		if runID != "" {
			run, err := t.run("run_id", runID)
			if err != nil {
				return next, err
			}
			next.Run = &run
		}
		return next, nil
	})
}
