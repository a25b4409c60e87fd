-- The calls made with an idempotency key (SEP-3182), shared by every
-- process on the database, so that a retry reaching any of them gets the
-- answer of the call that first carried the key instead of running it
-- again (see IdempotencyStore). digest is the SHA-256 that mcpeffect
-- makes of the caller and the key it sent, never the key as sent; owner
-- is the token the record counts against; token is the claim's own, which
-- Complete and Release must hold; written is set by the transaction of
-- each write the call commits, so that a call whose database went away is
-- known to have written or not; done is 0 while the call runs. A record
-- is kept until expires_at, and those long over are swept away.
CREATE TABLE idempotency_records (
    digest      BLOB PRIMARY KEY CHECK (length(digest) = 32),
    owner       TEXT NOT NULL,
    fingerprint BLOB NOT NULL CHECK (length(fingerprint) = 32),
    token       BLOB NOT NULL CHECK (length(token) = 16),
    written     INTEGER NOT NULL DEFAULT 0 CHECK (written IN (0, 1)),
    done        INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
    outcome     BLOB,
    expires_at  TEXT NOT NULL
);
-- The live records of a token, counted at each new key; and every record
-- by its expiry, for the sweep and the count of all.
CREATE INDEX idempotency_records_owner ON idempotency_records (owner, expires_at);
CREATE INDEX idempotency_records_expires ON idempotency_records (expires_at);
