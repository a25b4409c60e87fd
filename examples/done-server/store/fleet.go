package store

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpeffect/mcpeffect"
)

// An AgentInfo is what Done knows of an agent: the name its agent tokens
// share, what they allow, and its state.
type AgentInfo struct {
	Name string `json:"name"`
	// State sums up the flags below: paused, busy (in a run), online
	// (seen within OnlineWindow) or offline.
	State  string `json:"state"`
	Online bool   `json:"online"`
	Busy   bool   `json:"busy"`
	Paused *Pause `json:"paused,omitempty"`
	// LastSeenAt is the last use of any of its tokens, to the minute.
	LastSeenAt string `json:"last_seen_at,omitempty"`
	// Scope is the widest scope of its live tokens: what it may call, its
	// capabilities in Done. An agent with no live token may call nothing,
	// and has no scope: the field is absent.
	Scope      mcpeffect.Scope `json:"scope,omitempty"`
	LiveTokens int             `json:"live_tokens"`
	// CurrentRunID is the run it is working in.
	CurrentRunID string `json:"current_run_id,omitempty"`
	// QueuedRuns counts the runs waiting for it.
	QueuedRuns int `json:"queued_runs"`
}

// agents returns the agents, by name; with a name, only that agent.
func (t *tx) agents(name string) ([]AgentInfo, error) {
	where, args := `k.kind = 'agent'`, []any{}
	if name != "" {
		where, args = where+` AND k.name = ?`, append(args, name)
	}
	type token struct {
		name, scope, lastUsed string
		live                  bool
	}
	now := t.nowText()
	tokens, err := collect(t, func(row scanner) (token, error) {
		var k token
		return k, row.Scan(&k.name, &k.scope, &k.lastUsed, &k.live)
	}, `SELECT k.name, k.scope, COALESCE(k.last_used_at, ''),
			k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?)
		FROM tokens k WHERE `+where+` ORDER BY k.name, k.id`, append([]any{now}, args...)...)
	if err != nil {
		return nil, err
	}
	online := formatTime(t.now.Add(-OnlineWindow))
	var agents []AgentInfo
	for _, k := range tokens {
		if len(agents) == 0 || agents[len(agents)-1].Name != k.name {
			agents = append(agents, AgentInfo{Name: k.name})
		}
		a := &agents[len(agents)-1]
		a.LastSeenAt = max(a.LastSeenAt, k.lastUsed)
		if k.live {
			a.LiveTokens++
			if s, err := mcpeffect.ParseScope(k.scope); err == nil {
				a.Scope = max(a.Scope, s)
			}
		}
		a.Online = a.LastSeenAt != "" && a.LastSeenAt >= online
	}
	for i := range agents {
		a := &agents[i]
		if a.Paused, err = t.pause(a.Name); err != nil {
			return nil, err
		}
		run, ok, err := t.runningRun(a.Name)
		if err != nil {
			return nil, err
		}
		if ok {
			a.Busy, a.CurrentRunID = true, run.ID
		}
		err = t.queryRow(`SELECT count(*) FROM runs r JOIN tasks t ON t.id = r.task_id
			WHERE r.agent = ? AND r.status = 'queued' AND t.trash_id IS NULL`, a.Name).Scan(&a.QueuedRuns)
		if err != nil {
			return nil, err
		}
		switch {
		case a.Paused != nil:
			a.State = "paused"
		case a.Busy:
			a.State = "busy"
		case a.Online:
			a.State = "online"
		default:
			a.State = "offline"
		}
	}
	return agents, nil
}

// agent returns the agent called name.
func (t *tx) agent(name string) (AgentInfo, error) {
	agents, err := t.agents(name)
	if err != nil {
		return AgentInfo{}, err
	}
	if len(agents) == 0 {
		return AgentInfo{}, notFoundf("agent %s is nobody Done knows: no agent token has that name", quote(name))
	}
	return agents[0], nil
}

