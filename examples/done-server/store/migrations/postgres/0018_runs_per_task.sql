-- As SQLite's 0018_runs_per_task.sql: each start_run and retry_run queues
-- a new run, and a task may have several queued, which its agent works one
-- at a time.
DROP INDEX runs_one_active_per_task;
CREATE INDEX runs_active_task ON runs (task_id, queued_at, id) WHERE status IN ('queued', 'running');
