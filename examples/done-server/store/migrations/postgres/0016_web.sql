-- The web page's tables on PostgreSQL, as SQLite's 0016_web.sql makes
-- them there, with the types of 0015_schema.sql: BYTEA for BLOB, and text
-- that compares byte by byte as in SQLite.

-- A sign-in link signs in as the person of a human token, once, before
-- it expires.
CREATE TABLE web_signin_links (
    id          TEXT COLLATE "C" PRIMARY KEY,
    secret_hash BYTEA NOT NULL UNIQUE,
    token_id    TEXT COLLATE "C" NOT NULL REFERENCES tokens (id),
    created_at  TEXT COLLATE "C" NOT NULL,
    expires_at  TEXT COLLATE "C" NOT NULL,
    used_at     TEXT COLLATE "C"
);

-- A session is the cookie of a signed-in person. It ends when it expires,
-- when the person signs out, or when its token is revoked or expires.
CREATE TABLE web_sessions (
    id          TEXT COLLATE "C" PRIMARY KEY,
    secret_hash BYTEA NOT NULL UNIQUE,
    token_id    TEXT COLLATE "C" NOT NULL REFERENCES tokens (id),
    created_at  TEXT COLLATE "C" NOT NULL,
    expires_at  TEXT COLLATE "C" NOT NULL,
    ended_at    TEXT COLLATE "C"
);
CREATE INDEX web_sessions_token ON web_sessions (token_id);

-- A confirmation is one tool call that waits for a person's answer on the
-- page: bound to its caller's token, its tool and its arguments (binding
-- is their SHA-256), answered once before expires_at by the person named
-- in person ('' for any person), and used once by the call.
CREATE TABLE web_confirmations (
    id          TEXT COLLATE "C" PRIMARY KEY,
    token_id    TEXT COLLATE "C" NOT NULL REFERENCES tokens (id),
    person      TEXT COLLATE "C" NOT NULL,
    tool        TEXT COLLATE "C" NOT NULL,
    binding     BYTEA NOT NULL,
    question    TEXT COLLATE "C" NOT NULL,
    arguments   TEXT COLLATE "C" NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL,
    expires_at  TEXT COLLATE "C" NOT NULL,
    answer      TEXT COLLATE "C" CHECK (answer IN ('accepted', 'declined')),
    answered_by TEXT COLLATE "C" REFERENCES tokens (id),
    answered_at TEXT COLLATE "C",
    used_at     TEXT COLLATE "C",
    CHECK ((answer IS NULL) = (answered_at IS NULL))
);
CREATE INDEX web_confirmations_person ON web_confirmations (person, expires_at);
