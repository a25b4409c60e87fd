package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func (d *done) addTrashTools(t toolbox) {
	addTool(t, "list_trash", "List Trash",
		"Deleted projects, tasks, steps and comments, most recent first. All of them can be restored: Done deletes nothing for good."+paged,
		mcpeffect.Read, d.listTrash)

	addTool(t, "restore_from_trash", "Restore from Trash",
		"Bring a deleted project, task, step or comment back, whole and to its place (a task with its subtasks, steps, comments and labels), out of the Trash; no-op if it is not in the Trash.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.restoreFromTrash)
}

type trashResult struct {
	Items      []store.TrashItem `json:"items"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

func (d *done) listTrash(ctx context.Context, in store.Page) (trashResult, error) {
	l, err := d.store.ListTrash(ctx, in)
	return trashResult{l.Items, l.NextCursor}, err
}

type restoreArgs struct {
	ItemID string `json:"item_id" jsonschema:"the id the project, task, step or comment had (item_id in list_trash)"`
}

func (d *done) restoreFromTrash(ctx context.Context, in restoreArgs) (store.Restored, error) {
	return d.store.RestoreFromTrash(ctx, caller(ctx), in.ItemID)
}
