package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"strings"
	"time"
)

// ScheduleTask plans a task: start and end are both dates (2025-06-30; the
// end day included), for whole days, or both RFC 3339 times. end may be
// left out: the task then lasts its start day, or an hour. With start
// left out too, the task is no longer scheduled. Setting the schedule it
// has changes nothing.
func (s *Store) ScheduleTask(ctx context.Context, by Actor, taskID, start, end string) (Task, error) {
	return write(ctx, s, by, func(t *tx) (Task, error) {
		r, err := t.writableTask("task_id", taskID)
		if err != nil {
			return Task{}, err
		}
		start, end, err := schedule(start, end)
		if err != nil {
			return Task{}, err
		}
		d := diff{}
		d.add("scheduled_start", r.ScheduledStart, start)
		d.add("scheduled_end", r.ScheduledEnd, end)
		if len(d) == 0 {
			return r.Task, nil
		}
		if _, err := t.exec(`UPDATE tasks SET scheduled_start = ?, scheduled_end = ?, updated_at = ? WHERE id = ?`, start, end, t.nowText(), taskID); err != nil {
			return Task{}, err
		}
		if err := t.record("schedule_task", "task", taskID, taskID, d.details()); err != nil {
			return Task{}, err
		}
		r, err = t.taskRow(taskID)
		return r.Task, err
	})
}

// MaxScheduleDays is the longest a task may be scheduled for.
const MaxScheduleDays = 366

// schedule checks the arguments of schedule_task and returns them as they
// are stored: dates as they are, times in UTC in timeFormat.
func schedule(start, end string) (string, string, error) {
	if start == "" {
		if end != "" {
			return "", "", invalidf("end needs a start")
		}
		return "", "", nil
	}
	from, err := parseInstant("start", start)
	if err != nil {
		return "", "", err
	}
	allDay := len(start) == len(time.DateOnly)
	to := from
	switch {
	case end != "":
		if to, err = parseInstant("end", end); err != nil {
			return "", "", err
		}
		if (len(end) == len(time.DateOnly)) != allDay {
			return "", "", invalidf("start and end must both be dates or both be times")
		}
	case !allDay:
		to = from.Add(time.Hour)
	}
	switch {
	case allDay && to.Before(from), !allDay && !to.After(from):
		return "", "", invalidf("end %s is before start %s", quote(end), quote(start))
	case to.Sub(from) > MaxScheduleDays*24*time.Hour:
		return "", "", invalidf("a task can be scheduled for at most %d days", MaxScheduleDays)
	}
	if allDay {
		return from.Format(time.DateOnly), to.Format(time.DateOnly), nil
	}
	return formatTime(from), formatTime(to), nil
}

// An AgendaEntry is a task on a day of an agenda: due that day, or
// scheduled over it.
type AgendaEntry struct {
	// Kind is due or scheduled.
	Kind string `json:"kind"`
	// Date is the day of a due date, or the first day of a schedule; Start
	// and End are the schedule, dates or times.
	Date  string `json:"date"`
	Start string `json:"start,omitempty"`
	End   string `json:"end,omitempty"`
	Task  Task   `json:"task"`
}

