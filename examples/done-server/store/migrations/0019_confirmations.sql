-- What a confirmation on the page needs beyond 0016: the effect of the
-- call it waits for (as mcpeffect writes it, such as "write|destructive"),
-- which the person who answers must hold a scope for; and the root of the
-- caller's tree of tokens (the command-line token it descends from), by
-- which the confirmations open at once are bounded. Rows made before
-- have neither: '' reads as the worst case, a call only a full token may
-- answer, and as a tree of its own.
ALTER TABLE web_confirmations ADD COLUMN effect TEXT NOT NULL DEFAULT '';
ALTER TABLE web_confirmations ADD COLUMN root TEXT NOT NULL DEFAULT '';
-- The arguments move to a table of their own: a call that waits reads
-- its confirmation's answer every second or so, and SQLite reaches a
-- column stored after a large one by walking that one's overflow pages.
CREATE TABLE web_confirmation_arguments (
    id        TEXT PRIMARY KEY REFERENCES web_confirmations (id) ON DELETE CASCADE,
    arguments TEXT NOT NULL
);
INSERT INTO web_confirmation_arguments (id, arguments) SELECT id, arguments FROM web_confirmations;
ALTER TABLE web_confirmations DROP COLUMN arguments;
-- The confirmations still open (not used, withdrawn or refused) of a
-- tree, counted at each new one; and every confirmation by its deadline,
-- for those long over that a new one clears away.
CREATE INDEX web_confirmations_open ON web_confirmations (root, expires_at) WHERE used_at IS NULL;
CREATE INDEX web_confirmations_expires ON web_confirmations (expires_at);
