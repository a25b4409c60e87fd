package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (d *done) addLabelTools(s *mcp.Server, r *mcpeffect.Registry) {
	mcpeffect.AddTool(s, r, tool[noArgs, labelsResult]("list_labels",
		"The labels of the workspace, by name."),
		mcpeffect.Read, d.listLabels)

	mcpeffect.AddTool(s, r, tool[createLabelArgs, store.Label]("create_label",
		"Create a label. Names are unique, ignoring case: creating the same label again is refused."),
		mcpeffect.Idempotent, d.createLabel)
	mcpeffect.AddTool(s, r, tool[taskLabelArgs, labelsResult]("add_label_to_task",
		"Put a label on a task; no-op if it is there. Returns the task's labels."),
		mcpeffect.Idempotent, d.addLabelToTask)
	mcpeffect.AddTool(s, r, tool[taskLabelArgs, labelsResult]("remove_label_from_task",
		"Take a label off a task; no-op if it is not there. Returns the task's labels."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.removeLabelFromTask)
}

type labelsResult struct {
	Labels []store.Label `json:"labels"`
}

func (d *done) listLabels(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, labelsResult, error) {
	labels, err := d.store.ListLabels(ctx)
	return nil, labelsResult{labels}, d.check(ctx, err)
}

type createLabelArgs struct {
	Name  string `json:"name"`
	Color string `json:"color,omitempty" jsonschema:"a color as #rrggbb"`
}

func (d *done) createLabel(ctx context.Context, _ *mcp.CallToolRequest, in createLabelArgs) (*mcp.CallToolResult, store.Label, error) {
	l, err := d.store.CreateLabel(ctx, caller(ctx), in.Name, in.Color)
	return nil, l, d.check(ctx, err)
}

type taskLabelArgs struct {
	TaskID  string `json:"task_id" jsonschema:"the id of the task"`
	LabelID string `json:"label_id" jsonschema:"the id of the label"`
}

func (d *done) addLabelToTask(ctx context.Context, _ *mcp.CallToolRequest, in taskLabelArgs) (*mcp.CallToolResult, labelsResult, error) {
	labels, err := d.store.AddLabelToTask(ctx, caller(ctx), in.TaskID, in.LabelID)
	return nil, labelsResult{labels}, d.check(ctx, err)
}

func (d *done) removeLabelFromTask(ctx context.Context, _ *mcp.CallToolRequest, in taskLabelArgs) (*mcp.CallToolResult, labelsResult, error) {
	labels, err := d.store.RemoveLabelFromTask(ctx, caller(ctx), in.TaskID, in.LabelID)
	return nil, labelsResult{labels}, d.check(ctx, err)
}
