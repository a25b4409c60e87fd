package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// An agent is a name shared by agent tokens. A person queues a run of an
// agent on a task with start_run; the agent finds it with get_next_task,
// starts it by claiming the task (claim_task), reports progress and
// completes it. Who may report on a run, and who may resume an agent, are
// rules of the domain that the store checks on the caller's kind and name,
// as for approvals: a scope says what a token may do, not whose it is.
func (d *done) addFleetTools(t toolbox) {
	addTool(t, "fleet_status", "Fleet status",
		"The fleet at a glance: agents online (a token used in the last 5 minutes), busy (in a run), paused and idle, the queue of runs, and the runs that need attention: failing (the last run of an unfinished task failed) and stalled (no progress for 15 minutes).",
		mcpeffect.Read, d.fleetStatus)
	addTool(t, "list_agents", "List agents",
		"Every agent, by name: its state (paused, busy, online or offline), its scope (what its tokens allow it to call), when it was last seen, its current run and queued runs."+paged,
		mcpeffect.Read, d.listAgents)
	addTool(t, "get_agent", "Get agent",
		"One agent: its state, current run, recent runs and the limits it works under.",
		mcpeffect.Read, d.getAgent)
	addTool(t, "list_runs", "List runs",
		"Runs by task, agent, status or time queued, newest first."+paged,
		mcpeffect.Read, d.listRuns)
	addTool(t, "get_run", "Get run",
		"One run: its status, when it was queued, started and finished, its progress, the summary of its result and its cost.",
		mcpeffect.Read, d.getRun)
	addTool(t, "get_run_logs", "Get run log",
		"The log of a run, oldest first: when it was queued and started, each progress report, how it ended."+paged,
		mcpeffect.Read, d.getRunLogs)
	addTool(t, "list_run_artifacts", "List run outputs",
		"What a run produced: links, files, pull requests, as its agent attached them."+paged,
		mcpeffect.Read, d.listRunArtifacts)

	addTool(t, "start_run", "Start run",
		"Queue a run of an agent on an open task, with instructions. Each call queues a new run: a task may have several queued, which its agent works one at a time. An unassigned task is assigned to the agent. The agent finds the next with get_next_task and starts it with claim_task.",
		mcpeffect.Write, d.startRun)
	addTool(t, "retry_run", "Retry run",
		"Queue a new run with the task, agent and instructions of a failed or cancelled one. Each call queues another, as start_run does.",
		mcpeffect.Write, d.retryRun)
	addTool(t, "cancel_run", "Cancel run",
		"Stop a queued or running run; what its agent did so far may be lost. No-op if the run is already over.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.cancelRun)
	addTool(t, "report_run_progress", "Report run progress",
		"For the agent of a running run: append a progress report (a heartbeat) to its log, with optionally how far along it is and outputs to attach. Each call adds an entry.",
		mcpeffect.Write, d.reportRunProgress)
	addTool(t, "complete_run", "Complete run",
		"For the agent of a running run: end it, succeeded or failed, with a summary of the result and its cost; no-op if it already ended so. It does not close the task: close_task does.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.completeRun)
	addTool(t, "pause_agent", "Pause agent",
		"Stop dispatching work to an agent: get_next_task offers it nothing and it cannot claim tasks until a human resumes it; its running run goes on. A person may pause any agent, an agent only itself. No-op if already paused.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.pauseAgent)
	addTool(t, "resume_agent", "Resume agent",
		"Dispatch work to a paused agent again. Human tokens only: an agent cannot lift its own pause. No-op if the agent is not paused.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.resumeAgent)
}

// runOutcome is how an agent ends its run.
type runOutcome string

type agentArg struct {
	Agent string `json:"agent" jsonschema:"the name of the agent"`
}

type runArg struct {
	RunID string `json:"run_id" jsonschema:"the id of the run"`
}

type runPageArgs struct {
	runArg
	store.Page
}

func (d *done) fleetStatus(ctx context.Context, _ noArgs) (store.Fleet, error) {
	return d.store.FleetStatus(ctx)
}

type agentsResult struct {
	Agents     []store.AgentInfo `json:"agents"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

func (d *done) listAgents(ctx context.Context, in store.Page) (agentsResult, error) {
	l, err := d.store.ListAgents(ctx, in)
	return agentsResult{l.Items, l.NextCursor}, err
}

func (d *done) getAgent(ctx context.Context, in agentArg) (store.AgentDetail, error) {
	return d.store.GetAgent(ctx, in.Agent)
}

func (d *done) listRuns(ctx context.Context, in store.RunFilter) (store.RunPage, error) {
	return d.store.ListRuns(ctx, in)
}

func (d *done) getRun(ctx context.Context, in runArg) (store.Run, error) {
	return d.store.GetRun(ctx, in.RunID)
}

type runLogsArgs struct {
	RunID  string `json:"run_id" jsonschema:"the id of the run"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the most entries to return (1 to 200; default 50)"`
}

func (d *done) getRunLogs(ctx context.Context, in runLogsArgs) (store.RunLog, error) {
	return d.store.RunLogs(ctx, in.RunID, in.Cursor, in.Limit)
}

type artifactsResult struct {
	Artifacts  []store.Artifact `json:"artifacts"`
	NextCursor string           `json:"next_cursor,omitempty"`
}

func (d *done) listRunArtifacts(ctx context.Context, in runPageArgs) (artifactsResult, error) {
	l, err := d.store.RunArtifacts(ctx, in.RunID, in.Page)
	return artifactsResult{l.Items, l.NextCursor}, err
}

type startRunArgs struct {
	TaskID       string `json:"task_id" jsonschema:"the id of the task"`
	Agent        string `json:"agent,omitempty" jsonschema:"the agent to run; by default the task's assignee if it is an agent, or the caller if it is one"`
	Instructions string `json:"instructions,omitempty" jsonschema:"what the agent should do, beyond the task itself; retry_run reuses them"`
}

func (d *done) startRun(ctx context.Context, in startRunArgs) (store.Run, error) {
	return d.store.StartRun(ctx, caller(ctx), in.TaskID, in.Agent, in.Instructions)
}

func (d *done) retryRun(ctx context.Context, in runArg) (store.Run, error) {
	return d.store.RetryRun(ctx, caller(ctx), in.RunID)
}

type cancelRunArgs struct {
	RunID  string `json:"run_id" jsonschema:"the id of the run"`
	Reason string `json:"reason,omitempty" jsonschema:"why the run is stopped, for its log"`
}

func (d *done) cancelRun(ctx context.Context, in cancelRunArgs) (store.Run, error) {
	return d.store.CancelRun(ctx, caller(ctx), in.RunID, in.Reason)
}

type reportRunProgressArgs struct {
	RunID     string              `json:"run_id" jsonschema:"the id of the caller's running run"`
	Message   string              `json:"message,omitempty" jsonschema:"what the agent is doing; empty for a bare heartbeat"`
	Progress  *int                `json:"progress,omitempty" jsonschema:"how far along the run is, as a percentage"`
	Artifacts []store.NewArtifact `json:"artifacts,omitempty" jsonschema:"outputs to attach to the run"`
}

func (d *done) reportRunProgress(ctx context.Context, in reportRunProgressArgs) (store.Run, error) {
	return d.store.ReportRunProgress(ctx, caller(ctx), in.RunID, in.Message, in.Progress, in.Artifacts)
}

type completeRunArgs struct {
	RunID     string              `json:"run_id" jsonschema:"the id of the caller's running run"`
	Outcome   runOutcome          `json:"outcome"`
	Summary   string              `json:"summary,omitempty" jsonschema:"what the run did, or why it failed"`
	CostUSD   *float64            `json:"cost_usd,omitempty" jsonschema:"what the run cost, in US dollars"`
	Artifacts []store.NewArtifact `json:"artifacts,omitempty" jsonschema:"outputs to attach to the run"`
}

func (d *done) completeRun(ctx context.Context, in completeRunArgs) (store.Run, error) {
	return d.store.CompleteRun(ctx, caller(ctx), in.RunID, store.RunStatus(in.Outcome), in.Summary, in.CostUSD, in.Artifacts)
}

type pauseAgentArgs struct {
	Agent  string `json:"agent" jsonschema:"the name of the agent"`
	Reason string `json:"reason,omitempty" jsonschema:"why, for the agent and the people who will resume it"`
}

func (d *done) pauseAgent(ctx context.Context, in pauseAgentArgs) (store.AgentInfo, error) {
	return d.store.PauseAgent(ctx, caller(ctx), in.Agent, in.Reason)
}

func (d *done) resumeAgent(ctx context.Context, in agentArg) (store.AgentInfo, error) {
	return d.store.ResumeAgent(ctx, caller(ctx), in.Agent)
}
