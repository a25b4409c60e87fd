package store

import (
	"context"
	"database/sql"
	"errors"
)

// A Project groups tasks and gives new tasks their defaults.
type Project struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// AutoClose is the auto_close setting of new tasks, and AutoCloseBy
	// the person who decided it: only a person may (see [Task.AutoCloseBy]).
	AutoClose   bool   `json:"auto_close"`
	AutoCloseBy string `json:"auto_close_by,omitempty"`
	// DefaultAssignee is who new tasks are for when they name no one.
	DefaultAssignee string `json:"default_assignee,omitempty"`
	Archived        bool   `json:"archived"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
}

const projectColumns = `p.id, p.name, p.description, p.auto_close, p.auto_close_by, p.default_assignee, p.archived_at IS NOT NULL, p.created_at, p.updated_at`

func scanProject(row scanner) (Project, error) {
	var p Project
	err := row.Scan(&p.ID, &p.Name, &p.Description, &p.AutoClose, &p.AutoCloseBy, &p.DefaultAssignee, &p.Archived, &p.CreatedAt, &p.UpdatedAt)
	return p, err
}

// projectRow loads a project, live or in the Trash.
func (t *tx) projectRow(id string) (p Project, trashID string, err error) {
	p, err = scanProject(scanExtra(t.queryRow(`SELECT `+projectColumns+`, COALESCE(p.trash_id, '') FROM projects p WHERE p.id = ?`, id), &trashID))
	if errors.Is(err, sql.ErrNoRows) {
		return p, "", notFoundf("project %q does not exist", id)
	}
	return p, trashID, err
}

// liveProject loads the project called field, which must not be in the
// Trash.
func (t *tx) liveProject(field, id string) (Project, error) {
	if err := checkID(field, id); err != nil {
		return Project{}, err
	}
	p, trashID, err := t.projectRow(id)
	if err != nil {
		return p, err
	}
	if trashID != "" {
		return p, conflictf("project %q is in the Trash: restore it first", id)
	}
	return p, nil
}

// writableProject loads a live project that is not archived.
func (t *tx) writableProject(field, id string) (Project, error) {
	p, err := t.liveProject(field, id)
	if err != nil {
		return p, err
	}
	if p.Archived {
		return p, conflictf("project %q is archived, which makes it read-only: unarchive it first", id)
	}
	return p, nil
}

// NewProject holds the fields of a project to create, as create_project
// takes them.
type NewProject struct {
	Name            string `json:"name"`
	Description     string `json:"description,omitempty"`
	AutoClose       bool   `json:"auto_close,omitempty" jsonschema:"the auto_close of new tasks (only a human may set it); false, the default, makes closing them need a human's approval"`
	DefaultAssignee string `json:"default_assignee,omitempty" jsonschema:"who new tasks are for when they name no one"`
}

// CreateProject creates a project. Only a person may make it auto-close.
func (s *Store) CreateProject(ctx context.Context, by Actor, n NewProject) (Project, error) {
	return write(ctx, s, by, func(t *tx) (Project, error) {
		if err := checkName("name", n.Name); err != nil {
			return Project{}, err
		}
		if err := checkText("description", n.Description, MaxText); err != nil {
			return Project{}, err
		}
		if err := t.checkAssignee("default_assignee", n.DefaultAssignee); err != nil {
			return Project{}, err
		}
		if err := t.decideAutoClose("project", n.AutoClose); err != nil {
			return Project{}, err
		}
		id, now := newID(), t.nowText()
		_, err := t.exec(`INSERT INTO projects (id, name, description, auto_close, auto_close_by, default_assignee, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, n.Name, n.Description, n.AutoClose, t.autoCloseBy(n.AutoClose), n.DefaultAssignee, now, now)
		if err != nil {
			return Project{}, err
		}
		details := map[string]any{"name": n.Name}
		if n.AutoClose {
			details["auto_close"] = true
		}
		if err := t.record("create_project", "project", id, "", details); err != nil {
			return Project{}, err
		}
		p, _, err := t.projectRow(id)
		return p, err
	})
}