// An Agenda is what is due or scheduled between two dates, both included,
// in time order, one page at a time: NextCursor, when not empty, is the
// cursor of the next page.
type Agenda struct {
	From       string        `json:"from"`
	To         string        `json:"to"`
	Entries    []AgendaEntry `json:"entries"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// MaxAgendaDays is the longest window of an agenda.
const MaxAgendaDays = 92

// AgendaFilter selects the tasks of an agenda, as get_agenda takes it.
type AgendaFilter struct {
	// From and To are dates; From defaults to today, To to a week later.
	From      string `json:"from,omitempty" jsonschema:"the first day, 2025-06-30; today by default"`
	To        string `json:"to,omitempty" jsonschema:"the last day, included; a week after from by default; at most 92 days after it"`
	ProjectID string `json:"project_id,omitempty" jsonschema:"only tasks of this project"`
	// Mine keeps the tasks assigned to the caller.
	Mine bool `json:"mine,omitempty" jsonschema:"only tasks assigned to the caller"`
	Page
}

// Agenda returns the entries of the live tasks due or scheduled between
// f.From and f.To, leaving out those of archived projects, one page at a
// time: by day, whole days before times of day, then by time; a task
// due and scheduled on the same day has its due entry first.
func (s *Store) Agenda(ctx context.Context, by Actor, f AgendaFilter) (Agenda, error) {
	return read(ctx, s, by, func(t *tx) (Agenda, error) {
		now := t.now.UTC()
		from := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
		if f.From != "" {
			d, err := time.Parse(time.DateOnly, f.From)
			if err != nil {
				return Agenda{}, invalidf("from %s is not a date in the form 2025-12-31", quote(f.From))
			}
			from = d
		}
		to := from.AddDate(0, 0, 6)
		if f.To != "" {
			d, err := time.Parse(time.DateOnly, f.To)
			if err != nil {
				return Agenda{}, invalidf("to %s is not a date in the form 2025-12-31", quote(f.To))
			}
			to = d
		}
		if to.Before(from) || to.Sub(from) >= MaxAgendaDays*24*time.Hour {
			return Agenda{}, invalidf("the window from %s to %s must be 1 to %d days", from.Format(time.DateOnly), to.Format(time.DateOnly), MaxAgendaDays)
		}
		if f.ProjectID != "" {
			if _, err := t.liveProject("project_id", f.ProjectID); err != nil {
				return Agenda{}, err
			}
		}
		mine := ""
		if f.Mine {
			mine = by.Name
		}
		after, err := afterKey("get_agenda", f.Cursor, "", "", "")
		if err != nil {
			return Agenda{}, err
		}
		first, last := from.Format(time.DateOnly), to.Format(time.DateOnly)
		// An entry's key orders the agenda: the day of a due date, the
		// start of a schedule. Text order is time order for both forms of
		// a schedule, a date being a prefix of the times of its day. A
		// schedule of days includes its last day; a schedule of times
		// excludes its end.
		const live = `t.trash_id IS NULL AND (p.id IS NULL OR p.archived_at IS NULL)
			AND (?5 = '' OR t.project_id = ?5) AND (?6 = '' OR t.assignee = ?6)`
		const due = `SELECT ` + taskColumns + `, 'due' AS kind, t.due AS key, t.id AS task_id
				FROM tasks t LEFT JOIN projects p ON p.id = t.project_id
				WHERE ` + live + ` AND t.due >= ?1 AND t.due <= ?2`
		const scheduled = `SELECT ` + taskColumns + `, 'scheduled', t.scheduled_start, t.id
				FROM tasks t LEFT JOIN projects p ON p.id = t.project_id
				WHERE ` + live + ` AND t.scheduled_start > '' AND t.scheduled_start < ?3
				AND (length(t.scheduled_start) = 10 AND t.scheduled_end >= ?1 OR length(t.scheduled_start) > 10 AND t.scheduled_end > ?4)
				AND NOT (t.scheduled_start = ?7 AND t.id = ?8 AND ?9 = 'scheduled')`
		// SQLite merges the two parts, each read in order from its index,
		// and stops at the page's end. PostgreSQL does so only when each
		// part is ordered and limited by itself, and starts an index scan
		// at a row value's bound only when it is written as columns: with
		// (t.due, t.id) > ('', '') it reads every task without a schedule,
		// and without the inner limits every task due in the window.
		query := t.pick(due+` AND (t.due, t.id) > (?7, ?8)
			UNION ALL
			`+scheduled+` AND (t.scheduled_start, t.id) >= (?7, ?8)
			ORDER BY key, task_id, kind LIMIT +?10`,
			`SELECT * FROM (`+due+` AND t.due >= ?7 AND (t.due > ?7 OR t.id > ?8)
				ORDER BY t.due, t.id LIMIT +?10) AS due
			UNION ALL
			SELECT * FROM (`+scheduled+` AND t.scheduled_start >= ?7 AND (t.scheduled_start > ?7 OR t.id >= ?8)
				ORDER BY t.scheduled_start, t.id LIMIT +?10) AS scheduled
			ORDER BY key, task_id, kind LIMIT +?10`)
		page, err := pageOf(t, f.Page, func(row scanner) (AgendaEntry, error) {
			var e AgendaEntry
			var key, id string
			task, err := scanTask(scanExtra(row, &e.Kind, &key, &id))
			e.Task, e.Date = task, key[:len(time.DateOnly)]
			if e.Kind == "scheduled" {
				e.Start, e.End = task.ScheduledStart, task.ScheduledEnd
			}
			return e, err
		}, func(e AgendaEntry) string { return keyCursor(entryKey(e), e.Task.ID, e.Kind) },
			query,
			first, last, to.AddDate(0, 0, 1).Format(time.DateOnly), formatTime(from), f.ProjectID, mine, after[0], after[1], after[2])
		if err != nil {
			return Agenda{}, err
		}
		return Agenda{From: first, To: last, Entries: page.Items, NextCursor: page.NextCursor}, nil
	})
}

// entryKey orders agenda entries: by day, whole days before times of day,
// then by time.
func entryKey(e AgendaEntry) string {
	if e.Kind == "due" {
		return e.Date
	}
	return e.Start
}

// ScheduledSpan returns the schedule of task as instants, its end
// excluded, and false if the task is not scheduled. A schedule of whole
// days, allDay, ends at midnight after its last day.
func ScheduledSpan(task Task) (start, end time.Time, allDay, ok bool) {
	if task.ScheduledStart == "" {
		return start, end, false, false
	}
	if len(task.ScheduledStart) == len(time.DateOnly) {
		start, _ = time.Parse(time.DateOnly, task.ScheduledStart)
		end, _ = time.Parse(time.DateOnly, task.ScheduledEnd)
		return start, end.AddDate(0, 0, 1), true, true
	}
	return parseStored(task.ScheduledStart), parseStored(task.ScheduledEnd), false, true
}

// A CalendarLink is a secret feed URL of tasks, without its secret, which
// Done does not keep.
type CalendarLink struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Owner is whose link it is: who may list, rotate and revoke it.
	Owner string `json:"owner"`
	// ProjectID is the project whose tasks the feed shows; without one,
	// the feed shows the tasks assigned to Owner.
	ProjectID string `json:"project_id,omitempty"`
	CreatedAt string `json:"created_at"`
	// CreatedByToken is the token that made the link: the link answers only
	// while that token is live, and revoking the token revokes the link.
	CreatedByToken string `json:"created_by_token"`
	// Replaces is the link this one was rotated from; ReplacedBy the one
	// it was rotated into.
	Replaces      string `json:"replaces,omitempty"`
	ReplacedBy    string `json:"replaced_by,omitempty"`
	RevokedAt     string `json:"revoked_at,omitempty"`
	LastFetchedAt string `json:"last_fetched_at,omitempty"`
	// Live is true while the feed answers: the link is not revoked, and the
	// token that made it is live.
	Live bool `json:"live"`
}

// CalendarSecretPrefix begins the secret of every calendar link, so that
// a leaked one is easy to recognise.
const CalendarSecretPrefix = "donecal_"

const linkColumns = `l.id, l.name, l.owner, COALESCE(l.project_id, ''), l.created_at, l.created_by, COALESCE(l.replaces, ''),
	COALESCE(n.id, ''), COALESCE(l.revoked_at, ''), COALESCE(l.last_fetched_at, '')`

const linkFrom = ` FROM calendar_links l LEFT JOIN calendar_links n ON n.replaces = l.id`

func scanLink(row scanner) (CalendarLink, error) {
	var l CalendarLink
	return l, row.Scan(&l.ID, &l.Name, &l.Owner, &l.ProjectID, &l.CreatedAt, &l.CreatedByToken, &l.Replaces, &l.ReplacedBy, &l.RevokedAt, &l.LastFetchedAt)
}

// live sets l.Live.
func (t *tx) live(l *CalendarLink) error {
	if l.RevokedAt != "" {
		l.Live = false
		return nil
	}
	var err error
	l.Live, err = t.tokenLive(l.CreatedByToken)
	return err
}

// overseenLinks selects the calendar links a caller oversees: its own and,
// for a person, those made by an agent's token, which grant access to
// Done's data without a person behind them (see overseenTokens).
const overseenLinks = `(l.owner = ?1 OR (?2 = 'human' AND EXISTS (SELECT 1 FROM tokens o WHERE o.id = l.created_by AND o.kind = 'agent')))`

// link loads a calendar link that the caller oversees, or, if own, that
// is the caller's own. Any other is reported as not existing: the caller
// learns nothing of it.
func (t *tx) link(id string, own bool) (CalendarLink, error) {
	if err := checkID("link_id", id); err != nil {
		return CalendarLink{}, err
	}
	where := overseenLinks
	if own {
		where = `l.owner = ?1`
	}
	l, err := scanLink(t.queryRow(`SELECT `+linkColumns+linkFrom+` WHERE l.id = ?3 AND `+where, t.by.Name, string(t.by.Kind), id))
	if errors.Is(err, sql.ErrNoRows) {
		return CalendarLink{}, notFoundf("calendar link %q does not exist", id)
	}
	if err != nil {
		return CalendarLink{}, err
	}
	return l, t.live(&l)
}

// ownLink loads a calendar link of the caller's own.
func (t *tx) ownLink(id string) (CalendarLink, error) {
	return t.link(id, true)
}

// insertLink makes a link with a new secret, and returns them.
func (t *tx) insertLink(name, projectID, replaces string) (CalendarLink, string, error) {
	raw := make([]byte, secretBytes)
	rand.Read(raw) // never fails; see crypto/rand.Read
	secret := CalendarSecretPrefix + base64.RawURLEncoding.EncodeToString(raw)
	id := newID()
	_, err := t.exec(`INSERT INTO calendar_links (id, secret_hash, owner, project_id, name, created_at, created_by, replaces)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, hashSecret(secret), t.by.Name, nullable(projectID), name, t.nowText(), t.by.TokenID, nullable(replaces))
	if err != nil {
		return CalendarLink{}, "", err
	}
	l, err := t.ownLink(id)
	return l, secret, err
}

