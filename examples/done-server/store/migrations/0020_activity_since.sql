-- The activity of a task since a moment, in the order it happened: what
-- the page of a request shows, the activity since the request, read
-- from there, whatever the task's history before.
CREATE INDEX activity_task_at ON activity (task_id, at, id);