// ListAgents returns every agent that has, or had, a token, by name, one
// page at a time.
func (s *Store) ListAgents(ctx context.Context, p Page) (List[AgentInfo], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[AgentInfo], error) {
		after, err := afterKey("list_agents", p.Cursor, "")
		if err != nil {
			return List[AgentInfo]{}, err
		}
		names, err := pageOf(t, p, func(row scanner) (string, error) {
			var name string
			return name, row.Scan(&name)
		}, func(name string) string { return keyCursor(name) },
			`SELECT DISTINCT name FROM tokens WHERE kind = 'agent' AND name > ? ORDER BY name LIMIT +?`, after[0])
		if err != nil {
			return List[AgentInfo]{}, err
		}
		page := List[AgentInfo]{Items: make([]AgentInfo, len(names.Items)), NextCursor: names.NextCursor}
		for i, name := range names.Items {
			if page.Items[i], err = t.agent(name); err != nil {
				return List[AgentInfo]{}, err
			}
		}
		return page, nil
	})
}

// An AgentDetail is an agent with its runs and the limits it works under.
type AgentDetail struct {
	AgentInfo
	CurrentRun *Run `json:"current_run,omitempty"`
	// RecentRuns are its last runs, newest first.
	RecentRuns []Run  `json:"recent_runs"`
	Limits     Limits `json:"limits"`
}

// Limits are the rules the fleet works under.
type Limits struct {
	MaxRunningRuns      int `json:"max_running_runs"`
	OnlineWindowMinutes int `json:"online_window_minutes"`
	StallAfterMinutes   int `json:"stall_after_minutes"`
}

var limits = Limits{
	MaxRunningRuns:      MaxRunningRuns,
	OnlineWindowMinutes: int(OnlineWindow.Minutes()),
	StallAfterMinutes:   int(StallAfter.Minutes()),
}

// RecentRuns is how many runs [Store.GetAgent] shows.
const RecentRuns = 10

// GetAgent returns one agent, its current run and its recent runs.
func (s *Store) GetAgent(ctx context.Context, name string) (AgentDetail, error) {
	return read(ctx, s, Actor{}, func(t *tx) (AgentDetail, error) {
		if err := checkName("agent", name); err != nil {
			return AgentDetail{}, err
		}
		a, err := t.agent(name)
		if err != nil {
			return AgentDetail{}, err
		}
		d := AgentDetail{AgentInfo: a, Limits: limits}
		if run, ok, err := t.runningRun(name); err != nil {
			return d, err
		} else if ok {
			d.CurrentRun = &run
		}
		d.RecentRuns, err = collect(t, scanRun, `SELECT `+runColumns+runFrom+` WHERE r.agent = ? ORDER BY r.id DESC LIMIT +?`, name, RecentRuns)
		return d, err
	})
}

// A Fleet sums up the agents and their runs.
type Fleet struct {
	AsOf   string `json:"as_of"`
	Agents int    `json:"agents"`
	Online int    `json:"online"`
	// Busy agents are working in a run, Paused ones get nothing new, and
	// Idle ones are online, neither busy nor paused: ready for work.
	Busy   int `json:"busy"`
	Paused int `json:"paused"`
	Idle   int `json:"idle"`
	// QueueDepth counts the queued runs of live tasks, of which
	// QueuedForPaused wait for paused agents.
	QueueDepth      int `json:"queue_depth"`
	QueuedForPaused int `json:"queued_for_paused"`
	// FailingRuns are failed runs that are the last run of a task still
	// to do: nobody retried them, and the task is not done.
	FailingRuns []Run `json:"failing_runs"`
	// StalledRuns are running runs without progress for StallAfter.
	StalledRuns []Run  `json:"stalled_runs"`
	Limits      Limits `json:"limits"`
}