// CreateCalendarLink makes a secret feed of the tasks of a project, or,
// without projectID, of the tasks assigned to the caller. It returns the
// secret this once: only its hash is kept.
func (s *Store) CreateCalendarLink(ctx context.Context, by Actor, projectID, name string) (CalendarLink, string, error) {
	type made struct {
		link   CalendarLink
		secret string
	}
	m, err := write(ctx, s, by, func(t *tx) (made, error) {
		if projectID != "" {
			p, err := t.liveProject("project_id", projectID)
			if err != nil {
				return made{}, err
			}
			if name == "" {
				name = p.Name
			}
		}
		if name == "" {
			name = "Tasks of " + by.Name
		}
		if err := checkName("name", name); err != nil {
			return made{}, err
		}
		if err := t.checkLinkRoom(); err != nil {
			return made{}, err
		}
		l, secret, err := t.insertLink(name, projectID, "")
		if err != nil {
			return made{}, err
		}
		return made{l, secret}, t.record("create_calendar_link", "calendar_link", l.ID, "", map[string]any{"name": name, "project_id": projectID})
	})
	return m.link, m.secret, err
}

// MaxLiveCalendarLinks is the most live calendar links one person or
// agent may have: a feed for each calendar app and each project followed
// is a handful; past 20, links are being made and forgotten, each one a
// secret that grants a read of Done's data. Rotating a link replaces it,
// and does not count twice. With [MaxLiveTokens], it bounds the links of
// a tree of tokens too, since links belong to the names tokens are for.
const MaxLiveCalendarLinks = 20

