-- Each start_run and retry_run queues a new run, as the seed has it of
-- everything that adds a row: a task may have several runs queued, and
-- its agent works them one at a time (runs_one_running_per_agent stays).
-- The index that allowed one run under way per task goes; an index of the
-- runs under way of a task keeps finding them without a scan.
DROP INDEX runs_one_active_per_task;
CREATE INDEX runs_active_task ON runs (task_id, queued_at, id) WHERE status IN ('queued', 'running');
