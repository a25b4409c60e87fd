package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ApprovalKind says what an approval request is about.
type ApprovalKind string

// The kinds of approval request. A close request, once approved, makes its
// task done; a task has at most one pending. Any other request is only a
// record of a human's decision.
const (
	ApprovalClose ApprovalKind = "close"
	ApprovalOther ApprovalKind = "other"
)

// ApprovalKinds lists every ApprovalKind.
var ApprovalKinds = []ApprovalKind{ApprovalClose, ApprovalOther}

// An Approval asks a human to validate something: closing a task (kind
// "close"), or anything else an agent wants a human to decide first (kind
// "other").
type Approval struct {
	ID              string       `json:"id"`
	TaskID          string       `json:"task_id"`
	StepID          string       `json:"step_id,omitempty"`
	Kind            ApprovalKind `json:"kind"`
	Reason          string       `json:"reason,omitempty"`
	Status          string       `json:"status"`
	RequestedBy     string       `json:"requested_by"`
	RequestedByKind Kind         `json:"requested_by_kind"`
	RequestedAt     string       `json:"requested_at"`
	DecidedBy       string       `json:"decided_by,omitempty"`
	DecidedAt       string       `json:"decided_at,omitempty"`
	DecisionNote    string       `json:"decision_note,omitempty"`
	// RunID is the run its requester, an agent, was working in on the
	// task when it asked.
	RunID string `json:"run_id,omitempty"`
}

const approvalColumns = `a.id, a.task_id, COALESCE(a.step_id, ''), a.kind, a.reason, a.status, a.requested_by,
	a.requested_by_kind, a.requested_at, a.decided_by, COALESCE(a.decided_at, ''), a.decision_note, COALESCE(a.run_id, '')`

func scanApproval(row scanner) (Approval, error) {
	var a Approval
	err := row.Scan(&a.ID, &a.TaskID, &a.StepID, &a.Kind, &a.Reason, &a.Status, &a.RequestedBy,
		&a.RequestedByKind, &a.RequestedAt, &a.DecidedBy, &a.DecidedAt, &a.DecisionNote, &a.RunID)
	return a, err
}

func (t *tx) insertApproval(taskID, stepID string, kind ApprovalKind, reason string) (Approval, error) {
	// An agent asking while it works on the task asks from its run: the
	// person deciding sees what the run did.
	var runID string
	if t.by.Kind == Agent {
		run, ok, err := t.runningRun(t.by.Name)
		if err != nil {
			return Approval{}, err
		}
		if ok && run.TaskID == taskID {
			runID = run.ID
		}
	}
	id := newID()
	_, err := t.exec(`INSERT INTO approvals (id, task_id, step_id, kind, reason, status, requested_by, requested_by_kind, requested_at, run_id)
		VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
		id, taskID, nullable(stepID), string(kind), reason, t.by.Name, string(t.by.Kind), t.nowText(), nullable(runID))
	if err != nil {
		return Approval{}, err
	}
	return t.approval(id)
}

func (t *tx) approval(id string) (Approval, error) {
	a, err := scanApproval(t.queryRow(`SELECT `+approvalColumns+` FROM approvals a WHERE a.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, notFoundf("approval %q does not exist", id)
	}
	return a, err
}

// pendingClose returns the pending close request of a task, if any.
func (t *tx) pendingClose(taskID string) (Approval, bool, error) {
	a, err := scanApproval(t.queryRow(`SELECT `+approvalColumns+` FROM approvals a
		WHERE a.task_id = ? AND a.kind = 'close' AND a.status = 'pending'`, taskID))
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	return a, err == nil, err
}