// FleetStatus sums up the fleet: agents online, busy and paused, the
// queue, and the runs that need someone's attention.
func (s *Store) FleetStatus(ctx context.Context) (Fleet, error) {
	return read(ctx, s, Actor{}, func(t *tx) (Fleet, error) {
		f := Fleet{AsOf: t.nowText(), Limits: limits}
		agents, err := t.agents("")
		if err != nil {
			return f, err
		}
		paused := map[string]bool{}
		for _, a := range agents {
			f.Agents++
			switch {
			case a.Paused != nil:
				f.Paused++
				paused[a.Name] = true
			case a.Online && !a.Busy:
				f.Idle++
			}
			if a.Online {
				f.Online++
			}
			if a.Busy {
				f.Busy++
			}
			f.QueueDepth += a.QueuedRuns
			if a.Paused != nil {
				f.QueuedForPaused += a.QueuedRuns
			}
		}
		if f.FailingRuns, err = t.failingRuns(); err != nil {
			return f, err
		}
		stalled := formatTime(t.now.Add(-StallAfter))
		f.StalledRuns, err = collect(t, scanRun, `SELECT `+runColumns+runFrom+`
			WHERE r.status = 'running' AND COALESCE(r.last_progress_at, r.started_at) < ?
			ORDER BY r.id LIMIT +?`, stalled, MaxLimit)
		return f, err
	})
}

// failingRuns returns the failed runs that are the last run of a task
// still to do, newest first: nobody retried them, and the task is not done.
func (t *tx) failingRuns() ([]Run, error) {
	return collect(t, scanRun, `SELECT `+runColumns+runFrom+`
		WHERE r.status = 'failed' AND t.trash_id IS NULL AND t.status <> 'done'
		AND NOT EXISTS (SELECT 1 FROM runs n WHERE n.task_id = r.task_id AND n.id > r.id)
		ORDER BY r.id DESC LIMIT +?`, MaxLimit)
}

// RunFilter selects runs for [Store.ListRuns], as list_runs takes it.
// Empty fields select everything.
type RunFilter struct {
	TaskID string    `json:"task_id,omitempty" jsonschema:"only runs on this task"`
	Agent  string    `json:"agent,omitempty" jsonschema:"only runs of this agent"`
	Status RunStatus `json:"status,omitempty" jsonschema:"only runs of this status"`
	// Since and Until keep the runs queued at or after Since, and before
	// Until: dates or RFC 3339 times.
	Since string `json:"since,omitempty" jsonschema:"only runs queued at or after this date (2025-06-30) or time (2025-06-30T14:00:00Z)"`
	Until string `json:"until,omitempty" jsonschema:"only runs queued before this date or time"`
	// Cursor is the NextCursor of the page before: the last id of that
	// page.
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the most runs to return (1 to 200; default 50)"`
}

