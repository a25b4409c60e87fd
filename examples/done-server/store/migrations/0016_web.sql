-- The web page for people (/app): the one-time links that sign a person
-- in, the sessions those links open, and the calls waiting for a person's
-- yes through the page (serve -confirm url). They live in the database,
-- not in one process's memory, so that any process serving the same data
-- serves any page. Secrets are kept as their SHA-256, as for tokens; ids
-- and times are as everywhere else (UUIDv7 text, timeFormat text).

-- A sign-in link signs in as the person of a human token, once, before
-- it expires.
CREATE TABLE web_signin_links (
    id          TEXT PRIMARY KEY,
    secret_hash BLOB NOT NULL UNIQUE,
    token_id    TEXT NOT NULL REFERENCES tokens (id),
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);

-- A session is the cookie of a signed-in person. It ends when it expires,
-- when the person signs out, or when its token is revoked or expires.
CREATE TABLE web_sessions (
    id          TEXT PRIMARY KEY,
    secret_hash BLOB NOT NULL UNIQUE,
    token_id    TEXT NOT NULL REFERENCES tokens (id),
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    ended_at    TEXT
);
CREATE INDEX web_sessions_token ON web_sessions (token_id);

-- A confirmation is one tool call that waits for a person's answer on the
-- page: bound to its caller's token, its tool and its arguments (binding
-- is their SHA-256), answered once before expires_at by the person named
-- in person ('' for any person), and used once by the call.
CREATE TABLE web_confirmations (
    id          TEXT PRIMARY KEY,
    token_id    TEXT NOT NULL REFERENCES tokens (id),
    person      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    binding     BLOB NOT NULL,
    question    TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    answer      TEXT CHECK (answer IN ('accepted', 'declined')),
    answered_by TEXT REFERENCES tokens (id),
    answered_at TEXT,
    used_at     TEXT,
    CHECK ((answer IS NULL) = (answered_at IS NULL))
);
CREATE INDEX web_confirmations_person ON web_confirmations (person, expires_at);