// checkLinkRoom refuses a new calendar link if the caller has as many
// live ones as it may. A link is live while it is not revoked and the
// token that made it is neither revoked nor expired; revoking a token
// revokes its links, and a minted token expires with its parent, so the
// token's own row says enough.
func (t *tx) checkLinkRoom() error {
	var n int
	err := t.queryRow(`SELECT count(*) FROM calendar_links l JOIN tokens k ON k.id = l.created_by
		WHERE l.owner = ?1 AND l.revoked_at IS NULL AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?2)`,
		t.by.Name, t.nowText()).Scan(&n)
	if err != nil {
		return err
	}
	if n >= MaxLiveCalendarLinks {
		return conflictf("you already have %d live calendar links, the most one person or agent may have: "+
			"revoke those no longer in use (list_calendar_links, then revoke_calendar_link), then create one again", n)
	}
	return nil
}

// RotateCalendarLink revokes a live link of the caller and makes a new
// one in its place, with the same name and tasks and a new secret. Each
// call makes a new link: rotating the link that replaced this one is how
// to rotate again.
func (s *Store) RotateCalendarLink(ctx context.Context, by Actor, id string) (CalendarLink, string, error) {
	type made struct {
		link   CalendarLink
		secret string
	}
	m, err := write(ctx, s, by, func(t *tx) (made, error) {
		old, err := t.ownLink(id)
		if err != nil {
			return made{}, err
		}
		switch {
		case old.ReplacedBy != "":
			return made{}, conflictf("calendar link %q was already rotated into %q: rotate that one", id, old.ReplacedBy)
		case old.RevokedAt != "":
			return made{}, conflictf("calendar link %q was revoked for good at %s: create_calendar_link makes a new one", id, old.RevokedAt)
		}
		if _, err := t.exec(`UPDATE calendar_links SET revoked_at = ? WHERE id = ?`, t.nowText(), id); err != nil {
			return made{}, err
		}
		l, secret, err := t.insertLink(old.Name, old.ProjectID, id)
		if err != nil {
			return made{}, err
		}
		return made{l, secret}, t.record("rotate_calendar_link", "calendar_link", l.ID, "", map[string]any{"replaces": id})
	})
	return m.link, m.secret, err
}

