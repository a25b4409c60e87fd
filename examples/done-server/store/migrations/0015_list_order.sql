-- list_tasks and list_my_tasks read a page of tasks in the order of
-- their id, filtered by project, assignee or status. With indexes of the
-- filter alone, SQLite either read every task in id order until the page
-- was full (all of them, for a filter that matches few) or every match
-- and sorted them: with 20,000 tasks, 9 to 24 ms a page. With the id at
-- the end of each index, the matches of a filter come in page order.
-- list_my_tasks leaves done tasks out by default: its own index holds
-- only the others, so that an assignee's done tasks are never read.
DROP INDEX tasks_project;
CREATE INDEX tasks_project ON tasks (project_id, id);
DROP INDEX tasks_assignee;
CREATE INDEX tasks_assignee ON tasks (assignee, id);
CREATE INDEX tasks_assignee_open ON tasks (assignee, id) WHERE status <> 'done';
CREATE INDEX tasks_status ON tasks (status, id);

-- The same for the other lists: a task's comments, subtasks and steps,
-- the pending approvals, and the Trash (newest first).
DROP INDEX comments_task;
CREATE INDEX comments_task ON comments (task_id, id);
DROP INDEX tasks_parent;
CREATE INDEX tasks_parent ON tasks (parent_id, id);
DROP INDEX steps_task;
CREATE INDEX steps_task ON steps (task_id, position, id);
DROP INDEX approvals_status;
CREATE INDEX approvals_status ON approvals (status, id);
CREATE INDEX trash_deleted ON trash (deleted_at, id);
