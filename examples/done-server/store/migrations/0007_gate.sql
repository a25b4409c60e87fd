-- Who made a task or a project auto-close. Only a person may decide that
-- a task skips the approval gate, so an auto-close task or project names
-- the person who made it so: directly, or, for a task, through the default
-- of its project or parent task, which a person set. The database itself
-- refuses an auto-close row that names no one.
--
-- Before this migration agents could make projects and tasks auto-close
-- (the hole this closes), and nothing recorded who did. The activity log
-- tells it soundly in two cases, which keep their setting:
--   - a project: whoever created it or last changed its auto_close, if a
--     person (create_project takes auto_close as an argument, never from
--     a default);
--   - a task: the person who last changed its auto_close with
--     update_task, or else the person who created it outside any project
--     and parent task, where auto_close could only be their argument.
-- Any other auto-close setting cannot be traced to a person and is
-- turned off: closing those tasks asks for a human's approval until a
-- person sets auto_close again.
CREATE TEMP TABLE auto_close_by_person (kind TEXT NOT NULL, id TEXT NOT NULL, person TEXT NOT NULL);

INSERT INTO auto_close_by_person
SELECT 'project', p.id, a.actor FROM projects p
JOIN activity a ON a.id = (
    SELECT max(x.id) FROM activity x WHERE x.subject_kind = 'project' AND x.subject_id = p.id
    AND (x.action = 'create_project' OR (x.action = 'update_project' AND json_extract(x.details, '$.auto_close') IS NOT NULL)))
WHERE p.auto_close = 1 AND a.actor_kind = 'human';

INSERT INTO auto_close_by_person
SELECT 'task', t.id, a.actor FROM tasks t
JOIN activity a ON a.id = (
    SELECT max(x.id) FROM activity x WHERE x.subject_kind = 'task' AND x.subject_id = t.id
    AND x.action = 'update_task' AND json_extract(x.details, '$.auto_close') IS NOT NULL)
WHERE t.auto_close = 1 AND a.actor_kind = 'human';

INSERT INTO auto_close_by_person
SELECT 'task', t.id, a.actor FROM tasks t
JOIN activity a ON a.subject_kind = 'task' AND a.subject_id = t.id AND a.action = 'create_task'
WHERE t.auto_close = 1 AND t.project_id IS NULL AND t.parent_id IS NULL AND a.actor_kind = 'human'
AND NOT EXISTS (SELECT 1 FROM activity x WHERE x.subject_kind = 'task' AND x.subject_id = t.id
    AND x.action = 'update_task' AND json_extract(x.details, '$.auto_close') IS NOT NULL);

-- The new columns' CHECK holds for the rows already there, so the
-- settings are lifted first and put back, with their person, after.
UPDATE projects SET auto_close = 0 WHERE auto_close = 1;
UPDATE tasks SET auto_close = 0 WHERE auto_close = 1;
ALTER TABLE projects ADD COLUMN auto_close_by TEXT NOT NULL DEFAULT '' CHECK (auto_close = 0 OR auto_close_by <> '');
ALTER TABLE tasks ADD COLUMN auto_close_by TEXT NOT NULL DEFAULT '' CHECK (auto_close = 0 OR auto_close_by <> '');
UPDATE projects SET auto_close = 1,
    auto_close_by = (SELECT person FROM auto_close_by_person WHERE kind = 'project' AND id = projects.id)
WHERE id IN (SELECT id FROM auto_close_by_person WHERE kind = 'project');
UPDATE tasks SET auto_close = 1,
    auto_close_by = (SELECT person FROM auto_close_by_person WHERE kind = 'task' AND id = tasks.id)
WHERE id IN (SELECT id FROM auto_close_by_person WHERE kind = 'task');

DROP TABLE auto_close_by_person;