// RequestApproval asks a human to validate something about a task before
// the caller goes on: kind "other" for anything, such as a risky step, and
// kind "close" to ask for the task to be closed. A close request changes
// nothing about the task: it only asks, so that a caller that may only
// add can still ask; once a human approves it, the task is done. A task
// has one pending close request at most. Each call makes a new request.
func (s *Store) RequestApproval(ctx context.Context, by Actor, taskID, stepID string, kind ApprovalKind, reason string) (Approval, error) {
	return write(ctx, s, by, func(t *tx) (Approval, error) {
		r, err := t.writableTask("task_id", taskID)
		if err != nil {
			return Approval{}, err
		}
		if kind == "" {
			kind = ApprovalOther
		}
		if !slices.Contains(ApprovalKinds, kind) {
			return Approval{}, invalidf("kind %s is not valid: want close or other", quote(string(kind)))
		}
		if kind == ApprovalClose {
			if stepID != "" {
				return Approval{}, invalidf("a close request is about the whole task: leave step_id out")
			}
			if err := t.checkClosable(r); err != nil {
				return Approval{}, err
			}
			pending, ok, err := t.pendingClose(taskID)
			if err != nil {
				return Approval{}, err
			}
			if ok {
				return Approval{}, conflictf("task %q already has close request %q waiting for a human", taskID, pending.ID)
			}
		}
		if stepID != "" {
			st, err := t.writableStep(stepID)
			if err != nil {
				return Approval{}, err
			}
			if st.TaskID != taskID {
				return Approval{}, invalidf("step %q belongs to task %q, not to task %q", stepID, st.TaskID, taskID)
			}
		}
		if err := checkText("reason", reason, MaxText); err != nil {
			return Approval{}, err
		}
		if strings.TrimSpace(reason) == "" {
			return Approval{}, invalidf("reason is required: say what the human should validate")
		}
		a, err := t.insertApproval(taskID, stepID, kind, reason)
		if err != nil {
			return Approval{}, err
		}
		return a, t.record("request_approval", "approval", a.ID, taskID, map[string]any{"kind": kind, "reason": reason, "step_id": stepID})
	})
}

// A Verdict is what a person's approval or rejection of a request
// ([Store.ApproveTask], [Store.RejectTask]) comes to: the request as
// decided, and its task as it now is. (mcpeffect's Decision is another
// thing: whether a call may run.)
type Verdict struct {
	Approval Approval `json:"approval"`
	Task     Task     `json:"task"`
}

// ApproveTask records a human's approval of the request approvalID of the
// task: for a close request, the task becomes done. The decision is bound
// to the request the person reviewed: if it is no longer pending (the task
// was reopened and closed again, say, which replaces it), the call is
// refused and names the request that replaced it, if any. Approving what
// is already approved changes nothing.
//
// Only a human may approve, whatever the scope of an agent's token: the
// approval gate exists so that agents cannot finish work alone.
func (s *Store) ApproveTask(ctx context.Context, by Actor, taskID, approvalID, note string) (Verdict, error) {
	return s.decide(ctx, by, taskID, approvalID, note, "approved")
}

// RejectTask records a human's refusal of the request approvalID of the
// task, with a reason. For a close request a task awaiting approval goes
// back to open. As for [Store.ApproveTask], the request must be the one
// pending. Rejecting what is already rejected changes nothing. Only a
// human may reject.
func (s *Store) RejectTask(ctx context.Context, by Actor, taskID, approvalID, reason string) (Verdict, error) {
	if strings.TrimSpace(reason) == "" {
		return Verdict{}, invalidf("reason is required: say why the task is refused")
	}
	return s.decide(ctx, by, taskID, approvalID, reason, "rejected")
}

// decide records the outcome of the request approvalID with note, which
// a rejection calls its reason.
func (s *Store) decide(ctx context.Context, by Actor, taskID, approvalID, note, outcome string) (Verdict, error) {
	return write(ctx, s, by, func(t *tx) (Verdict, error) {
		verb := map[string]string{"approved": "approve", "rejected": "reject"}[outcome]
		if t.by.Kind != Human {
			return Verdict{}, forbiddenf("only a human may %s: %s is an agent, and agents cannot decide approvals whatever their token's scope", verb, quote(t.by.Name))
		}
		r, err := t.writableTask("task_id", taskID)
		if err != nil {
			return Verdict{}, err
		}
		// The person decides on the request they reviewed, by its id:
		// deciding "the task's pending request" could approve one that
		// replaced it in between, with other evidence.
		if err := checkID("approval_id", approvalID); err != nil {
			return Verdict{}, err
		}
		noteField := "note"
		if outcome == "rejected" {
			noteField = "reason"
		}
		if err := checkText(noteField, note, MaxText); err != nil {
			return Verdict{}, err
		}
		a, err := t.approval(approvalID)
		if err != nil {
			return Verdict{}, err
		}
		if a.TaskID != taskID {
			return Verdict{}, invalidf("approval %q is about task %q, not task %q", approvalID, a.TaskID, taskID)
		}
		switch a.Status {
		case outcome:
			// The same person repeating their decision changes nothing;
			// another learns that someone decided first, and who.
			if a.DecidedBy == t.by.Name {
				return Verdict{a, r.Task}, nil
			}
			fallthrough
		case "approved", "rejected":
			return Verdict{}, conflictf("approval %q was already %s by %s at %s", a.ID, a.Status, quote(a.DecidedBy), a.DecidedAt)
		case "pending":
		case "withdrawn":
			return Verdict{}, t.replaced(a)
		default:
			return Verdict{}, conflictf("approval %q is already %s", a.ID, a.Status)
		}
		now := t.nowText()
		details := map[string]any{"approval_id": a.ID, "note": note}
		if a.Kind == ApprovalClose {
			status := r.Status
			switch {
			case outcome == "approved" && r.Status != StatusDone:
				if err := t.checkClosable(r); err != nil {
					return Verdict{}, err
				}
				status = StatusDone
				_, err = t.exec(`UPDATE tasks SET status = 'done', closed_at = ?, updated_at = ? WHERE id = ?`, now, now, taskID)
			case outcome == "rejected" && r.Status == StatusAwaitingApproval:
				status = StatusOpen
				_, err = t.exec(`UPDATE tasks SET status = 'open', closed_at = NULL, updated_at = ? WHERE id = ?`, now, taskID)
			}
			if err != nil {
				return Verdict{}, err
			}
			if status != r.Status {
				details["status"] = change{r.Status, status}
			}
		}
		if _, err := t.exec(`UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, decision_note = ? WHERE id = ?`,
			outcome, t.by.Name, now, note, a.ID); err != nil {
			return Verdict{}, err
		}
		if err := t.record(verb+"_task", "approval", a.ID, taskID, details); err != nil {
			return Verdict{}, err
		}
		if a, err = t.approval(a.ID); err != nil {
			return Verdict{}, err
		}
		r, err = t.taskRow(taskID)
		return Verdict{a, r.Task}, err
	})
}

