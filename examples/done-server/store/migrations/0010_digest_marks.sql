-- Every time a reader marks a digest read is kept, and the digest is read
-- up to the last mark: marking it again after new changes adds a mark
-- rather than writing over the time of the one before, so that marking a
-- digest read, which a token that may only add is allowed, only adds.
CREATE TABLE digest_marks (
    reader    TEXT NOT NULL,
    digest_id TEXT NOT NULL,
    read_at   TEXT NOT NULL,
    token_id  TEXT NOT NULL,
    PRIMARY KEY (reader, digest_id, read_at)
);
INSERT INTO digest_marks (reader, digest_id, read_at, token_id) SELECT reader, digest_id, read_at, token_id FROM digest_reads;
DROP TABLE digest_reads;
ALTER TABLE digest_marks RENAME TO digest_reads;
