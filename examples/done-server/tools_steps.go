package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (d *done) addStepTools(s *mcp.Server, r *mcpeffect.Registry) {
	mcpeffect.AddTool(s, r, tool[taskArg, stepsResult]("list_steps",
		"The checklist of a task: its steps in order, with their status."),
		mcpeffect.Read, d.listSteps)
	mcpeffect.AddTool(s, r, tool[stepArg, store.Step]("get_step",
		"One step with its notes and its last status change."),
		mcpeffect.Read, d.getStep)

	mcpeffect.AddTool(s, r, tool[decomposeTaskArgs, store.Decomposition]("decompose_task",
		"Split a task into subtasks and steps. Each call adds new rows, even with the same arguments."),
		mcpeffect.Write, d.decomposeTask)
	mcpeffect.AddTool(s, r, tool[addStepArgs, store.Step]("add_step",
		"Append a step to the checklist of a task."),
		mcpeffect.Write, d.addStep)
	mcpeffect.AddTool(s, r, tool[updateStepArgs, store.Step]("update_step",
		"Overwrite the text or notes of a step; the activity log keeps the old values."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.updateStep)
	mcpeffect.AddTool(s, r, tool[setStepStatusArgs, store.Step]("set_step_status",
		"Set a step to todo, doing, done or skipped."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.setStepStatus)
	mcpeffect.AddTool(s, r, tool[reorderStepsArgs, stepsResult]("reorder_steps",
		"Set the order of a task's steps: step_ids lists every step of the task once, in the new order."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.reorderSteps)
	mcpeffect.AddTool(s, r, tool[stepArg, store.TrashItem]("delete_step",
		"Move a step to the Trash, from where restore_from_trash brings it back; no-op if already there."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.deleteStep)
}

type stepArg struct {
	StepID string `json:"step_id" jsonschema:"the id of the step"`
}

type stepsResult struct {
	Steps []store.Step `json:"steps"`
}

func (d *done) listSteps(ctx context.Context, _ *mcp.CallToolRequest, in taskArg) (*mcp.CallToolResult, stepsResult, error) {
	steps, err := d.store.ListSteps(ctx, in.TaskID)
	return nil, stepsResult{steps}, d.check(ctx, err)
}

func (d *done) getStep(ctx context.Context, _ *mcp.CallToolRequest, in stepArg) (*mcp.CallToolResult, store.Step, error) {
	step, err := d.store.GetStep(ctx, in.StepID)
	return nil, step, d.check(ctx, err)
}

type decomposeTaskArgs struct {
	TaskID   string       `json:"task_id" jsonschema:"the id of the task to split"`
	Subtasks []subtaskArg `json:"subtasks,omitempty" jsonschema:"child tasks to create, in the task's project and with its auto_close"`
	Steps    []string     `json:"steps,omitempty" jsonschema:"the text of each step to append to the task"`
}

type subtaskArg struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Assignee    string `json:"assignee,omitempty" jsonschema:"the name of the person or agent the subtask is for"`
}

func (d *done) decomposeTask(ctx context.Context, _ *mcp.CallToolRequest, in decomposeTaskArgs) (*mcp.CallToolResult, store.Decomposition, error) {
	subtasks := make([]store.NewSubtask, len(in.Subtasks))
	for i, s := range in.Subtasks {
		subtasks[i] = store.NewSubtask{Title: s.Title, Description: s.Description, Assignee: s.Assignee}
	}
	dec, err := d.store.DecomposeTask(ctx, caller(ctx), in.TaskID, subtasks, in.Steps)
	return nil, dec, d.check(ctx, err)
}

type addStepArgs struct {
	TaskID string `json:"task_id" jsonschema:"the id of the task"`
	Text   string `json:"text" jsonschema:"what the step is, one line"`
	Notes  string `json:"notes,omitempty"`
}

func (d *done) addStep(ctx context.Context, _ *mcp.CallToolRequest, in addStepArgs) (*mcp.CallToolResult, store.Step, error) {
	step, err := d.store.AddStep(ctx, caller(ctx), in.TaskID, in.Text, in.Notes)
	return nil, step, d.check(ctx, err)
}

type updateStepArgs struct {
	StepID string  `json:"step_id" jsonschema:"the id of the step"`
	Text   *string `json:"text,omitempty"`
	Notes  *string `json:"notes,omitempty"`
}

func (d *done) updateStep(ctx context.Context, _ *mcp.CallToolRequest, in updateStepArgs) (*mcp.CallToolResult, store.Step, error) {
	step, err := d.store.UpdateStep(ctx, caller(ctx), in.StepID, in.Text, in.Notes)
	return nil, step, d.check(ctx, err)
}

type setStepStatusArgs struct {
	StepID string           `json:"step_id" jsonschema:"the id of the step"`
	Status store.StepStatus `json:"status"`
}

func (d *done) setStepStatus(ctx context.Context, _ *mcp.CallToolRequest, in setStepStatusArgs) (*mcp.CallToolResult, store.Step, error) {
	step, err := d.store.SetStepStatus(ctx, caller(ctx), in.StepID, in.Status)
	return nil, step, d.check(ctx, err)
}

type reorderStepsArgs struct {
	TaskID  string   `json:"task_id" jsonschema:"the id of the task"`
	StepIDs []string `json:"step_ids" jsonschema:"every step of the task, once each, in the new order"`
}

func (d *done) reorderSteps(ctx context.Context, _ *mcp.CallToolRequest, in reorderStepsArgs) (*mcp.CallToolResult, stepsResult, error) {
	steps, err := d.store.ReorderSteps(ctx, caller(ctx), in.TaskID, in.StepIDs)
	return nil, stepsResult{steps}, d.check(ctx, err)
}

func (d *done) deleteStep(ctx context.Context, _ *mcp.CallToolRequest, in stepArg) (*mcp.CallToolResult, store.TrashItem, error) {
	item, err := d.store.DeleteStep(ctx, caller(ctx), in.StepID)
	return nil, item, d.check(ctx, err)
}
