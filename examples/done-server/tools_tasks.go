package main

import (
	"context"
	"fmt"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func (d *done) addTaskTools(t toolbox) {
	addTool(t, "list_my_tasks", "List my tasks",
		"Tasks assigned to the caller (human or agent), filterable by status, due date and project. Done tasks are left out unless asked for by status; oldest first."+paged,
		mcpeffect.Read, d.listMyTasks)
	addTool(t, "list_tasks", "List tasks",
		"Tasks of a project, an assignee or a status, oldest first."+paged,
		mcpeffect.Read, d.listTasks)
	addTool(t, "search_tasks", "Search tasks",
		"Search titles, descriptions and comments of tasks for a piece of text, oldest first."+paged+
			fmt.Sprintf(" Each call reads at most %d tasks, so a page may hold fewer than asked for, even none, and still have a next_cursor: follow it to search the rest.", store.MaxSearchScan),
		mcpeffect.Read, d.searchTasks)
	addTool(t, "get_task", "Get task",
		"One task with its steps (the first 50: list_steps has them all), dependencies, approval state, labels and current run.",
		mcpeffect.Read, d.getTask)
	addTool(t, "get_task_activity", "Get task activity",
		"Audit trail of a task: who (which person or agent) changed what, when, with the old values of what was overwritten, oldest first."+paged,
		mcpeffect.Read, d.getTaskActivity)
	addTool(t, "list_subtasks", "List subtasks",
		"Child tasks of a task, created by decompose_task or by hand, oldest first."+paged,
		mcpeffect.Read, d.listSubtasks)
	addTool(t, "get_next_task", "Get my next task",
		"The next ready task for the caller: open, unblocked, its dependencies done, assigned to the caller or to no one; for an agent, the tasks of its runs come first. It does not claim it: claim_task does, which also starts the run queued on it. A paused agent gets nothing.",
		mcpeffect.Read, d.getNextTask)

	addTool(t, "create_task", "Create task",
		"Create a task. Unless it is auto-close it needs a human's approval to become done; project defaults apply to what is left out. Only a human may make a task auto-close.",
		mcpeffect.Write, d.createTask)
	addTool(t, "update_task", "Update task",
		"Overwrite fields of a task (title, description, due, priority, auto_close); the activity log keeps the old values. Only a human may make a task auto-close.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.updateTask)
	addTool(t, "delete_task", "Delete task",
		"Move a task, with its subtasks, steps and comments, to the Trash, from where restore_from_trash brings it back; no-op if already there.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.deleteTask)
	addTool(t, "move_task", "Move task to a project",
		"Put a task in a project, or in none if project_id is left out.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.moveTask)
	addTool(t, "assign_task", "Assign task",
		"Set who a task is for (a person or an agent, by name), or no one if assignee is left out.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.assignTask)
	addTool(t, "claim_task", "Claim task",
		"Assign an unclaimed task to the caller, and start the run queued on it for the caller, if any; no-op if the caller already holds it. Refused to a paused agent.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.claimTask)
	addTool(t, "block_task", "Block task",
		"Mark an open task blocked, with the reason and optionally the task it waits for.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.blockTask)
	addTool(t, "unblock_task", "Unblock task",
		"Clear the blocked state of a task; no-op if it is not blocked.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.unblockTask)
	addTool(t, "close_task", "Close task",
		"Finish a task: done if it is auto-close, else awaiting_approval with one approval request for a human (repeating adds no second).",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.closeTask)
	addTool(t, "reopen_task", "Reopen task",
		"Set a done or awaiting_approval task back to open, withdrawing its approval request; no-op if it is not closed.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.reopenTask)
	addTool(t, "add_task_dependency", "Add task dependency",
		"Make task_id depend on depends_on: it is not ready until depends_on is done. No-op if the dependency exists; refused if it would make a cycle. A task waits for 50 others at most.",
		mcpeffect.Idempotent, d.addTaskDependency)
	addTool(t, "remove_task_dependency", "Remove task dependency",
		"Remove the dependency of task_id on depends_on; no-op if there is none.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.removeTaskDependency)
}

type listMyTasksArgs struct {
	Status    store.Status `json:"status,omitempty" jsonschema:"only tasks of this status; by default all but done ones"`
	ProjectID string       `json:"project_id,omitempty" jsonschema:"only tasks of this project"`
	DueBefore string       `json:"due_before,omitempty" jsonschema:"only tasks due on or before this date (YYYY-MM-DD)"`
	Cursor    string       `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page"`
	Limit     int          `json:"limit,omitempty" jsonschema:"the most tasks to return (1 to 200; default 50)"`
}

func (d *done) listMyTasks(ctx context.Context, in listMyTasksArgs) (store.TaskPage, error) {
	page, err := d.store.ListMyTasks(ctx, caller(ctx), store.TaskFilter{
		Status: in.Status, ProjectID: in.ProjectID, DueBefore: in.DueBefore, After: in.Cursor, Limit: in.Limit,
	})
	return page, err
}

type listTasksArgs struct {
	ProjectID string       `json:"project_id,omitempty" jsonschema:"only tasks of this project; without it, tasks of archived projects are left out"`
	Assignee  string       `json:"assignee,omitempty" jsonschema:"only tasks assigned to this person or agent"`
	Status    store.Status `json:"status,omitempty" jsonschema:"only tasks of this status"`
	Cursor    string       `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page"`
	Limit     int          `json:"limit,omitempty" jsonschema:"the most tasks to return (1 to 200; default 50)"`
}

func (d *done) listTasks(ctx context.Context, in listTasksArgs) (store.TaskPage, error) {
	page, err := d.store.ListTasks(ctx, store.TaskFilter{
		ProjectID: in.ProjectID, Assignee: in.Assignee, Status: in.Status, After: in.Cursor, Limit: in.Limit,
	})
	return page, err
}

type searchTasksArgs struct {
	Query string `json:"query" jsonschema:"the text to look for, ignoring case"`
	store.Page
}

type tasksResult struct {
	Tasks      []store.Task `json:"tasks"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

func (d *done) searchTasks(ctx context.Context, in searchTasksArgs) (tasksResult, error) {
	l, err := d.store.SearchTasks(ctx, in.Query, in.Page)
	return tasksResult{l.Items, l.NextCursor}, err
}

func (d *done) getTask(ctx context.Context, in taskArg) (store.TaskDetail, error) {
	return d.store.GetTask(ctx, in.TaskID)
}

type activityResult struct {
	Activity   []store.Activity `json:"activity"`
	NextCursor string           `json:"next_cursor,omitempty"`
}

func (d *done) getTaskActivity(ctx context.Context, in taskPageArgs) (activityResult, error) {
	l, err := d.store.TaskActivity(ctx, in.TaskID, in.Page)
	return activityResult{l.Items, l.NextCursor}, err
}

func (d *done) listSubtasks(ctx context.Context, in taskPageArgs) (tasksResult, error) {
	l, err := d.store.ListSubtasks(ctx, in.TaskID, in.Page)
	return tasksResult{l.Items, l.NextCursor}, err
}

type nextTaskResult struct {
	// Found is false when no task is ready for the caller.
	Found bool        `json:"found"`
	Task  *store.Task `json:"task,omitempty"`
	// Run is the caller's run on the task, if it has one: claim_task
	// starts it if it is queued.
	Run *store.Run `json:"run,omitempty"`
	// Paused tells a paused agent why it gets nothing.
	Paused *store.Pause `json:"paused,omitempty"`
}

func (d *done) getNextTask(ctx context.Context, _ noArgs) (nextTaskResult, error) {
	next, err := d.store.NextTask(ctx, caller(ctx))
	return nextTaskResult{Found: next.Task != nil, Task: next.Task, Run: next.Run, Paused: next.Paused}, err
}

func (d *done) createTask(ctx context.Context, in store.NewTask) (store.Task, error) {
	return d.store.CreateTask(ctx, caller(ctx), in)
}

type updateTaskArgs struct {
	TaskID string `json:"task_id" jsonschema:"the id of the task"`
	store.TaskPatch
}

func (d *done) updateTask(ctx context.Context, in updateTaskArgs) (store.Task, error) {
	return d.store.UpdateTask(ctx, caller(ctx), in.TaskID, in.TaskPatch)
}

func (d *done) deleteTask(ctx context.Context, in taskArg) (store.TrashItem, error) {
	return d.store.DeleteTask(ctx, caller(ctx), in.TaskID)
}

type moveTaskArgs struct {
	TaskID    string `json:"task_id" jsonschema:"the id of the task"`
	ProjectID string `json:"project_id,omitempty" jsonschema:"the project to move the task to; left out, the task leaves its project"`
}

func (d *done) moveTask(ctx context.Context, in moveTaskArgs) (store.Task, error) {
	return d.store.MoveTask(ctx, caller(ctx), in.TaskID, in.ProjectID)
}

type assignTaskArgs struct {
	TaskID   string `json:"task_id" jsonschema:"the id of the task"`
	Assignee string `json:"assignee,omitempty" jsonschema:"the name of a person or agent; left out, the task is for no one"`
}

func (d *done) assignTask(ctx context.Context, in assignTaskArgs) (store.Task, error) {
	return d.store.AssignTask(ctx, caller(ctx), in.TaskID, in.Assignee)
}

func (d *done) claimTask(ctx context.Context, in taskArg) (store.Task, error) {
	return d.store.ClaimTask(ctx, caller(ctx), in.TaskID)
}

type blockTaskArgs struct {
	TaskID    string `json:"task_id" jsonschema:"the id of the task"`
	Reason    string `json:"reason" jsonschema:"what the task waits for"`
	BlockedBy string `json:"blocked_by,omitempty" jsonschema:"the id of the task it waits for, if any"`
}

func (d *done) blockTask(ctx context.Context, in blockTaskArgs) (store.Task, error) {
	return d.store.BlockTask(ctx, caller(ctx), in.TaskID, in.Reason, in.BlockedBy)
}

func (d *done) unblockTask(ctx context.Context, in taskArg) (store.Task, error) {
	return d.store.UnblockTask(ctx, caller(ctx), in.TaskID)
}

func (d *done) closeTask(ctx context.Context, in taskArg) (store.Task, error) {
	return d.store.CloseTask(ctx, caller(ctx), in.TaskID)
}

func (d *done) reopenTask(ctx context.Context, in taskArg) (store.Task, error) {
	return d.store.ReopenTask(ctx, caller(ctx), in.TaskID)
}

type dependencyArgs struct {
	TaskID    string `json:"task_id" jsonschema:"the id of the task that waits"`
	DependsOn string `json:"depends_on" jsonschema:"the id of the task it waits for"`
}

func (d *done) addTaskDependency(ctx context.Context, in dependencyArgs) (store.Task, error) {
	return d.store.AddDependency(ctx, caller(ctx), in.TaskID, in.DependsOn)
}

func (d *done) removeTaskDependency(ctx context.Context, in dependencyArgs) (store.Task, error) {
	return d.store.RemoveDependency(ctx, caller(ctx), in.TaskID, in.DependsOn)
}
