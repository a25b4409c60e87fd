-- As SQLite's 0020_activity_since.sql: a task's activity since a moment,
-- read from there.
CREATE INDEX activity_task_at ON activity (task_id, at, id);