// A RunPage is one page of runs, newest first.
type RunPage struct {
	Runs       []Run  `json:"runs"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// ListRuns returns the runs that match f, newest first, one page at a
// time.
func (s *Store) ListRuns(ctx context.Context, f RunFilter) (RunPage, error) {
	return read(ctx, s, Actor{}, func(t *tx) (RunPage, error) {
		limit, err := checkLimit(f.Limit)
		if err != nil {
			return RunPage{}, err
		}
		var where []string
		var args []any
		if f.TaskID != "" {
			if err := checkID("task_id", f.TaskID); err != nil {
				return RunPage{}, err
			}
			where, args = append(where, "r.task_id = ?"), append(args, f.TaskID)
		}
		if f.Agent != "" {
			if err := checkName("agent", f.Agent); err != nil {
				return RunPage{}, err
			}
			where, args = append(where, "r.agent = ?"), append(args, f.Agent)
		}
		if f.Status != "" {
			if !slices.Contains(RunStatuses, f.Status) {
				return RunPage{}, invalidf("status %s is not valid: want queued, running, succeeded, failed or cancelled", quote(string(f.Status)))
			}
			where, args = append(where, "r.status = ?"), append(args, string(f.Status))
		}
		for _, b := range []struct {
			field, value, op string
		}{{"since", f.Since, ">="}, {"until", f.Until, "<"}} {
			if b.value == "" {
				continue
			}
			at, err := parseInstant(b.field, b.value)
			if err != nil {
				return RunPage{}, err
			}
			where, args = append(where, "r.queued_at "+b.op+" ?"), append(args, formatTime(at))
		}
		if f.Cursor != "" {
			if err := checkID("cursor", f.Cursor); err != nil {
				return RunPage{}, err
			}
			where, args = append(where, "r.id < ?"), append(args, f.Cursor)
		}
		query := `SELECT ` + runColumns + runFrom
		if len(where) > 0 {
			query += ` WHERE ` + strings.Join(where, " AND ")
		}
		runs, err := collect(t, scanRun, query+` ORDER BY r.id DESC LIMIT +?`, append(args, limit+1)...)
		if err != nil {
			return RunPage{}, err
		}
		page := RunPage{Runs: runs}
		if len(runs) > limit {
			page.Runs = runs[:limit]
			page.NextCursor = runs[limit-1].ID
		}
		return page, nil
	})
}

// GetRun returns one run.
func (s *Store) GetRun(ctx context.Context, id string) (Run, error) {
	return read(ctx, s, Actor{}, func(t *tx) (Run, error) {
		return t.run("run_id", id)
	})
}

// A RunEvent is one entry of a run's log.
type RunEvent struct {
	ID    int64  `json:"id"`
	At    string `json:"at"`
	Actor string `json:"actor"`
	// Kind is queued, started, progress, or how the run ended.
	Kind     string `json:"kind"`
	Message  string `json:"message,omitempty"`
	Progress *int   `json:"progress,omitempty"`
}

// A RunLog is one page of a run's log, oldest first.
type RunLog struct {
	Events     []RunEvent `json:"events"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// RunLogs returns the log of a run, oldest first, one page at a time;
// cursor is the NextCursor of the page before.
func (s *Store) RunLogs(ctx context.Context, runID, cursor string, limit int) (RunLog, error) {
	return read(ctx, s, Actor{}, func(t *tx) (RunLog, error) {
		if _, err := t.run("run_id", runID); err != nil {
			return RunLog{}, err
		}
		limit, err := checkLimit(limit)
		if err != nil {
			return RunLog{}, err
		}
		var after int64
		if cursor != "" {
			if after, err = strconv.ParseInt(cursor, 10, 64); err != nil || after < 0 {
				return RunLog{}, invalidf("cursor %s is not one that get_run_logs gave", quote(cursor))
			}
		}
		events, err := collect(t, func(row scanner) (RunEvent, error) {
			var e RunEvent
			var progress sql.NullInt64
			err := row.Scan(&e.ID, &e.At, &e.Actor, &e.Kind, &e.Message, &progress)
			if progress.Valid {
				p := int(progress.Int64)
				e.Progress = &p
			}
			return e, err
		}, `SELECT id, at, actor, kind, message, progress FROM run_events WHERE run_id = ? AND id > ? ORDER BY id LIMIT +?`, runID, after, limit+1)
		if err != nil {
			return RunLog{}, err
		}
		log := RunLog{Events: events}
		if len(events) > limit {
			log.Events = events[:limit]
			log.NextCursor = strconv.FormatInt(events[limit-1].ID, 10)
		}
		return log, nil
	})
}

const artifactColumns = `a.id, a.run_id, a.kind, a.title, a.uri, a.added_at`

func scanArtifact(row scanner) (Artifact, error) {
	var a Artifact
	return a, row.Scan(&a.ID, &a.RunID, &a.Kind, &a.Title, &a.URI, &a.AddedAt)
}

// RunArtifacts returns the outputs attached to a run, oldest first, one
// page at a time.
func (s *Store) RunArtifacts(ctx context.Context, runID string, p Page) (List[Artifact], error) {
	return read(ctx, s, Actor{}, func(t *tx) (List[Artifact], error) {
		if _, err := t.run("run_id", runID); err != nil {
			return List[Artifact]{}, err
		}
		if err := checkOptionalID("cursor", p.Cursor); err != nil {
			return List[Artifact]{}, err
		}
		return pageOf(t, p, scanArtifact, func(a Artifact) string { return a.ID }, `SELECT `+artifactColumns+` FROM run_artifacts a
			WHERE a.run_id = ? AND a.id > ? ORDER BY a.id LIMIT +?`, runID, p.Cursor)
	})
}
