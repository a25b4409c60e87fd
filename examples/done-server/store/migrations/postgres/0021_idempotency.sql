-- As SQLite's 0021_idempotency.sql: the calls made with an idempotency
-- key, by the digest of the caller and the key, with the token they count
-- against, the claim's token, the flags of a call that has committed a
-- write and of one that has answered (integers, as every flag of the
-- schema), its answer and its expiry.
CREATE TABLE idempotency_records (
    digest      BYTEA PRIMARY KEY CHECK (octet_length(digest) = 32),
    owner       TEXT COLLATE "C" NOT NULL,
    fingerprint BYTEA NOT NULL CHECK (octet_length(fingerprint) = 32),
    token       BYTEA NOT NULL CHECK (octet_length(token) = 16),
    written     INTEGER NOT NULL DEFAULT 0 CHECK (written IN (0, 1)),
    done        INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
    outcome     BYTEA,
    expires_at  TEXT COLLATE "C" NOT NULL
);
CREATE INDEX idempotency_records_owner ON idempotency_records (owner, expires_at);
CREATE INDEX idempotency_records_expires ON idempotency_records (expires_at);
