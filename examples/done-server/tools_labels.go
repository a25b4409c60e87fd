package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func (d *done) addLabelTools(t toolbox) {
	addTool(t, "list_labels", "List labels",
		"The labels of the workspace, by name."+paged,
		mcpeffect.Read, d.listLabels)

	addTool(t, "create_label", "Create label",
		"Create a label. Names are unique, ignoring case: creating the same label again is refused.",
		mcpeffect.Idempotent, d.createLabel)
	addTool(t, "add_label_to_task", "Label task",
		"Put a label on a task; no-op if it is there. Returns the task's labels, at most 50.",
		mcpeffect.Idempotent, d.addLabelToTask)
	addTool(t, "remove_label_from_task", "Remove label from task",
		"Take a label off a task; no-op if it is not there. Returns the task's labels.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.removeLabelFromTask)
}

type labelsResult struct {
	Labels     []store.Label `json:"labels"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

func (d *done) listLabels(ctx context.Context, in store.Page) (labelsResult, error) {
	l, err := d.store.ListLabels(ctx, in)
	return labelsResult{l.Items, l.NextCursor}, err
}

type createLabelArgs struct {
	Name  string `json:"name"`
	Color string `json:"color,omitempty" jsonschema:"a color as #rrggbb"`
}

func (d *done) createLabel(ctx context.Context, in createLabelArgs) (store.Label, error) {
	return d.store.CreateLabel(ctx, caller(ctx), in.Name, in.Color)
}

type taskLabelArgs struct {
	TaskID  string `json:"task_id" jsonschema:"the id of the task"`
	LabelID string `json:"label_id" jsonschema:"the id of the label"`
}

func (d *done) addLabelToTask(ctx context.Context, in taskLabelArgs) (labelsResult, error) {
	labels, err := d.store.AddLabelToTask(ctx, caller(ctx), in.TaskID, in.LabelID)
	return labelsResult{Labels: labels}, err
}

func (d *done) removeLabelFromTask(ctx context.Context, in taskLabelArgs) (labelsResult, error) {
	labels, err := d.store.RemoveLabelFromTask(ctx, caller(ctx), in.TaskID, in.LabelID)
	return labelsResult{Labels: labels}, err
}
