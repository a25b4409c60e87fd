-- References from tasks to documents outside Done (a file of the local
-- folder, a Drive document, a Slack thread), by ref: the connector's name
-- and the document's id in it, such as local:notes/plan.md. Done keeps the
-- reference only; the document stays where it is.
CREATE TABLE task_context (
    task_id     TEXT NOT NULL REFERENCES tasks (id),
    ref         TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    attached_at TEXT NOT NULL,
    attached_by TEXT NOT NULL,
    PRIMARY KEY (task_id, ref)
);
