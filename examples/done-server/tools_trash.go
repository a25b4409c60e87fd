package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (d *done) addTrashTools(s *mcp.Server, r *mcpeffect.Registry) {
	mcpeffect.AddTool(s, r, tool[noArgs, trashResult]("list_trash",
		"Deleted projects, tasks, steps and comments, most recent first. All of them can be restored: Done deletes nothing for good."),
		mcpeffect.Read, d.listTrash)

	mcpeffect.AddTool(s, r, tool[restoreArgs, store.Restored]("restore_from_trash",
		"Bring a deleted project, task, step or comment back, whole and to its place (a task with its subtasks, steps, comments and labels), out of the Trash; no-op if it is not in the Trash."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.restoreFromTrash)
}

type trashResult struct {
	Items []store.TrashItem `json:"items"`
}

func (d *done) listTrash(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, trashResult, error) {
	items, err := d.store.ListTrash(ctx)
	return nil, trashResult{items}, d.check(ctx, err)
}

type restoreArgs struct {
	ItemID string `json:"item_id" jsonschema:"the id the project, task, step or comment had (item_id in list_trash)"`
}

func (d *done) restoreFromTrash(ctx context.Context, _ *mcp.CallToolRequest, in restoreArgs) (*mcp.CallToolResult, store.Restored, error) {
	res, err := d.store.RestoreFromTrash(ctx, caller(ctx), in.ItemID)
	return nil, res, d.check(ctx, err)
}
