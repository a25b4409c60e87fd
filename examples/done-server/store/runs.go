package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RunStatus is the state of a run.
type RunStatus string

// The states of a run. A run is queued by start_run or retry_run, running
// once its agent claims the task, and ends succeeded or failed (reported
// by its agent) or cancelled.
const (
	RunQueued    RunStatus = "queued"
	RunRunning   RunStatus = "running"
	RunSucceeded RunStatus = "succeeded"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// RunStatuses lists every RunStatus.
var RunStatuses = []RunStatus{RunQueued, RunRunning, RunSucceeded, RunFailed, RunCancelled}

// Outcomes lists the statuses an agent may end its run with.
var Outcomes = []RunStatus{RunSucceeded, RunFailed}

// Terminal reports whether a run of status s is over.
func (s RunStatus) Terminal() bool {
	return s == RunSucceeded || s == RunFailed || s == RunCancelled
}

// The rules of the fleet.
const (
	// OnlineWindow is how recently one of an agent's tokens must have
	// been used for the agent to count as online. Tokens record their
	// last use to the minute, so online means seen within the last five
	// minutes, to the minute.
	OnlineWindow = 5 * time.Minute
	// StallAfter is how long a running run may go without progress before
	// fleet_status reports it stalled.
	StallAfter = 15 * time.Minute
	// MaxRunningRuns is how many runs an agent works at once: claiming the
	// task of another queued run waits until the running one ends.
	MaxRunningRuns = 1
)

// A Run is one attempt of an agent at a task.
type Run struct {
	ID        string    `json:"id"`
	TaskID    string    `json:"task_id"`
	TaskTitle string    `json:"task_title"`
	Agent     string    `json:"agent"`
	Status    RunStatus `json:"status"`
	// Instructions are the inputs of the run, which retry_run reuses.
	Instructions string `json:"instructions,omitempty"`
	// RetryOf is the run this one retries.
	RetryOf   string `json:"retry_of,omitempty"`
	QueuedAt  string `json:"queued_at"`
	QueuedBy  string `json:"queued_by"`
	StartedAt string `json:"started_at,omitempty"`
	// FinishedAt and DurationMS are set once the run is over; DurationMS
	// counts from its start, and is absent for a run cancelled in the
	// queue.
	FinishedAt     string `json:"finished_at,omitempty"`
	DurationMS     *int64 `json:"duration_ms,omitempty"`
	LastProgressAt string `json:"last_progress_at,omitempty"`
	// Progress is the last percentage the agent reported, as the run's log
	// holds it.
	Progress *int `json:"progress,omitempty"`
	// Summary is the agent's account of the result.
	Summary string `json:"summary,omitempty"`
	// CostUSD is what the run cost, as its agent reported it.
	CostUSD      *float64 `json:"cost_usd,omitempty"`
	CancelledBy  string   `json:"cancelled_by,omitempty"`
	CancelReason string   `json:"cancel_reason,omitempty"`
}

// A run's progress is that of its last report that gave one: reports are
// only appended, so that reporting progress changes no value that exists.
const runColumns = `r.id, r.task_id, t.title, r.agent, r.status, r.instructions, COALESCE(r.retry_of, ''),
	r.queued_at, r.queued_by, COALESCE(r.started_at, ''), COALESCE(r.finished_at, ''), COALESCE(r.last_progress_at, ''),
	(SELECT e.progress FROM run_events e WHERE e.run_id = r.id AND e.progress IS NOT NULL ORDER BY e.id DESC LIMIT 1),
	r.summary, r.cost_usd, r.cancelled_by, r.cancel_reason`

const runFrom = ` FROM runs r JOIN tasks t ON t.id = r.task_id`

func scanRun(row scanner) (Run, error) {
	var r Run
	var progress sql.NullInt64
	var cost sql.NullFloat64
	err := row.Scan(&r.ID, &r.TaskID, &r.TaskTitle, &r.Agent, &r.Status, &r.Instructions, &r.RetryOf,
		&r.QueuedAt, &r.QueuedBy, &r.StartedAt, &r.FinishedAt, &r.LastProgressAt,
		&progress, &r.Summary, &cost, &r.CancelledBy, &r.CancelReason)
	if progress.Valid {
		p := int(progress.Int64)
		r.Progress = &p
	}
	if cost.Valid {
		r.CostUSD = &cost.Float64
	}
	if r.StartedAt != "" && r.FinishedAt != "" {
		ms := parseStored(r.FinishedAt).Sub(parseStored(r.StartedAt)).Milliseconds()
		r.DurationMS = &ms
	}
	return r, err
}

// run loads a run.
func (t *tx) run(field, id string) (Run, error) {
	if err := checkID(field, id); err != nil {
		return Run{}, err
	}
	r, err := scanRun(t.queryRow(`SELECT `+runColumns+runFrom+` WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFoundf("run %q does not exist", id)
	}
	return r, err
}

// activeRun returns the current run of a task, if it has a run queued or
// running: the running one, or else the next queued, the oldest. A task
// may have several queued; all are for its assignee (see queueRun).
func (t *tx) activeRun(taskID string) (Run, bool, error) {
	r, err := scanRun(t.queryRow(`SELECT `+runColumns+runFrom+` WHERE r.task_id = ? AND r.status IN ('queued', 'running')
		ORDER BY r.status = 'running' DESC, r.queued_at, r.id LIMIT 1`, taskID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// runningRun returns the run the agent called name is working in, if any.
func (t *tx) runningRun(agent string) (Run, bool, error) {
	r, err := scanRun(t.queryRow(`SELECT `+runColumns+runFrom+` WHERE r.agent = ? AND r.status = 'running'`, agent))
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// event appends an entry to the log of a run.
func (t *tx) event(runID string, kind, message string, progress *int) error {
	_, err := t.exec(`INSERT INTO run_events (run_id, at, token_id, actor, kind, message, progress) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		runID, t.nowText(), t.by.TokenID, t.by.Name, kind, message, progress)
	return err
}

// checkAgent returns an error unless name, the argument called field, is
// the name of an agent: of tokens of kind agent.
func (t *tx) checkAgent(field, name string) error {
	if err := checkName(field, name); err != nil {
		return err
	}
	var kind Kind
	err := t.queryRow(`SELECT kind FROM tokens WHERE name = ? LIMIT 1`, name).Scan(&kind)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFoundf("agent %s is nobody Done knows: no token has that name", quote(name))
	case err != nil:
		return err
	case kind != Agent:
		return invalidf("%s is a person, not an agent: runs, pauses and the fleet are for agents", quote(name))
	}
	return nil
}

// A Pause tells that an agent is paused, since when, by whom and why.
type Pause struct {
	At     string `json:"at"`
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
}

// pause returns the pause of the agent called name, or nil if it is not
// paused.
func (t *tx) pause(name string) (*Pause, error) {
	var p Pause
	err := t.queryRow(`SELECT paused_at, paused_by, pause_reason FROM agents WHERE name = ? AND paused_at IS NOT NULL`, name).
		Scan(&p.At, &p.By, &p.Reason)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// checkTakesWork returns an error if name is a paused agent, to which
// nothing is given until a person resumes it: no task, no run.
func (t *tx) checkTakesWork(name string) error {
	p, err := t.pause(name)
	if err == nil && p != nil {
		err = pausedError(name, p)
	}
	return err
}

func pausedError(name string, p *Pause) error {
	why := ""
	if p.Reason != "" {
		why = ": " + quote(p.Reason)
	}
	return conflictf("agent %s is paused (by %s at %s%s), and nothing is dispatched to it until a human calls resume_agent",
		quote(name), p.By, p.At, why)
}

// StartRun queues a run of the agent called agent on a task, with
// instructions as its inputs. Without agent, the run is for the task's
// assignee if that is an agent, or else for the caller if it is one. An
// unassigned task is assigned to the agent, so that no one else takes it;
// a task assigned to someone else is refused, and so is a paused agent.
// Each call queues a new run: a task may have several queued, which its
// agent works one at a time. The agent finds the next with get_next_task,
// and starts it by claiming the task.
func (s *Store) StartRun(ctx context.Context, by Actor, taskID, agent, instructions string) (Run, error) {
	return write(ctx, s, by, func(t *tx) (Run, error) {
		r, err := t.writableTask("task_id", taskID)
		if err != nil {
			return Run{}, err
		}
		if agent == "" {
			switch {
			case r.Assignee != "" && t.isAgent(r.Assignee):
				agent = r.Assignee
			case by.Kind == Agent:
				agent = by.Name
			default:
				return Run{}, invalidf("agent is required: task %q is not assigned to an agent", taskID)
			}
		}
		if err := t.checkAgent("agent", agent); err != nil {
			return Run{}, err
		}
		if err := checkText("instructions", instructions, MaxText); err != nil {
			return Run{}, err
		}
		return t.queueRun(r, agent, instructions, "", "start_run")
	})
}

func (t *tx) isAgent(name string) bool {
	ok, _ := t.exists(`SELECT 1 FROM tokens WHERE name = ? AND kind = 'agent'`, name)
	return ok
}

func (t *tx) queueRun(r taskRecord, agent, instructions, retryOf, action string) (Run, error) {
	if err := t.checkTakesWork(agent); err != nil {
		return Run{}, err
	}
	if r.Status != StatusOpen {
		return Run{}, conflictf("task %q is %s: only an open task can get a run", r.ID, r.Status)
	}
	if r.Assignee != "" && r.Assignee != agent {
		return Run{}, conflictf("task %q is assigned to %s, so a run on it can only be theirs: assign_task it to %s first", r.ID, quote(r.Assignee), quote(agent))
	}
	id := newID()
	_, err := t.exec(`INSERT INTO runs (id, task_id, agent, status, instructions, retry_of, queued_at, queued_by) VALUES (?, ?, ?, 'queued', ?, ?, ?, ?)`,
		id, r.ID, agent, instructions, nullable(retryOf), t.nowText(), t.by.Name)
	if err != nil {
		return Run{}, err
	}
	details := map[string]any{"agent": agent}
	if retryOf != "" {
		details["retry_of"] = retryOf
	}
	if r.Assignee == "" {
		if _, err := t.exec(`UPDATE tasks SET assignee = ?, updated_at = ? WHERE id = ?`, agent, t.nowText(), r.ID); err != nil {
			return Run{}, err
		}
		details["assignee"] = change{"", agent}
	}
	if err := t.event(id, "queued", instructions, nil); err != nil {
		return Run{}, err
	}
	if err := t.record(action, "run", id, r.ID, details); err != nil {
		return Run{}, err
	}
	return t.run("run_id", id)
}

// RetryRun queues a new run with the task, agent and instructions of a
// failed or cancelled one, unless the agent is paused. Each call queues
// another, as StartRun does.
func (s *Store) RetryRun(ctx context.Context, by Actor, runID string) (Run, error) {
	return write(ctx, s, by, func(t *tx) (Run, error) {
		old, err := t.run("run_id", runID)
		if err != nil {
			return Run{}, err
		}
		if old.Status != RunFailed && old.Status != RunCancelled {
			return Run{}, conflictf("run %q is %s: only a failed or cancelled run can be retried", runID, old.Status)
		}
		r, err := t.writableTask("task_id", old.TaskID)
		if err != nil {
			return Run{}, err
		}
		if err := t.checkAgent("agent", old.Agent); err != nil {
			return Run{}, err
		}
		return t.queueRun(r, old.Agent, old.Instructions, runID, "retry_run")
	})
}

// startRun turns the caller's queued run into a running one. It is how
// claiming a task takes the work queued on it.
func (t *tx) startRun(run Run) error {
	if p, err := t.pause(run.Agent); err != nil || p != nil {
		if err == nil {
			err = pausedError(run.Agent, p)
		}
		return err
	}
	busy, ok, err := t.runningRun(run.Agent)
	if err != nil {
		return err
	}
	if ok {
		return conflictf("agent %s already works in run %q on task %q, and works %d run at a time: complete_run it first",
			quote(run.Agent), busy.ID, busy.TaskID, MaxRunningRuns)
	}
	now := t.nowText()
	if _, err := t.exec(`UPDATE runs SET status = 'running', started_at = ? WHERE id = ?`, now, run.ID); err != nil {
		return err
	}
	return t.event(run.ID, "started", "", nil)
}

// CancelRun stops a queued or running run; what its agent did so far may
// be lost. A run that is over is left as it is.
func (s *Store) CancelRun(ctx context.Context, by Actor, runID, reason string) (Run, error) {
	return write(ctx, s, by, func(t *tx) (Run, error) {
		run, err := t.run("run_id", runID)
		if err != nil {
			return Run{}, err
		}
		if err := checkText("reason", reason, MaxText); err != nil {
			return Run{}, err
		}
		if run.Status.Terminal() {
			return run, nil
		}
		_, err = t.exec(`UPDATE runs SET status = 'cancelled', finished_at = ?, cancelled_by = ?, cancel_reason = ? WHERE id = ?`,
			t.nowText(), t.by.Name, reason, runID)
		if err != nil {
			return Run{}, err
		}
		if err := t.event(runID, "cancelled", reason, nil); err != nil {
			return Run{}, err
		}
		if err := t.record("cancel_run", "run", runID, run.TaskID, map[string]any{"status": change{run.Status, RunCancelled}, "reason": reason}); err != nil {
			return Run{}, err
		}
		return t.run("run_id", runID)
	})
}

// A NewArtifact is an output that an agent attaches to its run, as
// report_run_progress and complete_run take it.
type NewArtifact struct {
	Kind  ArtifactKind `json:"kind"`
	URI   string       `json:"uri" jsonschema:"where the output is: a URL or a path"`
	Title string       `json:"title,omitempty"`
}

// ArtifactKind is the kind of an output of a run.
type ArtifactKind string

// ArtifactKinds lists the kinds of artifact.
var ArtifactKinds = []ArtifactKind{"link", "file", "pull_request", "other"}

// An Artifact is an output of a run: a link, a file, a pull request.
type Artifact struct {
	ID      string `json:"id"`
	RunID   string `json:"run_id"`
	Kind    string `json:"kind"`
	Title   string `json:"title,omitempty"`
	URI     string `json:"uri"`
	AddedAt string `json:"added_at"`
}

// MaxArtifacts is the most artifacts one call may attach.
const MaxArtifacts = 20

func (t *tx) addArtifacts(runID string, artifacts []NewArtifact) error {
	if len(artifacts) > MaxArtifacts {
		return invalidf("at most %d artifacts at once", MaxArtifacts)
	}
	for i, a := range artifacts {
		field := "artifacts[" + strconv.Itoa(i) + "]"
		if !slices.Contains(ArtifactKinds, a.Kind) {
			return invalidf("%s.kind %s is not valid: want link, file, pull_request or other", field, quote(string(a.Kind)))
		}
		if err := checkName(field+".uri", a.URI); err != nil {
			return err
		}
		if strings.ContainsAny(a.URI, " \t") {
			return invalidf("%s.uri %s must not contain spaces", field, quote(a.URI))
		}
		if a.Title != "" {
			if err := checkName(field+".title", a.Title); err != nil {
				return err
			}
		}
	}
	for _, a := range artifacts {
		_, err := t.exec(`INSERT INTO run_artifacts (id, run_id, kind, title, uri, added_at) VALUES (?, ?, ?, ?, ?, ?)`,
			newID(), runID, string(a.Kind), a.Title, a.URI, t.nowText())
		if err != nil {
			return err
		}
	}
	return nil
}

// ownRun loads a run that the caller, its agent, reports on.
func (t *tx) ownRun(runID string) (Run, error) {
	run, err := t.run("run_id", runID)
	if err != nil {
		return Run{}, err
	}
	if t.by.Kind != Agent || t.by.Name != run.Agent {
		return Run{}, forbiddenf("run %q is agent %s's: only that agent reports on it", runID, quote(run.Agent))
	}
	return run, nil
}

func checkProgress(p *int) error {
	if p != nil && (*p < 0 || *p > 100) {
		return invalidf("progress %d is out of range: want a percentage, 0 to 100", *p)
	}
	return nil
}

// ReportRunProgress appends a progress report, a heartbeat, to the log
// of the caller's running run, with optionally how far along it is and
// outputs to attach. Each call adds an entry, and changes nothing that
// exists: the run's progress is that of its last report (see runColumns),
// and only the time of its last heartbeat is written over.
//
// Unlike other writes, it records nothing in the activity log: the run's
// log records who reported what, and when, and heartbeats would drown
// the activity log and the digests made from it.
func (s *Store) ReportRunProgress(ctx context.Context, by Actor, runID, message string, progress *int, artifacts []NewArtifact) (Run, error) {
	return write(ctx, s, by, func(t *tx) (Run, error) {
		run, err := t.ownRun(runID)
		if err != nil {
			return Run{}, err
		}
		switch run.Status {
		case RunRunning:
		case RunQueued:
			return Run{}, conflictf("run %q is queued: claim_task its task %q to start it", runID, run.TaskID)
		default:
			return Run{}, conflictf("run %q is %s: it takes no more progress", runID, run.Status)
		}
		if err := checkText("message", message, MaxText); err != nil {
			return Run{}, err
		}
		if err := checkProgress(progress); err != nil {
			return Run{}, err
		}
		if err := t.addArtifacts(runID, artifacts); err != nil {
			return Run{}, err
		}
		if _, err := t.exec(`UPDATE runs SET last_progress_at = ? WHERE id = ?`, t.nowText(), runID); err != nil {
			return Run{}, err
		}
		if err := t.event(runID, "progress", message, progress); err != nil {
			return Run{}, err
		}
		return t.run("run_id", runID)
	})
}

// CompleteRun ends the caller's running run with outcome, succeeded or
// failed, a summary of the result and what it cost. Completing a run
// with the outcome it has changes nothing. It does not close the task:
// close_task does, through the approval gate.
func (s *Store) CompleteRun(ctx context.Context, by Actor, runID string, outcome RunStatus, summary string, costUSD *float64, artifacts []NewArtifact) (Run, error) {
	return write(ctx, s, by, func(t *tx) (Run, error) {
		if !slices.Contains(Outcomes, outcome) {
			return Run{}, invalidf("outcome %s is not valid: want succeeded or failed", quote(string(outcome)))
		}
		run, err := t.ownRun(runID)
		if err != nil {
			return Run{}, err
		}
		switch run.Status {
		case outcome:
			return run, nil
		case RunRunning:
		case RunQueued:
			return Run{}, conflictf("run %q is queued: claim_task its task %q to start it", runID, run.TaskID)
		default:
			return Run{}, conflictf("run %q is already %s", runID, run.Status)
		}
		if err := checkText("summary", summary, MaxText); err != nil {
			return Run{}, err
		}
		if costUSD != nil && !(*costUSD >= 0 && *costUSD < 1e9) {
			return Run{}, invalidf("cost_usd %v is out of range", *costUSD)
		}
		if err := t.addArtifacts(runID, artifacts); err != nil {
			return Run{}, err
		}
		_, err = t.exec(`UPDATE runs SET status = ?, finished_at = ?, summary = ?, cost_usd = ? WHERE id = ?`,
			string(outcome), t.nowText(), summary, costUSD, runID)
		if err != nil {
			return Run{}, err
		}
		if err := t.event(runID, string(outcome), summary, nil); err != nil {
			return Run{}, err
		}
		if err := t.record("complete_run", "run", runID, run.TaskID, map[string]any{"status": change{run.Status, outcome}, "summary": summary}); err != nil {
			return Run{}, err
		}
		return t.run("run_id", runID)
	})
}

// PauseAgent stops dispatching runs to an agent: get_next_task offers it
// nothing, and it cannot claim tasks, until a human resumes it. Its running
// run, if any, goes on. A person may pause any agent, an agent only itself.
// Pausing a paused agent changes nothing.
func (s *Store) PauseAgent(ctx context.Context, by Actor, name, reason string) (AgentInfo, error) {
	return write(ctx, s, by, func(t *tx) (AgentInfo, error) {
		if err := t.checkAgent("agent", name); err != nil {
			return AgentInfo{}, err
		}
		if by.Kind == Agent && by.Name != name {
			return AgentInfo{}, forbiddenf("an agent may pause only itself, not %s", quote(name))
		}
		if err := checkText("reason", reason, MaxText); err != nil {
			return AgentInfo{}, err
		}
		p, err := t.pause(name)
		if err != nil {
			return AgentInfo{}, err
		}
		if p == nil {
			_, err := t.exec(`INSERT INTO agents (name, paused_at, paused_by, pause_reason) VALUES (?1, ?2, ?3, ?4)
				ON CONFLICT (name) DO UPDATE SET paused_at = ?2, paused_by = ?3, pause_reason = ?4`, name, t.nowText(), by.Name, reason)
			if err != nil {
				return AgentInfo{}, err
			}
			if err := t.record("pause_agent", "agent", name, "", map[string]any{"reason": reason}); err != nil {
				return AgentInfo{}, err
			}
		}
		return t.agent(name)
	})
}

// ResumeAgent dispatches runs to a paused agent again. Only a person may
// resume an agent: pausing is how people stop one, and an agent that could
// resume itself would make that moot. Resuming an agent that is not paused
// changes nothing.
func (s *Store) ResumeAgent(ctx context.Context, by Actor, name string) (AgentInfo, error) {
	return write(ctx, s, by, func(t *tx) (AgentInfo, error) {
		if by.Kind != Human {
			return AgentInfo{}, forbiddenf("only a human may resume an agent: %s is an agent", quote(by.Name))
		}
		if err := t.checkAgent("agent", name); err != nil {
			return AgentInfo{}, err
		}
		p, err := t.pause(name)
		if err != nil {
			return AgentInfo{}, err
		}
		if p != nil {
			if _, err := t.exec(`UPDATE agents SET paused_at = NULL, paused_by = '', pause_reason = '' WHERE name = ?`, name); err != nil {
				return AgentInfo{}, err
			}
			if err := t.record("resume_agent", "agent", name, "", map[string]any{"paused_at": p.At, "paused_by": p.By}); err != nil {
				return AgentInfo{}, err
			}
		}
		return t.agent(name)
	})
}