// ProjectPatch holds the fields update_project may overwrite, as it takes
// them; nil leaves a field as it is.
type ProjectPatch struct {
	Name            *string `json:"name,omitempty"`
	Description     *string `json:"description,omitempty"`
	AutoClose       *bool   `json:"auto_close,omitempty" jsonschema:"the auto_close of new tasks (only a human may set it to true); tasks that exist keep theirs"`
	DefaultAssignee *string `json:"default_assignee,omitempty" jsonschema:"who new tasks are for; an empty string for no one"`
}

// UpdateProject overwrites the fields set in p. The activity entry keeps
// the old values. Setting fields to the values they have changes nothing.
// Only a person may make the project auto-close: its tasks would skip the
// approval gate.
func (s *Store) UpdateProject(ctx context.Context, by Actor, id string, p ProjectPatch) (Project, error) {
	return write(ctx, s, by, func(t *tx) (Project, error) {
		old, err := t.writableProject("project_id", id)
		if err != nil {
			return Project{}, err
		}
		d := diff{}
		if p.Name != nil {
			if err := checkName("name", *p.Name); err != nil {
				return Project{}, err
			}
			d.add("name", old.Name, *p.Name)
		}
		if p.Description != nil {
			if err := checkText("description", *p.Description, MaxText); err != nil {
				return Project{}, err
			}
			d.add("description", old.Description, *p.Description)
		}
		if p.AutoClose != nil && *p.AutoClose != old.AutoClose {
			if err := t.decideAutoClose("project", *p.AutoClose); err != nil {
				return Project{}, err
			}
			d.add("auto_close", old.AutoClose, *p.AutoClose)
			d.add("auto_close_by", old.AutoCloseBy, t.autoCloseBy(*p.AutoClose))
		}
		if p.DefaultAssignee != nil {
			if err := t.checkAssignee("default_assignee", *p.DefaultAssignee); err != nil {
				return Project{}, err
			}
			d.add("default_assignee", old.DefaultAssignee, *p.DefaultAssignee)
		}
		if len(d) == 0 {
			return old, nil
		}
		_, err = t.exec(`UPDATE projects SET name = ?, description = ?, auto_close = ?, auto_close_by = ?, default_assignee = ?, updated_at = ? WHERE id = ?`,
			d.str("name", old.Name), d.str("description", old.Description), d.boolean("auto_close", old.AutoClose),
			d.str("auto_close_by", old.AutoCloseBy), d.str("default_assignee", old.DefaultAssignee), t.nowText(), id)
		if err != nil {
			return Project{}, err
		}
		if err := t.record("update_project", "project", id, "", d.details()); err != nil {
			return Project{}, err
		}
		np, _, err := t.projectRow(id)
		return np, err
	})
}

// ArchiveProject makes a project read-only and hides it and its tasks from
// lists. Archiving an archived project changes nothing.
func (s *Store) ArchiveProject(ctx context.Context, by Actor, id string) (Project, error) {
	return s.setArchived(ctx, by, id, true)
}

// UnarchiveProject undoes [Store.ArchiveProject].
func (s *Store) UnarchiveProject(ctx context.Context, by Actor, id string) (Project, error) {
	return s.setArchived(ctx, by, id, false)
}

func (s *Store) setArchived(ctx context.Context, by Actor, id string, archived bool) (Project, error) {
	return write(ctx, s, by, func(t *tx) (Project, error) {
		p, err := t.liveProject("project_id", id)
		if err != nil {
			return Project{}, err
		}
		if p.Archived == archived {
			return p, nil
		}
		action, at := "unarchive_project", any(nil)
		if archived {
			action, at = "archive_project", t.nowText()
		}
		if _, err := t.exec(`UPDATE projects SET archived_at = ?, updated_at = ? WHERE id = ?`, at, t.nowText(), id); err != nil {
			return Project{}, err
		}
		if err := t.record(action, "project", id, "", nil); err != nil {
			return Project{}, err
		}
		p, _, err = t.projectRow(id)
		return p, err
	})
}