// RevokeCalendarLink ends for good a link that the caller oversees: its
// own, or, for a person, one an agent's token made. Its URL answers
// nothing from now on. Revoking a revoked link changes nothing.
func (s *Store) RevokeCalendarLink(ctx context.Context, by Actor, id string) (CalendarLink, error) {
	return write(ctx, s, by, func(t *tx) (CalendarLink, error) {
		l, err := t.link(id, false)
		if err != nil || l.RevokedAt != "" {
			return l, err
		}
		if _, err := t.exec(`UPDATE calendar_links SET revoked_at = ? WHERE id = ?`, t.nowText(), id); err != nil {
			return CalendarLink{}, err
		}
		if err := t.record("revoke_calendar_link", "calendar_link", id, "", map[string]any{"name": l.Name, "owner": l.Owner}); err != nil {
			return CalendarLink{}, err
		}
		return t.link(id, false)
	})
}

// ListCalendarLinks returns the calendar links the caller oversees, live
// or not, oldest first, one page at a time: its own and, for a person,
// those made by an agent's token. Their secrets are not kept, so they are
// never shown.
func (s *Store) ListCalendarLinks(ctx context.Context, by Actor, p Page) (List[CalendarLink], error) {
	return read(ctx, s, by, func(t *tx) (List[CalendarLink], error) {
		if err := checkOptionalID("cursor", p.Cursor); err != nil {
			return List[CalendarLink]{}, err
		}
		links, err := pageOf(t, p, scanLink, func(l CalendarLink) string { return l.ID }, `SELECT `+linkColumns+linkFrom+`
			WHERE `+overseenLinks+` AND l.id > ?3 ORDER BY l.id LIMIT +?4`, by.Name, string(by.Kind), p.Cursor)
		if err != nil {
			return List[CalendarLink]{}, err
		}
		for i := range links.Items {
			if err := t.live(&links.Items[i]); err != nil {
				return List[CalendarLink]{}, err
			}
		}
		return links, nil
	})
}

