-- Done's schema on PostgreSQL, as SQLite's migrations 0001 to 0015 left
-- it there: a PostgreSQL database starts at this version, and each later
-- migration is written once for each store, under the same number.
--
-- The types are SQLite's, so that both stores hold and return the same
-- values: times are UTC text of a fixed width, flags are 0 or 1. Every
-- text compares in the "C" collation, byte by byte as SQLite does, so
-- that orders (of lists, of keyset cursors) are the same whatever
-- collation the database was made with.

CREATE TABLE tokens (
    id           TEXT COLLATE "C" PRIMARY KEY,
    secret_hash  BYTEA NOT NULL UNIQUE,
    name         TEXT COLLATE "C" NOT NULL,
    kind         TEXT COLLATE "C" NOT NULL CHECK (kind IN ('human', 'agent')),
    scope        TEXT COLLATE "C" NOT NULL CHECK (scope IN ('read-only', 'non-destructive', 'full')),
    created_at   TEXT COLLATE "C" NOT NULL,
    created_by   TEXT COLLATE "C" REFERENCES tokens (id),
    expires_at   TEXT COLLATE "C",
    revoked_at   TEXT COLLATE "C",
    last_used_at TEXT COLLATE "C"
, owner BIGINT NOT NULL DEFAULT 0 CHECK (owner IN (0, 1)));
CREATE INDEX tokens_name ON tokens (name);
CREATE TABLE trash (
    id              TEXT COLLATE "C" PRIMARY KEY,
    item_kind       TEXT COLLATE "C" NOT NULL CHECK (item_kind IN ('project', 'task', 'step', 'comment')),
    item_id         TEXT COLLATE "C" NOT NULL UNIQUE,
    title           TEXT COLLATE "C" NOT NULL,
    deleted_at      TEXT COLLATE "C" NOT NULL,
    deleted_by      TEXT COLLATE "C" NOT NULL,
    deleted_by_kind TEXT COLLATE "C" NOT NULL
);
CREATE TABLE projects (
    id               TEXT COLLATE "C" PRIMARY KEY,
    name             TEXT COLLATE "C" NOT NULL,
    description      TEXT COLLATE "C" NOT NULL DEFAULT '',
    auto_close       BIGINT NOT NULL DEFAULT 0 CHECK (auto_close IN (0, 1)),
    default_assignee TEXT COLLATE "C" NOT NULL DEFAULT '',
    archived_at      TEXT COLLATE "C",
    trash_id         TEXT COLLATE "C" REFERENCES trash (id),
    created_at       TEXT COLLATE "C" NOT NULL,
    updated_at       TEXT COLLATE "C" NOT NULL
, auto_close_by TEXT COLLATE "C" NOT NULL DEFAULT '' CHECK (auto_close = 0 OR auto_close_by <> ''));
CREATE TABLE tasks (
    id             TEXT COLLATE "C" PRIMARY KEY,
    project_id     TEXT COLLATE "C" REFERENCES projects (id),
    parent_id      TEXT COLLATE "C" REFERENCES tasks (id),
    title          TEXT COLLATE "C" NOT NULL,
    description    TEXT COLLATE "C" NOT NULL DEFAULT '',
    status         TEXT COLLATE "C" NOT NULL CHECK (status IN ('open', 'blocked', 'awaiting_approval', 'done')),
    priority       TEXT COLLATE "C" NOT NULL CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    assignee       TEXT COLLATE "C" NOT NULL DEFAULT '',
    auto_close     BIGINT NOT NULL CHECK (auto_close IN (0, 1)),
    due            TEXT COLLATE "C" NOT NULL DEFAULT '',
    blocked_reason TEXT COLLATE "C" NOT NULL DEFAULT '',
    blocked_by     TEXT COLLATE "C" REFERENCES tasks (id),
    trash_id       TEXT COLLATE "C" REFERENCES trash (id),
    created_at     TEXT COLLATE "C" NOT NULL,
    created_by     TEXT COLLATE "C" NOT NULL,
    updated_at     TEXT COLLATE "C" NOT NULL,
    closed_at      TEXT COLLATE "C"
, scheduled_start TEXT COLLATE "C" NOT NULL DEFAULT '', scheduled_end TEXT COLLATE "C" NOT NULL DEFAULT '', auto_close_by TEXT COLLATE "C" NOT NULL DEFAULT '' CHECK (auto_close = 0 OR auto_close_by <> ''));
CREATE TABLE task_dependencies (
    task_id    TEXT COLLATE "C" NOT NULL REFERENCES tasks (id),
    depends_on TEXT COLLATE "C" NOT NULL REFERENCES tasks (id),
    PRIMARY KEY (task_id, depends_on),
    CHECK (task_id <> depends_on)
);
CREATE TABLE steps (
    id                TEXT COLLATE "C" PRIMARY KEY,
    task_id           TEXT COLLATE "C" NOT NULL REFERENCES tasks (id),
    position          BIGINT NOT NULL,
    text              TEXT COLLATE "C" NOT NULL,
    notes             TEXT COLLATE "C" NOT NULL DEFAULT '',
    status            TEXT COLLATE "C" NOT NULL CHECK (status IN ('todo', 'doing', 'done', 'skipped')),
    status_changed_at TEXT COLLATE "C" NOT NULL,
    status_changed_by TEXT COLLATE "C" NOT NULL,
    trash_id          TEXT COLLATE "C" REFERENCES trash (id),
    created_at        TEXT COLLATE "C" NOT NULL,
    updated_at        TEXT COLLATE "C" NOT NULL
);
CREATE TABLE comments (
    id          TEXT COLLATE "C" PRIMARY KEY,
    task_id     TEXT COLLATE "C" NOT NULL REFERENCES tasks (id),
    author      TEXT COLLATE "C" NOT NULL,
    author_kind TEXT COLLATE "C" NOT NULL,
    body        TEXT COLLATE "C" NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL,
    edited_at   TEXT COLLATE "C",
    trash_id    TEXT COLLATE "C" REFERENCES trash (id)
);
-- SQLite's NOCASE folds ASCII letters only; so does lower() of a text
-- in the "C" collation, so that the same names collide on both stores.
CREATE TABLE labels (
    id         TEXT COLLATE "C" PRIMARY KEY,
    name       TEXT COLLATE "C" NOT NULL,
    color      TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at TEXT COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX labels_name ON labels (lower(name), id);
CREATE UNIQUE INDEX labels_name_unique ON labels (lower(name));
CREATE TABLE task_labels (
    task_id  TEXT COLLATE "C" NOT NULL REFERENCES tasks (id),
    label_id TEXT COLLATE "C" NOT NULL REFERENCES labels (id),
    PRIMARY KEY (task_id, label_id)
);
CREATE TABLE approvals (
    id                TEXT COLLATE "C" PRIMARY KEY,
    task_id           TEXT COLLATE "C" NOT NULL REFERENCES tasks (id),
    step_id           TEXT COLLATE "C" REFERENCES steps (id),
    kind              TEXT COLLATE "C" NOT NULL CHECK (kind IN ('close', 'other')),
    reason            TEXT COLLATE "C" NOT NULL DEFAULT '',
    status            TEXT COLLATE "C" NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'withdrawn')),
    requested_by      TEXT COLLATE "C" NOT NULL,
    requested_by_kind TEXT COLLATE "C" NOT NULL,
    requested_at      TEXT COLLATE "C" NOT NULL,
    decided_by        TEXT COLLATE "C" NOT NULL DEFAULT '',
    decided_at        TEXT COLLATE "C",
    decision_note     TEXT COLLATE "C" NOT NULL DEFAULT ''
