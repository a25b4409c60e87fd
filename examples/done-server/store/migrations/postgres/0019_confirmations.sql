-- As SQLite's 0019_confirmations.sql: the effect of the call a
-- confirmation waits for, the root of its caller's tree of tokens, the
-- arguments in a table of their own, and the indexes that count a tree's
-- open confirmations and find those long over.
ALTER TABLE web_confirmations ADD COLUMN effect TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE web_confirmations ADD COLUMN root TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE TABLE web_confirmation_arguments (
    id        TEXT COLLATE "C" PRIMARY KEY REFERENCES web_confirmations (id) ON DELETE CASCADE,
    arguments TEXT COLLATE "C" NOT NULL
);
INSERT INTO web_confirmation_arguments (id, arguments) SELECT id, arguments FROM web_confirmations;
ALTER TABLE web_confirmations DROP COLUMN arguments;
CREATE INDEX web_confirmations_open ON web_confirmations (root, expires_at) WHERE used_at IS NULL;
CREATE INDEX web_confirmations_expires ON web_confirmations (expires_at);
