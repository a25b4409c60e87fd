package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (d *done) addProjectTools(s *mcp.Server, r *mcpeffect.Registry) {
	mcpeffect.AddTool(s, r, tool[listProjectsArgs, projectsResult]("list_projects",
		"The projects of the workspace, oldest first; archived ones only if asked for."),
		mcpeffect.Read, d.listProjects)
	mcpeffect.AddTool(s, r, tool[projectArg, store.Project]("get_project",
		"One project with its settings: the auto_close and assignee that new tasks get by default."),
		mcpeffect.Read, d.getProject)
	mcpeffect.AddTool(s, r, tool[projectArg, store.Progress]("get_project_progress",
		"Task counts of a project by status, its blocked tasks, overdue tasks and pending approvals."),
		mcpeffect.Read, d.getProjectProgress)

	mcpeffect.AddTool(s, r, tool[createProjectArgs, store.Project]("create_project",
		"Create a project."),
		mcpeffect.Write, d.createProject)
	mcpeffect.AddTool(s, r, tool[updateProjectArgs, store.Project]("update_project",
		"Overwrite fields and settings of a project; the activity log keeps the old values."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.updateProject)
	mcpeffect.AddTool(s, r, tool[projectArg, store.Project]("archive_project",
		"Archive a project: it and its tasks become read-only and leave the lists."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.archiveProject)
	mcpeffect.AddTool(s, r, tool[projectArg, store.Project]("unarchive_project",
		"Bring an archived project back to the lists, writable again."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.unarchiveProject)
	mcpeffect.AddTool(s, r, tool[projectArg, store.TrashItem]("delete_project",
		"Move a project and all its tasks to the Trash, from where restore_from_trash brings them back; no-op if already there."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.deleteProject)
}

type projectArg struct {
	ProjectID string `json:"project_id" jsonschema:"the id of the project"`
}

type listProjectsArgs struct {
	IncludeArchived bool `json:"include_archived,omitempty" jsonschema:"list archived projects too"`
}

type projectsResult struct {
	Projects []store.Project `json:"projects"`
}

func (d *done) listProjects(ctx context.Context, _ *mcp.CallToolRequest, in listProjectsArgs) (*mcp.CallToolResult, projectsResult, error) {
	projects, err := d.store.ListProjects(ctx, in.IncludeArchived)
	return nil, projectsResult{projects}, d.check(ctx, err)
}

func (d *done) getProject(ctx context.Context, _ *mcp.CallToolRequest, in projectArg) (*mcp.CallToolResult, store.Project, error) {
	p, err := d.store.GetProject(ctx, in.ProjectID)
	return nil, p, d.check(ctx, err)
}

func (d *done) getProjectProgress(ctx context.Context, _ *mcp.CallToolRequest, in projectArg) (*mcp.CallToolResult, store.Progress, error) {
	p, err := d.store.ProjectProgress(ctx, in.ProjectID)
	return nil, p, d.check(ctx, err)
}

type createProjectArgs struct {
	Name            string `json:"name"`
	Description     string `json:"description,omitempty"`
	AutoClose       bool   `json:"auto_close,omitempty" jsonschema:"the auto_close of new tasks (only a human may set it); false, the default, makes closing them need a human's approval"`
	DefaultAssignee string `json:"default_assignee,omitempty" jsonschema:"who new tasks are for when they name no one"`
}

func (d *done) createProject(ctx context.Context, _ *mcp.CallToolRequest, in createProjectArgs) (*mcp.CallToolResult, store.Project, error) {
	p, err := d.store.CreateProject(ctx, caller(ctx), store.NewProject{
		Name: in.Name, Description: in.Description, AutoClose: in.AutoClose, DefaultAssignee: in.DefaultAssignee,
	})
	return nil, p, d.check(ctx, err)
}

type updateProjectArgs struct {
	ProjectID       string  `json:"project_id" jsonschema:"the id of the project"`
	Name            *string `json:"name,omitempty"`
	Description     *string `json:"description,omitempty"`
	AutoClose       *bool   `json:"auto_close,omitempty" jsonschema:"the auto_close of new tasks (only a human may set it to true); tasks that exist keep theirs"`
	DefaultAssignee *string `json:"default_assignee,omitempty" jsonschema:"who new tasks are for; an empty string for no one"`
}

func (d *done) updateProject(ctx context.Context, _ *mcp.CallToolRequest, in updateProjectArgs) (*mcp.CallToolResult, store.Project, error) {
	p, err := d.store.UpdateProject(ctx, caller(ctx), in.ProjectID, store.ProjectPatch{
		Name: in.Name, Description: in.Description, AutoClose: in.AutoClose, DefaultAssignee: in.DefaultAssignee,
	})
	return nil, p, d.check(ctx, err)
}

func (d *done) archiveProject(ctx context.Context, _ *mcp.CallToolRequest, in projectArg) (*mcp.CallToolResult, store.Project, error) {
	p, err := d.store.ArchiveProject(ctx, caller(ctx), in.ProjectID)
	return nil, p, d.check(ctx, err)
}

func (d *done) unarchiveProject(ctx context.Context, _ *mcp.CallToolRequest, in projectArg) (*mcp.CallToolResult, store.Project, error) {
	p, err := d.store.UnarchiveProject(ctx, caller(ctx), in.ProjectID)
	return nil, p, d.check(ctx, err)
}

func (d *done) deleteProject(ctx context.Context, _ *mcp.CallToolRequest, in projectArg) (*mcp.CallToolResult, store.TrashItem, error) {
	item, err := d.store.DeleteProject(ctx, caller(ctx), in.ProjectID)
	return nil, item, d.check(ctx, err)
}