// ErrNoFeed is the error of [Store.Feed] for a secret that is unknown,
// revoked or rotated, or whose link's origin token is no longer live. It
// does not say which.
var ErrNoFeed = errors.New("no such calendar feed")

// A Feed is what a calendar link shows: the tasks with a due date or a
// schedule.
type Feed struct {
	Link CalendarLink
	// Projects names the projects of the tasks, by id.
	Projects map[string]string
	Tasks    []Task
}

// MaxFeedTasks is the most tasks a feed shows: those with the latest
// dates.
const MaxFeedTasks = 1000

// Feed returns the feed of the live calendar link whose secret is secret,
// or [ErrNoFeed]. A link is live until it is revoked or rotated, and while
// the token that made it is live: a link never outlives its origin. It
// only reads: [Store.NoteFetch] records the fetch.
func (s *Store) Feed(ctx context.Context, secret string) (Feed, error) {
	if !strings.HasPrefix(secret, CalendarSecretPrefix) {
		return Feed{}, ErrNoFeed
	}
	return read(ctx, s, Actor{}, func(t *tx) (Feed, error) {
		l, err := scanLink(t.queryRow(`SELECT `+linkColumns+linkFrom+` WHERE l.secret_hash = ?`, hashSecret(secret)))
		if errors.Is(err, sql.ErrNoRows) || err == nil && l.RevokedAt != "" {
			return Feed{}, ErrNoFeed
		}
		if err != nil {
			return Feed{}, err
		}
		if err := t.live(&l); err != nil || !l.Live {
			if err == nil {
				err = ErrNoFeed
			}
			return Feed{}, err
		}
		f := Feed{Link: l, Projects: map[string]string{}}
		where, arg := "t.project_id = ?", l.ProjectID
		if l.ProjectID == "" {
			where, arg = "t.assignee = ?", l.Owner
		}
		f.Tasks, err = collect(t, scanTask, `SELECT `+taskColumns+` FROM tasks t LEFT JOIN projects p ON p.id = t.project_id
			WHERE `+where+` AND t.trash_id IS NULL AND p.trash_id IS NULL AND (t.due <> '' OR t.scheduled_start <> '')
			ORDER BY CASE WHEN t.due > t.scheduled_start THEN t.due ELSE t.scheduled_start END DESC, t.id LIMIT +?`, arg, MaxFeedTasks)
		if err != nil {
			return Feed{}, err
		}
		rows, err := t.query(`SELECT DISTINCT p.id, p.name FROM tasks t JOIN projects p ON p.id = t.project_id
			WHERE `+where+` AND t.trash_id IS NULL`, arg)
		if err != nil {
			return Feed{}, err
		}
		defer rows.Close()
		for rows.Next() {
			var id, name string
			if err := rows.Scan(&id, &name); err != nil {
				return Feed{}, err
			}
			f.Projects[id] = name
		}
		return f, rows.Err()
	})
}

// NoteFetch records that the feed of the calendar link l, as
// [Store.Feed] returned it, was fetched now, to the minute, as tokens
// record their use (see [Store.NoteUse]), and returns l with its
// LastFetchedAt. It writes, in a transaction of its own, only when the
// minute has changed, so that a feed polled often does not write each
// time.
func (s *Store) NoteFetch(ctx context.Context, l CalendarLink) (CalendarLink, error) {
	fetched := formatTime(s.now().Truncate(lastUseGranularity))
	if l.LastFetchedAt >= fetched {
		return l, nil
	}
	_, err := write(ctx, s, Actor{}, func(t *tx) (struct{}, error) {
		_, err := t.exec(`UPDATE calendar_links SET last_fetched_at = ? WHERE id = ? AND (last_fetched_at IS NULL OR last_fetched_at < ?)`,
			fetched, l.ID, fetched)
		return struct{}{}, err
	})
	if err != nil {
		return CalendarLink{}, err
	}
	l.LastFetchedAt = fetched
	return l, nil
}