,
    run_id            TEXT COLLATE "C");
CREATE UNIQUE INDEX approvals_one_pending_close ON approvals (task_id) WHERE kind = 'close' AND status = 'pending';
CREATE TABLE activity (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    at           TEXT COLLATE "C" NOT NULL,
    token_id     TEXT COLLATE "C" NOT NULL,
    actor        TEXT COLLATE "C" NOT NULL,
    actor_kind   TEXT COLLATE "C" NOT NULL,
    action       TEXT COLLATE "C" NOT NULL,
    subject_kind TEXT COLLATE "C" NOT NULL,
    subject_id   TEXT COLLATE "C" NOT NULL,
    task_id      TEXT COLLATE "C",
    details      TEXT COLLATE "C" NOT NULL DEFAULT '{}'
);
CREATE INDEX activity_task ON activity (task_id, id);
CREATE UNIQUE INDEX tokens_one_owner ON tokens (owner) WHERE owner = 1;
CREATE TABLE agents (
    name         TEXT COLLATE "C" PRIMARY KEY,
    paused_at    TEXT COLLATE "C",
    paused_by    TEXT COLLATE "C" NOT NULL DEFAULT '',
    pause_reason TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE TABLE runs (
    id               TEXT COLLATE "C" PRIMARY KEY,
    task_id          TEXT COLLATE "C" NOT NULL REFERENCES tasks (id),
    agent            TEXT COLLATE "C" NOT NULL,
    status           TEXT COLLATE "C" NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    instructions     TEXT COLLATE "C" NOT NULL DEFAULT '',
    retry_of         TEXT COLLATE "C" REFERENCES runs (id),
    queued_at        TEXT COLLATE "C" NOT NULL,
    queued_by        TEXT COLLATE "C" NOT NULL,
    started_at       TEXT COLLATE "C",
    finished_at      TEXT COLLATE "C",
    last_progress_at TEXT COLLATE "C",
    summary          TEXT COLLATE "C" NOT NULL DEFAULT '',
    cost_usd         DOUBLE PRECISION CHECK (cost_usd >= 0),
    cancelled_by     TEXT COLLATE "C" NOT NULL DEFAULT '',
    cancel_reason    TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX runs_one_active_per_task ON runs (task_id) WHERE status IN ('queued', 'running');
CREATE UNIQUE INDEX runs_one_running_per_agent ON runs (agent) WHERE status = 'running';
CREATE INDEX runs_agent ON runs (agent, id);
CREATE INDEX runs_status ON runs (status, id);
CREATE TABLE run_events (
    id       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id   TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
    at       TEXT COLLATE "C" NOT NULL,
    token_id TEXT COLLATE "C" NOT NULL,
    actor    TEXT COLLATE "C" NOT NULL,
    kind     TEXT COLLATE "C" NOT NULL CHECK (kind IN ('queued', 'started', 'progress', 'succeeded', 'failed', 'cancelled')),
    message  TEXT COLLATE "C" NOT NULL DEFAULT '',
    progress BIGINT
);
ALTER TABLE approvals ADD FOREIGN KEY (run_id) REFERENCES runs (id);
CREATE INDEX run_events_run ON run_events (run_id, id);
CREATE TABLE run_artifacts (
    id       TEXT COLLATE "C" PRIMARY KEY,
    run_id   TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
    kind     TEXT COLLATE "C" NOT NULL CHECK (kind IN ('link', 'file', 'pull_request', 'other')),
    title    TEXT COLLATE "C" NOT NULL DEFAULT '',
    uri      TEXT COLLATE "C" NOT NULL,
    added_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX run_artifacts_run ON run_artifacts (run_id, id);
CREATE INDEX activity_at ON activity (at);
CREATE TABLE calendar_links (
    id              TEXT COLLATE "C" PRIMARY KEY,
    secret_hash     BYTEA NOT NULL UNIQUE,
    owner           TEXT COLLATE "C" NOT NULL,
    project_id      TEXT COLLATE "C" REFERENCES projects (id),
    name            TEXT COLLATE "C" NOT NULL,
    created_at      TEXT COLLATE "C" NOT NULL,
    created_by      TEXT COLLATE "C" NOT NULL REFERENCES tokens (id),
    replaces        TEXT COLLATE "C" UNIQUE REFERENCES calendar_links (id),
    revoked_at      TEXT COLLATE "C",
    last_fetched_at TEXT COLLATE "C"
);
CREATE INDEX calendar_links_owner ON calendar_links (owner);
CREATE TABLE task_context (
    task_id     TEXT COLLATE "C" NOT NULL REFERENCES tasks (id),
    ref         TEXT COLLATE "C" NOT NULL,
    title       TEXT COLLATE "C" NOT NULL DEFAULT '',
    attached_at TEXT COLLATE "C" NOT NULL,
    attached_by TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (task_id, ref)
);
CREATE TABLE digest_reads (
    reader    TEXT COLLATE "C" NOT NULL,
    digest_id TEXT COLLATE "C" NOT NULL,
    read_at   TEXT COLLATE "C" NOT NULL,
    token_id  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (reader, digest_id, read_at)
);
CREATE INDEX tasks_trash ON tasks (trash_id) WHERE trash_id IS NOT NULL;
CREATE INDEX tokens_created_by ON tokens (created_by);
CREATE INDEX calendar_links_created_by ON calendar_links (created_by);
CREATE INDEX tasks_due ON tasks (due, id);
CREATE INDEX tasks_scheduled ON tasks (scheduled_start, id);
CREATE INDEX tasks_project ON tasks (project_id, id);
CREATE INDEX tasks_assignee ON tasks (assignee, id);
CREATE INDEX tasks_assignee_open ON tasks (assignee, id) WHERE status <> 'done';
CREATE INDEX tasks_status ON tasks (status, id);
CREATE INDEX comments_task ON comments (task_id, id);
CREATE INDEX tasks_parent ON tasks (parent_id, id);
CREATE INDEX steps_task ON steps (task_id, position, id);
CREATE INDEX approvals_status ON approvals (status, id);
CREATE INDEX trash_deleted ON trash (deleted_at, id);
