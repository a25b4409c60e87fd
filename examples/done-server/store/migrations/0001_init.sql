-- The first schema of Done. Times are UTC text in a fixed-width format, so
-- that text order is time order; ids are version 7 UUIDs, so that id order
-- is creation order. Optional references are NULL, optional text is ''.

-- A token is a credential and the identity behind it. name identifies a
-- person or an agent; several tokens may share it (a person's laptop and
-- phone), always with the same kind. Only the SHA-256 of the secret is kept.
CREATE TABLE tokens (
    id           TEXT PRIMARY KEY,
    secret_hash  BLOB NOT NULL UNIQUE,
    name         TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('human', 'agent')),
    scope        TEXT NOT NULL CHECK (scope IN ('read-only', 'non-destructive', 'full')),
    created_at   TEXT NOT NULL,
    created_by   TEXT REFERENCES tokens (id),
    expires_at   TEXT,
    revoked_at   TEXT,
    last_used_at TEXT
);
CREATE INDEX tokens_name ON tokens (name);

-- A Trash entry stands for one deletion. Every row that the deletion hid
-- points at it through its trash_id (a project, its tasks...), so that
-- restoring brings them all back, and nothing else.
CREATE TABLE trash (
    id              TEXT PRIMARY KEY,
    item_kind       TEXT NOT NULL CHECK (item_kind IN ('project', 'task', 'step', 'comment')),
    item_id         TEXT NOT NULL UNIQUE,
    title           TEXT NOT NULL,
    deleted_at      TEXT NOT NULL,
    deleted_by      TEXT NOT NULL,
    deleted_by_kind TEXT NOT NULL
);

CREATE TABLE projects (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    description      TEXT NOT NULL DEFAULT '',
    auto_close       INTEGER NOT NULL DEFAULT 0 CHECK (auto_close IN (0, 1)),
    default_assignee TEXT NOT NULL DEFAULT '',
    archived_at      TEXT,
    trash_id         TEXT REFERENCES trash (id),
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);

CREATE TABLE tasks (
    id             TEXT PRIMARY KEY,
    project_id     TEXT REFERENCES projects (id),
    parent_id      TEXT REFERENCES tasks (id),
    title          TEXT NOT NULL,
    description    TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL CHECK (status IN ('open', 'blocked', 'awaiting_approval', 'done')),
    priority       TEXT NOT NULL CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    assignee       TEXT NOT NULL DEFAULT '',
    auto_close     INTEGER NOT NULL CHECK (auto_close IN (0, 1)),
    due            TEXT NOT NULL DEFAULT '',
    blocked_reason TEXT NOT NULL DEFAULT '',
    blocked_by     TEXT REFERENCES tasks (id),
    trash_id       TEXT REFERENCES trash (id),
    created_at     TEXT NOT NULL,
    created_by     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    closed_at      TEXT
);
CREATE INDEX tasks_project ON tasks (project_id);
CREATE INDEX tasks_parent ON tasks (parent_id);
CREATE INDEX tasks_assignee ON tasks (assignee, status);
CREATE INDEX tasks_trash ON tasks (trash_id);

-- task_id depends on depends_on: it is not ready until depends_on is done.
CREATE TABLE task_dependencies (
    task_id    TEXT NOT NULL REFERENCES tasks (id),
    depends_on TEXT NOT NULL REFERENCES tasks (id),
    PRIMARY KEY (task_id, depends_on),
    CHECK (task_id <> depends_on)
);

CREATE TABLE steps (
    id                TEXT PRIMARY KEY,
    task_id           TEXT NOT NULL REFERENCES tasks (id),
    position          INTEGER NOT NULL,
    text              TEXT NOT NULL,
    notes             TEXT NOT NULL DEFAULT '',
    status            TEXT NOT NULL CHECK (status IN ('todo', 'doing', 'done', 'skipped')),
    status_changed_at TEXT NOT NULL,
    status_changed_by TEXT NOT NULL,
    trash_id          TEXT REFERENCES trash (id),
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE INDEX steps_task ON steps (task_id, position);

CREATE TABLE comments (
    id          TEXT PRIMARY KEY,
    task_id     TEXT NOT NULL REFERENCES tasks (id),
    author      TEXT NOT NULL,
    author_kind TEXT NOT NULL,
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    edited_at   TEXT,
    trash_id    TEXT REFERENCES trash (id)
);
CREATE INDEX comments_task ON comments (task_id);

CREATE TABLE labels (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE COLLATE NOCASE,
    color      TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);

CREATE TABLE task_labels (
    task_id  TEXT NOT NULL REFERENCES tasks (id),
    label_id TEXT NOT NULL REFERENCES labels (id),
    PRIMARY KEY (task_id, label_id)
);

-- An approval asks a human to validate something: closing a task that is
-- not auto-close (kind 'close'), or anything an agent asks about first
-- (kind 'other').
CREATE TABLE approvals (
    id                TEXT PRIMARY KEY,
    task_id           TEXT NOT NULL REFERENCES tasks (id),
    step_id           TEXT REFERENCES steps (id),
    kind              TEXT NOT NULL CHECK (kind IN ('close', 'other')),
    reason            TEXT NOT NULL DEFAULT '',
    status            TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'withdrawn')),
    requested_by      TEXT NOT NULL,
    requested_by_kind TEXT NOT NULL,
    requested_at      TEXT NOT NULL,
    decided_by        TEXT NOT NULL DEFAULT '',
    decided_at        TEXT,
    decision_note     TEXT NOT NULL DEFAULT ''
);
-- The database itself keeps a task to one pending close request.
CREATE UNIQUE INDEX approvals_one_pending_close ON approvals (task_id) WHERE kind = 'close' AND status = 'pending';
CREATE INDEX approvals_status ON approvals (status);

-- The activity log: who did what, when. details holds, as JSON, what the
-- change needs to be understood later, including the old values of what
-- it overwrote.
CREATE TABLE activity (
    id           INTEGER PRIMARY KEY,
    at           TEXT NOT NULL,
    token_id     TEXT NOT NULL,
    actor        TEXT NOT NULL,
    actor_kind   TEXT NOT NULL,
    action       TEXT NOT NULL,
    subject_kind TEXT NOT NULL,
    subject_id   TEXT NOT NULL,
    task_id      TEXT,
    details      TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX activity_task ON activity (task_id, id);
