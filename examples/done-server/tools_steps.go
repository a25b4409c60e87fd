package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func (d *done) addStepTools(t toolbox) {
	addTool(t, "list_steps", "List steps",
		"The checklist of a task: its steps in order, with their status."+paged,
		mcpeffect.Read, d.listSteps)
	addTool(t, "get_step", "Get step",
		"One step with its notes and its last status change.",
		mcpeffect.Read, d.getStep)

	addTool(t, "decompose_task", "Split task into subtasks",
		"Split a task into subtasks and steps. Each call adds new rows, even with the same arguments.",
		mcpeffect.Write, d.decomposeTask)
	addTool(t, "add_step", "Add step",
		"Append a step to the checklist of a task.",
		mcpeffect.Write, d.addStep)
	addTool(t, "update_step", "Update step",
		"Overwrite the text or notes of a step; the activity log keeps the old values.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.updateStep)
	addTool(t, "set_step_status", "Set step status",
		"Set a step to todo, doing, done or skipped.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.setStepStatus)
	addTool(t, "reorder_steps", "Reorder steps",
		"Set the order of a task's steps: step_ids lists every step of the task once, in the new order.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.reorderSteps)
	addTool(t, "delete_step", "Delete step",
		"Move a step to the Trash, from where restore_from_trash brings it back; no-op if already there.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.deleteStep)
}

type stepArg struct {
	StepID string `json:"step_id" jsonschema:"the id of the step"`
}

type stepsResult struct {
	Steps      []store.Step `json:"steps"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

func (d *done) listSteps(ctx context.Context, in taskPageArgs) (stepsResult, error) {
	l, err := d.store.ListSteps(ctx, in.TaskID, in.Page)
	return stepsResult{l.Items, l.NextCursor}, err
}

func (d *done) getStep(ctx context.Context, in stepArg) (store.Step, error) {
	return d.store.GetStep(ctx, in.StepID)
}

type decomposeTaskArgs struct {
	TaskID   string             `json:"task_id" jsonschema:"the id of the task to split"`
	Subtasks []store.NewSubtask `json:"subtasks,omitempty" jsonschema:"child tasks to create, in the task's project and with its auto_close"`
	Steps    []string           `json:"steps,omitempty" jsonschema:"the text of each step to append to the task"`
}

func (d *done) decomposeTask(ctx context.Context, in decomposeTaskArgs) (store.Decomposition, error) {
	return d.store.DecomposeTask(ctx, caller(ctx), in.TaskID, in.Subtasks, in.Steps)
}

type addStepArgs struct {
	TaskID string `json:"task_id" jsonschema:"the id of the task"`
	Text   string `json:"text" jsonschema:"what the step is, one line"`
	Notes  string `json:"notes,omitempty"`
}

func (d *done) addStep(ctx context.Context, in addStepArgs) (store.Step, error) {
	return d.store.AddStep(ctx, caller(ctx), in.TaskID, in.Text, in.Notes)
}

type updateStepArgs struct {
	StepID string  `json:"step_id" jsonschema:"the id of the step"`
	Text   *string `json:"text,omitempty"`
	Notes  *string `json:"notes,omitempty"`
}

func (d *done) updateStep(ctx context.Context, in updateStepArgs) (store.Step, error) {
	return d.store.UpdateStep(ctx, caller(ctx), in.StepID, in.Text, in.Notes)
}

type setStepStatusArgs struct {
	StepID string           `json:"step_id" jsonschema:"the id of the step"`
	Status store.StepStatus `json:"status"`
}

func (d *done) setStepStatus(ctx context.Context, in setStepStatusArgs) (store.Step, error) {
	return d.store.SetStepStatus(ctx, caller(ctx), in.StepID, in.Status)
}

type reorderStepsArgs struct {
	TaskID  string   `json:"task_id" jsonschema:"the id of the task"`
	StepIDs []string `json:"step_ids" jsonschema:"every step of the task, once each, in the new order"`
}

func (d *done) reorderSteps(ctx context.Context, in reorderStepsArgs) (stepsResult, error) {
	steps, err := d.store.ReorderSteps(ctx, caller(ctx), in.TaskID, in.StepIDs)
	return stepsResult{Steps: steps}, err
}

func (d *done) deleteStep(ctx context.Context, in stepArg) (store.TrashItem, error) {
	return d.store.DeleteStep(ctx, caller(ctx), in.StepID)
}
