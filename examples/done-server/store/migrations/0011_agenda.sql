-- get_agenda and the calendar feeds select tasks by their due date and
-- by the start of their schedule: without these, every agenda read the
-- whole table.
CREATE INDEX tasks_due ON tasks (due);
CREATE INDEX tasks_scheduled ON tasks (scheduled_start);
