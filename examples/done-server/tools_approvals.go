package main

import (
	"context"
	"net/url"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
)

// approve_task and reject_task change a task's status, so they need a full
// token; that only a human may decide, whatever the scope, is a rule of the
// domain, checked by the store on the caller's kind, because a scope says
// what a token may do, not whose it is.
func (d *done) addApprovalTools(t toolbox) {
	addTool(t, "list_pending_approvals", "List pending approvals",
		"Approval requests waiting for a human: tasks to close, and what agents asked to have validated."+paged,
		mcpeffect.Read, d.listPendingApprovals)
	addTool(t, "get_approval", "Get approval request",
		"One approval request: who asked and why, the run the agent asked from with what it produced (the evidence), and the decision if there is one.",
		mcpeffect.Read, d.getApproval)

	addTool(t, "request_approval", "Request approval",
		"Ask a human to validate something before going on: a risky step (kind other), or closing the task (kind close), which needs no more than a non-destructive token because it changes nothing: once a human approves it, the task is done. A task has one pending close request at most; each call makes a new request.",
		mcpeffect.Write, d.requestApproval)
	addTool(t, "approve_task", "Approve request",
		"A human grants the approval request approval_id, the one they reviewed: for a close request the task becomes done. Refused if that request is no longer pending (replaced by another in between, say). Human tokens only: agents are refused whatever their scope.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.approveTask)
	addTool(t, "reject_task", "Reject request",
		"A human refuses the approval request approval_id, with a reason: for a close request a task awaiting approval goes back to open. Refused if that request is no longer pending. Human tokens only: agents are refused whatever their scope.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.rejectTask)
}

type approvalArg struct {
	ApprovalID string `json:"approval_id" jsonschema:"the id of the approval request"`
}

type approvalsResult struct {
	Approvals  []store.Approval `json:"approvals"`
	NextCursor string           `json:"next_cursor,omitempty"`
}

func (d *done) listPendingApprovals(ctx context.Context, in store.Page) (approvalsResult, error) {
	l, err := d.store.ListPendingApprovals(ctx, in)
	return approvalsResult{l.Items, l.NextCursor}, err
}

func (d *done) getApproval(ctx context.Context, in approvalArg) (store.ApprovalDetail, error) {
	return d.store.GetApproval(ctx, in.ApprovalID)
}

type requestApprovalArgs struct {
	TaskID string             `json:"task_id" jsonschema:"the id of the task"`
	Kind   store.ApprovalKind `json:"kind,omitempty" jsonschema:"close: ask for the task to be closed; other (the default): anything else"`
	StepID string             `json:"step_id,omitempty" jsonschema:"the step of the task the request is about, if any (not for a close request)"`
	Reason string             `json:"reason" jsonschema:"what the human should validate, and the evidence for it"`
}

func (d *done) requestApproval(ctx context.Context, in requestApprovalArgs) (store.Approval, error) {
	return d.store.RequestApproval(ctx, caller(ctx), in.TaskID, in.StepID, in.Kind, in.Reason)
}

type approveTaskArgs struct {
	TaskID     string `json:"task_id" jsonschema:"the id of the task"`
	ApprovalID string `json:"approval_id" jsonschema:"the request to grant: the one reviewed, from list_pending_approvals or get_task"`
	Note       string `json:"note,omitempty"`
}

func (d *done) approveTask(ctx context.Context, in approveTaskArgs) (store.Verdict, error) {
	if d.pageApprovals {
		// No MCP host, however it is connected (owner mode, a person's
		// token), approves: the person does, on the page, out of the
		// host's reach.
		where := "the web page of done-server serve -http, at /app/"
		if d.baseURL != "" {
			where = d.baseURL + web.Prefix + "/approvals/" + url.PathEscape(in.ApprovalID)
		}
		return store.Verdict{}, refusal.New(refusal.Forbidden,
			"this server takes approvals on its web page only, where a person reviews and approves out of any MCP host's reach: %s", where)
	}
	return d.store.ApproveTask(ctx, caller(ctx), in.TaskID, in.ApprovalID, in.Note)
}

type rejectTaskArgs struct {
	TaskID     string `json:"task_id" jsonschema:"the id of the task"`
	ApprovalID string `json:"approval_id" jsonschema:"the request to refuse: the one reviewed, from list_pending_approvals or get_task"`
	Reason     string `json:"reason" jsonschema:"why the task is refused"`
}

func (d *done) rejectTask(ctx context.Context, in rejectTaskArgs) (store.Verdict, error) {
	return d.store.RejectTask(ctx, caller(ctx), in.TaskID, in.ApprovalID, in.Reason)
}