// replaced returns the error of a decision on the withdrawn request a:
// it names the request pending in its place, if any, which the person has
// not reviewed.
func (t *tx) replaced(a Approval) error {
	why := fmt.Sprintf("approval %q was withdrawn at %s by %s, so it can no longer be decided", a.ID, a.DecidedAt, quote(a.DecidedBy))
	if a.Kind != ApprovalClose {
		return conflictf("%s", why)
	}
	pending, ok, err := t.pendingClose(a.TaskID)
	switch {
	case err != nil:
		return err
	case ok:
		return conflictf("%s: task %q now has close request %q in its place; review that one (get_approval) and decide it by its id", why, a.TaskID, pending.ID)
	}
	return conflictf("%s: task %q awaits no approval now", why, a.TaskID)
}

// ListPendingApprovals returns the requests that wait for a human, oldest
// first, one page at a time, leaving out those of tasks in the Trash.
func (s *Store) ListPendingApprovals(ctx context.Context, p Page) (List[Approval], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[Approval], error) {
		if err := checkOptionalID("cursor", p.Cursor); err != nil {
			return List[Approval]{}, err
		}
		return pageOf(t, p, scanApproval, func(a Approval) string { return a.ID }, `SELECT `+approvalColumns+` FROM approvals a
			JOIN tasks t ON t.id = a.task_id
			WHERE a.status = 'pending' AND t.trash_id IS NULL AND a.id > ? ORDER BY a.id LIMIT +?`, p.Cursor)
	})
}

// An ApprovalDetail is an approval request with the run it was asked
// from, if any, and what that run produced: the evidence for the person
// who decides.
type ApprovalDetail struct {
	Approval
	RequesterRun *Run `json:"requester_run,omitempty"`
	// Evidence are the first MaxShown artifacts of the run; MoreEvidence
	// says that list_run_artifacts has more.
	Evidence     []Artifact `json:"evidence"`
	MoreEvidence bool       `json:"more_evidence,omitempty"`
}

// GetApproval returns one approval request, decided or not, with its
// requester run and that run's artifacts.
func (s *Store) GetApproval(ctx context.Context, id string) (ApprovalDetail, error) {
	return read(ctx, s, Actor{}, func(t *tx) (ApprovalDetail, error) {
		if err := checkID("approval_id", id); err != nil {
			return ApprovalDetail{}, err
		}
		a, err := t.approval(id)
		if err != nil {
			return ApprovalDetail{}, err
		}
		d := ApprovalDetail{Approval: a, Evidence: []Artifact{}}
		if a.RunID != "" {
			run, err := t.run("run_id", a.RunID)
			if err != nil {
				return d, err
			}
			d.RequesterRun = &run
			if d.Evidence, d.MoreEvidence, err = shown(t, scanArtifact, `SELECT `+artifactColumns+` FROM run_artifacts a
				WHERE a.run_id = ? ORDER BY a.id LIMIT +?`, run.ID); err != nil {
				return d, err
			}
		}
		return d, nil
	})
}
