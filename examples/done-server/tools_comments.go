package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func (d *done) addCommentTools(t toolbox) {
	addTool(t, "list_comments", "List comments",
		"The comment thread of a task, oldest first."+paged,
		mcpeffect.Read, d.listComments)

	addTool(t, "comment_on_task", "Comment on task",
		"Post a comment on a task, signed with the caller's name.",
		mcpeffect.Write, d.commentOnTask)
	addTool(t, "edit_comment", "Edit comment",
		"Replace the body of one of the caller's own comments; the activity log keeps the old body.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.editComment)
	addTool(t, "delete_comment", "Delete comment",
		"Move a comment to the Trash, from where restore_from_trash brings it back; no-op if already there.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.deleteComment)
}

type commentArg struct {
	CommentID string `json:"comment_id" jsonschema:"the id of the comment"`
}

type commentsResult struct {
	Comments   []store.Comment `json:"comments"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

func (d *done) listComments(ctx context.Context, in taskPageArgs) (commentsResult, error) {
	l, err := d.store.ListComments(ctx, in.TaskID, in.Page)
	return commentsResult{l.Items, l.NextCursor}, err
}

type commentOnTaskArgs struct {
	TaskID string `json:"task_id" jsonschema:"the id of the task"`
	Body   string `json:"body" jsonschema:"the comment"`
}

func (d *done) commentOnTask(ctx context.Context, in commentOnTaskArgs) (store.Comment, error) {
	return d.store.CommentOnTask(ctx, caller(ctx), in.TaskID, in.Body)
}

type editCommentArgs struct {
	CommentID string `json:"comment_id" jsonschema:"the id of the comment"`
	Body      string `json:"body" jsonschema:"the new body, which replaces the old"`
}

func (d *done) editComment(ctx context.Context, in editCommentArgs) (store.Comment, error) {
	return d.store.EditComment(ctx, caller(ctx), in.CommentID, in.Body)
}

func (d *done) deleteComment(ctx context.Context, in commentArg) (store.TrashItem, error) {
	return d.store.DeleteComment(ctx, caller(ctx), in.CommentID)
}
