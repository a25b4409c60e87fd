-- Digests are views of the activity log by period (a UTC day, an ISO
-- week), made when they are read. What a digest needs kept is who has read
-- it, and when: the changes after that are unread.
CREATE TABLE digest_reads (
    reader    TEXT NOT NULL,
    digest_id TEXT NOT NULL,
    read_at   TEXT NOT NULL,
    token_id  TEXT NOT NULL,
    PRIMARY KEY (reader, digest_id)
);
CREATE INDEX activity_at ON activity (at);
