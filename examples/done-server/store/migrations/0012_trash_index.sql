-- The index of tasks by trash_id served restores (the rows behind one
-- Trash entry), and misled SQLite's planner: for "trash_id IS NULL",
-- true of nearly every task, it chose that index as if it were selective,
-- read every live task and sorted them, so that a page of list_tasks, a
-- search or an agenda cost the whole table. An index of the trashed rows
-- alone serves restores, and cannot be chosen for live ones.
DROP INDEX tasks_trash;
CREATE INDEX tasks_trash ON tasks (trash_id) WHERE trash_id IS NOT NULL;
