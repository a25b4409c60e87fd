package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (d *done) addCommentTools(s *mcp.Server, r *mcpeffect.Registry) {
	mcpeffect.AddTool(s, r, tool[taskArg, commentsResult]("list_comments",
		"The comment thread of a task, oldest first."),
		mcpeffect.Read, d.listComments)

	mcpeffect.AddTool(s, r, tool[commentOnTaskArgs, store.Comment]("comment_on_task",
		"Post a comment on a task, signed with the caller's name."),
		mcpeffect.Write, d.commentOnTask)
	mcpeffect.AddTool(s, r, tool[editCommentArgs, store.Comment]("edit_comment",
		"Replace the body of one of the caller's own comments; the activity log keeps the old body."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.editComment)
	mcpeffect.AddTool(s, r, tool[commentArg, store.TrashItem]("delete_comment",
		"Move a comment to the Trash, from where restore_from_trash brings it back; no-op if already there."),
		mcpeffect.Destructive|mcpeffect.Idempotent, d.deleteComment)
}

type commentArg struct {
	CommentID string `json:"comment_id" jsonschema:"the id of the comment"`
}

type commentsResult struct {
	Comments []store.Comment `json:"comments"`
}

func (d *done) listComments(ctx context.Context, _ *mcp.CallToolRequest, in taskArg) (*mcp.CallToolResult, commentsResult, error) {
	comments, err := d.store.ListComments(ctx, in.TaskID)
	return nil, commentsResult{comments}, d.check(ctx, err)
}

type commentOnTaskArgs struct {
	TaskID string `json:"task_id" jsonschema:"the id of the task"`
	Body   string `json:"body" jsonschema:"the comment"`
}

func (d *done) commentOnTask(ctx context.Context, _ *mcp.CallToolRequest, in commentOnTaskArgs) (*mcp.CallToolResult, store.Comment, error) {
	c, err := d.store.CommentOnTask(ctx, caller(ctx), in.TaskID, in.Body)
	return nil, c, d.check(ctx, err)
}

type editCommentArgs struct {
	CommentID string `json:"comment_id" jsonschema:"the id of the comment"`
	Body      string `json:"body" jsonschema:"the new body, which replaces the old"`
}

func (d *done) editComment(ctx context.Context, _ *mcp.CallToolRequest, in editCommentArgs) (*mcp.CallToolResult, store.Comment, error) {
	c, err := d.store.EditComment(ctx, caller(ctx), in.CommentID, in.Body)
	return nil, c, d.check(ctx, err)
}

func (d *done) deleteComment(ctx context.Context, _ *mcp.CallToolRequest, in commentArg) (*mcp.CallToolResult, store.TrashItem, error) {
	item, err := d.store.DeleteComment(ctx, caller(ctx), in.CommentID)
	return nil, item, d.check(ctx, err)
}
