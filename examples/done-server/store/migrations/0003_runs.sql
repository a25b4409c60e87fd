-- Fleet and runs. An agent is the name of agent tokens (see tokens); this
-- table holds only what Done knows of an agent beyond its tokens, and has a
-- row once there is something to keep: that it is paused.
CREATE TABLE agents (
    name         TEXT PRIMARY KEY,
    paused_at    TEXT,
    paused_by    TEXT NOT NULL DEFAULT '',
    pause_reason TEXT NOT NULL DEFAULT ''
);

-- A run is one attempt of an agent at a task: queued by start_run or
-- retry_run, running once the agent claims the task, then succeeded,
-- failed or cancelled.
CREATE TABLE runs (
    id               TEXT PRIMARY KEY,
    task_id          TEXT NOT NULL REFERENCES tasks (id),
    agent            TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    instructions     TEXT NOT NULL DEFAULT '',
    retry_of         TEXT REFERENCES runs (id),
    queued_at        TEXT NOT NULL,
    queued_by        TEXT NOT NULL,
    started_at       TEXT,
    finished_at      TEXT,
    last_progress_at TEXT,
    progress         INTEGER CHECK (progress BETWEEN 0 AND 100),
    summary          TEXT NOT NULL DEFAULT '',
    cost_usd         REAL CHECK (cost_usd >= 0),
    cancelled_by     TEXT NOT NULL DEFAULT '',
    cancel_reason    TEXT NOT NULL DEFAULT ''
);
-- A task has at most one run under way, which get_task shows as its
-- current run, and an agent works one run at a time.
CREATE UNIQUE INDEX runs_one_active_per_task ON runs (task_id) WHERE status IN ('queued', 'running');
CREATE UNIQUE INDEX runs_one_running_per_agent ON runs (agent) WHERE status = 'running';
CREATE INDEX runs_agent ON runs (agent, id);
CREATE INDEX runs_status ON runs (status, id);

-- The log of a run: what happened to it, and the progress its agent
-- reported. A run belongs to one agent, and only that agent reports on it,
-- so this log is also the record of who did what; progress reports stay
-- out of the activity log, which heartbeats would drown.
CREATE TABLE run_events (
    id       INTEGER PRIMARY KEY,
    run_id   TEXT NOT NULL REFERENCES runs (id),
    at       TEXT NOT NULL,
    token_id TEXT NOT NULL,
    actor    TEXT NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('queued', 'started', 'progress', 'succeeded', 'failed', 'cancelled')),
    message  TEXT NOT NULL DEFAULT '',
    progress INTEGER
);
CREATE INDEX run_events_run ON run_events (run_id, id);

-- What a run produced: links, files, pull requests.
CREATE TABLE run_artifacts (
    id       TEXT PRIMARY KEY,
    run_id   TEXT NOT NULL REFERENCES runs (id),
    kind     TEXT NOT NULL CHECK (kind IN ('link', 'file', 'pull_request', 'other')),
    title    TEXT NOT NULL DEFAULT '',
    uri      TEXT NOT NULL,
    added_at TEXT NOT NULL
);
CREATE INDEX run_artifacts_run ON run_artifacts (run_id, id);

-- The run an agent was working in when it asked for an approval: the human
-- who decides sees what the run did (its log, its artifacts).
ALTER TABLE approvals ADD COLUMN run_id TEXT REFERENCES runs (id);
