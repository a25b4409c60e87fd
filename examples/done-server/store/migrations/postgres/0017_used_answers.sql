-- The confirmations' used answers: a person's acceptance of a confirmed
-- call may be used once, across every replica on the database (see
-- Store.UseAnswer). A nonce is kept until its answer expires.
CREATE TABLE used_answers (
    nonce      BYTEA PRIMARY KEY,
    expires_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX used_answers_expires ON used_answers (expires_at);