// ListProjects returns the live projects, oldest first, one page at a
// time; archived ones only if includeArchived.
func (s *Store) ListProjects(ctx context.Context, includeArchived bool, p Page) (List[Project], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[Project], error) {
		if err := checkOptionalID("cursor", p.Cursor); err != nil {
			return List[Project]{}, err
		}
		return pageOf(t, p, scanProject, func(p Project) string { return p.ID }, `SELECT `+projectColumns+` FROM projects p
			WHERE p.trash_id IS NULL AND (? <> 0 OR p.archived_at IS NULL) AND p.id > ? ORDER BY p.id LIMIT +?`, includeArchived, p.Cursor)
	})
}

// GetProject returns a live project, archived or not.
func (s *Store) GetProject(ctx context.Context, id string) (Project, error) {
	return read(ctx, s, Actor{}, func(t *tx) (Project, error) {
		return t.liveProject("project_id", id)
	})
}

// Progress sums up the tasks of a project.
type Progress struct {
	ProjectID string `json:"project_id"`
	// ByStatus counts the live tasks of each status.
	ByStatus map[Status]int `json:"by_status"`
	Total    int            `json:"total"`
	// Blocked lists the first MaxShown blocked tasks (ByStatus counts
	// them all; list_tasks pages through them).
	Blocked []TaskRef `json:"blocked"`
	// Overdue counts the tasks not done whose due date has passed.
	Overdue int `json:"overdue"`
	// PendingApprovals counts the approval requests waiting for a human.
	PendingApprovals int `json:"pending_approvals"`
}

// ProjectProgress counts a project's tasks by status, and lists what holds
// it up.
func (s *Store) ProjectProgress(ctx context.Context, id string) (Progress, error) {
	return read(ctx, s, Actor{}, func(t *tx) (Progress, error) {
		if _, err := t.liveProject("project_id", id); err != nil {
			return Progress{}, err
		}
		pr := Progress{ProjectID: id, ByStatus: map[Status]int{}}
		for _, st := range Statuses {
			pr.ByStatus[st] = 0
		}
		rows, err := t.query(`SELECT status, count(*) FROM tasks WHERE project_id = ? AND trash_id IS NULL GROUP BY status`, id)
		if err != nil {
			return pr, err
		}
		defer rows.Close()
		for rows.Next() {
			var st Status
			var n int
			if err := rows.Scan(&st, &n); err != nil {
				return pr, err
			}
			pr.ByStatus[st] = n
			pr.Total += n
		}
		if err := rows.Err(); err != nil {
			return pr, err
		}
		pr.Blocked, _, err = shown(t, func(row scanner) (TaskRef, error) {
			var ref TaskRef
			return ref, row.Scan(&ref.ID, &ref.Title, &ref.Status)
		}, `SELECT id, title, status FROM tasks WHERE project_id = ? AND trash_id IS NULL AND status = 'blocked' ORDER BY id LIMIT +?`, id)
		if err != nil {
			return pr, err
		}
		today := t.now.UTC().Format("2006-01-02")
		err = t.queryRow(`SELECT count(*) FROM tasks WHERE project_id = ? AND trash_id IS NULL
			AND status <> 'done' AND due <> '' AND due < ?`, id, today).Scan(&pr.Overdue)
		if err != nil {
			return pr, err
		}
		err = t.queryRow(`SELECT count(*) FROM approvals a JOIN tasks t ON t.id = a.task_id
			WHERE t.project_id = ? AND t.trash_id IS NULL AND a.status = 'pending'`, id).Scan(&pr.PendingApprovals)
		return pr, err
	})
}
