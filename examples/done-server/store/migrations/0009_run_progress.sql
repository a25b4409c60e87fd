-- A run's progress is that of the last report its agent made with one, as
-- the run's log (run_events) holds it, and no longer a column that each
-- report overwrote: reporting progress, which a token that may only add
-- is allowed, then only adds. Every report already wrote its progress to
-- the log, so the column holds nothing the log does not.
ALTER TABLE runs DROP COLUMN progress;
