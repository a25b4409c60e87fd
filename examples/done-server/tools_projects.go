package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func (d *done) addProjectTools(t toolbox) {
	addTool(t, "list_projects", "List projects",
		"The projects of the workspace, oldest first; archived ones only if asked for."+paged,
		mcpeffect.Read, d.listProjects)
	addTool(t, "get_project", "Get project",
		"One project with its settings: the auto_close and assignee that new tasks get by default.",
		mcpeffect.Read, d.getProject)
	addTool(t, "get_project_progress", "Get project progress",
		"Task counts of a project by status, its blocked tasks, overdue tasks and pending approvals.",
		mcpeffect.Read, d.getProjectProgress)

	addTool(t, "create_project", "Create project",
		"Create a project.",
		mcpeffect.Write, d.createProject)
	addTool(t, "update_project", "Update project",
		"Overwrite fields and settings of a project; the activity log keeps the old values.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.updateProject)
	addTool(t, "archive_project", "Archive project",
		"Archive a project: it and its tasks become read-only and leave the lists.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.archiveProject)
	addTool(t, "unarchive_project", "Unarchive project",
		"Bring an archived project back to the lists, writable again.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.unarchiveProject)
	addTool(t, "delete_project", "Delete project",
		"Move a project and all its tasks to the Trash, from where restore_from_trash brings them back; no-op if already there.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.deleteProject)
}

type projectArg struct {
	ProjectID string `json:"project_id" jsonschema:"the id of the project"`
}

type listProjectsArgs struct {
	IncludeArchived bool `json:"include_archived,omitempty" jsonschema:"list archived projects too"`
	store.Page
}

type projectsResult struct {
	Projects   []store.Project `json:"projects"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

func (d *done) listProjects(ctx context.Context, in listProjectsArgs) (projectsResult, error) {
	l, err := d.store.ListProjects(ctx, in.IncludeArchived, in.Page)
	return projectsResult{l.Items, l.NextCursor}, err
}

func (d *done) getProject(ctx context.Context, in projectArg) (store.Project, error) {
	return d.store.GetProject(ctx, in.ProjectID)
}

func (d *done) getProjectProgress(ctx context.Context, in projectArg) (store.Progress, error) {
	return d.store.ProjectProgress(ctx, in.ProjectID)
}

func (d *done) createProject(ctx context.Context, in store.NewProject) (store.Project, error) {
	return d.store.CreateProject(ctx, caller(ctx), in)
}

type updateProjectArgs struct {
	ProjectID string `json:"project_id" jsonschema:"the id of the project"`
	store.ProjectPatch
}

func (d *done) updateProject(ctx context.Context, in updateProjectArgs) (store.Project, error) {
	return d.store.UpdateProject(ctx, caller(ctx), in.ProjectID, in.ProjectPatch)
}

func (d *done) archiveProject(ctx context.Context, in projectArg) (store.Project, error) {
	return d.store.ArchiveProject(ctx, caller(ctx), in.ProjectID)
}

func (d *done) unarchiveProject(ctx context.Context, in projectArg) (store.Project, error) {
	return d.store.UnarchiveProject(ctx, caller(ctx), in.ProjectID)
}

func (d *done) deleteProject(ctx context.Context, in projectArg) (store.TrashItem, error) {
	return d.store.DeleteProject(ctx, caller(ctx), in.ProjectID)
}
