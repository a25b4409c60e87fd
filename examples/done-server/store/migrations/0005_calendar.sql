-- When a task is planned: a date (YYYY-MM-DD, inclusive at both ends) or
-- a time of day (in timeFormat), '' when it is not scheduled.
ALTER TABLE tasks ADD COLUMN scheduled_start TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN scheduled_end TEXT NOT NULL DEFAULT '';

-- A calendar link is a secret feed URL that a calendar application polls
-- without any other credential: the secret is the credential, so only its
-- SHA-256 is kept, as for tokens. A link shows the tasks of a project, or,
-- without one, those assigned to its owner. Rotating a link revokes it and
-- makes a new one that replaces it.
CREATE TABLE calendar_links (
    id              TEXT PRIMARY KEY,
    secret_hash     BLOB NOT NULL UNIQUE,
    owner           TEXT NOT NULL,
    project_id      TEXT REFERENCES projects (id),
    name            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    created_by      TEXT NOT NULL REFERENCES tokens (id),
    replaces        TEXT UNIQUE REFERENCES calendar_links (id),
    revoked_at      TEXT,
    last_fetched_at TEXT
);
CREATE INDEX calendar_links_owner ON calendar_links (owner);
