package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// A Period is what a digest covers: a day or a week, in UTC. Weeks are ISO
// weeks, from Monday.
type Period string

// The periods of digests.
const (
	Daily  Period = "daily"
	Weekly Period = "weekly"
)

// Periods lists every Period.
var Periods = []Period{Daily, Weekly}

// MaxDigestItems is the most changes a digest lists; it counts them all.
const MaxDigestItems = 100

// A span is the period of one digest. Its id names it: day-2025-06-02 or
// week-2025-W23.
type span struct {
	id       string
	period   Period
	from, to time.Time
}

// spanAt returns the span of period p that holds t.
func spanAt(p Period, t time.Time) span {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	if p == Weekly {
		monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		year, week := monday.ISOWeek()
		return span{fmt.Sprintf("week-%04d-W%02d", year, week), Weekly, monday, monday.AddDate(0, 0, 7)}
	}
	return span{"day-" + day.Format(time.DateOnly), Daily, day, day.AddDate(0, 0, 1)}
}

// parseDigestID returns the span that id names.
func parseDigestID(id string) (span, error) {
	bad := invalidf("digest_id %s is not a digest: want day-2025-06-02 or week-2025-W23", quote(id))
	var year, week int
	if n, err := fmt.Sscanf(id, "week-%04d-W%02d", &year, &week); err == nil && n == 2 && len(id) == len("week-2025-W23") {
		// 4 January is in week 1, by the ISO definition.
		jan4 := time.Date(year, time.January, 4, 0, 0, 0, 0, time.UTC)
		s := spanAt(Weekly, jan4.AddDate(0, 0, 7*(week-1)))
		if s.id != id {
			return span{}, bad
		}
		return s, nil
	}
	if len(id) == len("day-2025-06-02") && id[:4] == "day-" {
		if day, err := time.Parse(time.DateOnly, id[4:]); err == nil {
			return spanAt(Daily, day), nil
		}
	}
	return span{}, bad
}

func checkPeriod(p Period) (Period, error) {
	switch p {
	case "":
		return Daily, nil
	case Daily, Weekly:
		return p, nil
	}
	return "", invalidf("period %s is not valid: want daily or weekly", quote(string(p)))
}

// A Digest tells what changed in a period, from the activity log, and
// what waits for a person now: approvals to decide, failing runs, blocked
// tasks.
type Digest struct {
	ID     string `json:"id"`
	Period Period `json:"period"`
	From   string `json:"from"`
	To     string `json:"to"`
	// Current is set for the period under way: more changes may come.
	Current bool `json:"current"`
	// ReadAt is when the caller marked the digest read, if it did; Unread
	// counts the changes after that, or all of them.
	ReadAt  string        `json:"read_at,omitempty"`
	Unread  int           `json:"unread"`
	Changes DigestChanges `json:"changes"`
	// AsOf is when NeedsHuman and Blocked were taken: they are the state
	// now, whatever the period, since the log records changes, not what
	// was pending at each moment.
	AsOf       string     `json:"as_of"`
	NeedsHuman NeedsHuman `json:"needs_human"`
	// Blocked are the first MaxShown blocked tasks; MoreBlocked says that
	// there are more (list_tasks with status blocked pages through them).
	Blocked     []BlockedTask `json:"blocked"`
	MoreBlocked bool          `json:"more_blocked,omitempty"`
}

// DigestChanges are the changes of a digest's period.
type DigestChanges struct {
	Total    int            `json:"total"`
	ByAction map[string]int `json:"by_action"`
	// Items are the changes, newest first: at most MaxDigestItems, and
	// Truncated is set when there are more.
	Items     []DigestItem `json:"items"`
	Truncated bool         `json:"truncated,omitempty"`
}

// A DigestItem is one change, with the task it belongs to, if any.
type DigestItem struct {
	Activity
	TaskID    string `json:"task_id,omitempty"`
	TaskTitle string `json:"task_title,omitempty"`
}

// NeedsHuman is what waits for a person.
type NeedsHuman struct {
	// Approvals are the first MaxShown approval requests waiting;
	// MoreApprovals says that list_pending_approvals has more.
	Approvals     []PendingApproval `json:"approvals"`
	MoreApprovals bool              `json:"more_approvals,omitempty"`
	// FailingRuns are at most MaxLimit, the newest.
	FailingRuns []Run `json:"failing_runs"`
}

// A PendingApproval is an approval request waiting for a decision, with
// the title of its task.
type PendingApproval struct {
	Approval
	TaskTitle string `json:"task_title"`
}

// A BlockedTask is a task that is blocked, and why.
type BlockedTask struct {
	TaskRef
	Reason    string `json:"reason"`
	BlockedBy string `json:"blocked_by,omitempty"`
}

// GetDigest returns the digest called id for the caller, or, without id,
// the digest of the current period (daily by default).
func (s *Store) GetDigest(ctx context.Context, by Actor, id string, period Period) (Digest, error) {
	return read(ctx, s, by, func(t *tx) (Digest, error) {
		var sp span
		if id == "" {
			p, err := checkPeriod(period)
			if err != nil {
				return Digest{}, err
			}
			sp = spanAt(p, t.now)
		} else {
			var err error
			if sp, err = parseDigestID(id); err != nil {
				return Digest{}, err
			}
			if period != "" && period != sp.period {
				return Digest{}, invalidf("digest %q is %s, not %s", id, sp.period, period)
			}
		}
		if sp.from.After(t.now) {
			return Digest{}, invalidf("digest %q is of a period that has not begun", sp.id)
		}
		return t.digest(sp)
	})
}

func (t *tx) digest(sp span) (Digest, error) {
	from, to := formatTime(sp.from), formatTime(sp.to)
	d := Digest{
		ID: sp.id, Period: sp.period, From: from, To: to,
		Current: !t.now.Before(sp.from) && t.now.Before(sp.to),
		AsOf:    t.nowText(),
		Changes: DigestChanges{ByAction: map[string]int{}},
	}
	var err error
	if d.ReadAt, d.Unread, err = t.readState(sp); err != nil {
		return d, err
	}
	rows, err := t.query(`SELECT action, count(*) FROM activity WHERE at >= ? AND at < ? GROUP BY action`, from, to)
	if err != nil {
		return d, err
	}
	for rows.Next() {
		var action string
		var n int
		if err := rows.Scan(&action, &n); err != nil {
			rows.Close()
			return d, err
		}
		d.Changes.ByAction[action] = n
		d.Changes.Total += n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return d, err
	}
	d.Changes.Items, err = collect(t, func(row scanner) (DigestItem, error) {
		var it DigestItem
		a, err := scanActivity(scanExtra(row, &it.TaskID, &it.TaskTitle))
		it.Activity = a
		return it, err
	}, `SELECT a.id, a.at, a.actor, a.actor_kind, a.action, a.subject_kind, a.subject_id, a.details,
			COALESCE(a.task_id, ''), COALESCE(t.title, '')
		FROM activity a LEFT JOIN tasks t ON t.id = a.task_id
		WHERE a.at >= ? AND a.at < ? ORDER BY a.id DESC LIMIT +?`, from, to, MaxDigestItems)
	if err != nil {
		return d, err
	}
	d.Changes.Truncated = d.Changes.Total > len(d.Changes.Items)

	d.NeedsHuman.Approvals, d.NeedsHuman.MoreApprovals, err = shown(t, func(row scanner) (PendingApproval, error) {
		var p PendingApproval
		a, err := scanApproval(scanExtra(row, &p.TaskTitle))
		p.Approval = a
		return p, err
	}, `SELECT `+approvalColumns+`, t.title FROM approvals a JOIN tasks t ON t.id = a.task_id
		WHERE a.status = 'pending' AND t.trash_id IS NULL ORDER BY a.id LIMIT +?`)
	if err != nil {
		return d, err
	}
	if d.NeedsHuman.FailingRuns, err = t.failingRuns(); err != nil {
		return d, err
	}
	d.Blocked, d.MoreBlocked, err = shown(t, func(row scanner) (BlockedTask, error) {
		var b BlockedTask
		return b, row.Scan(&b.ID, &b.Title, &b.Status, &b.Reason, &b.BlockedBy)
	}, `SELECT t.id, t.title, t.status, t.blocked_reason, COALESCE(t.blocked_by, '')
		FROM tasks t LEFT JOIN projects p ON p.id = t.project_id
		WHERE t.status = 'blocked' AND t.trash_id IS NULL AND (p.id IS NULL OR p.archived_at IS NULL) ORDER BY t.id LIMIT +?`)
	return d, err
}

// readState returns when the caller last marked the digest of sp read,
// if it did, and how many changes of sp came after.
func (t *tx) readState(sp span) (readAt string, unread int, err error) {
	err = t.queryRow(`SELECT COALESCE(max(read_at), '') FROM digest_reads WHERE reader = ? AND digest_id = ?`, t.by.Name, sp.id).Scan(&readAt)
	if err != nil {
		return "", 0, err
	}
	err = t.queryRow(`SELECT count(*) FROM activity WHERE at >= ? AND at < ? AND at > ?`,
		formatTime(sp.from), formatTime(sp.to), readAt).Scan(&unread)
	return readAt, unread, err
}

// A DigestSummary is a digest in a list: its period and how many changes
// it holds, without them.
type DigestSummary struct {
	ID      string `json:"id"`
	Period  Period `json:"period"`
	From    string `json:"from"`
	To      string `json:"to"`
	Current bool   `json:"current"`
	Changes int    `json:"changes"`
	ReadAt  string `json:"read_at,omitempty"`
	Unread  int    `json:"unread"`
}

// A DigestPage is one page of digests, newest first.
type DigestPage struct {
	Digests    []DigestSummary `json:"digests"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// ListDigests returns the digests of period for the caller, newest first:
// the current one, then each past period that has changes, one page at a
// time; cursor is the NextCursor of the page before.
func (s *Store) ListDigests(ctx context.Context, by Actor, period Period, cursor string, limit int) (DigestPage, error) {
	return read(ctx, s, by, func(t *tx) (DigestPage, error) {
		p, err := checkPeriod(period)
		if err != nil {
			return DigestPage{}, err
		}
		if limit, err = checkLimit(limit); err != nil {
			return DigestPage{}, err
		}
		current := spanAt(p, t.now)
		var spans []span
		before := current.from
		if cursor != "" {
			c, err := parseDigestID(cursor)
			if err != nil || c.period != p {
				return DigestPage{}, invalidf("cursor %s is not one that list_digests gave for %s digests", quote(cursor), p)
			}
			before = c.from
		} else {
			spans = append(spans, current)
		}
		// The period of the last change before the last period listed,
		// until the page is full and one more tells that there is a next
		// page. Each step is one lookup in the index of activity by time.
		for len(spans) <= limit {
			var last sql.NullString
			if err := t.queryRow(`SELECT max(at) FROM activity WHERE at < ?`, formatTime(before)).Scan(&last); err != nil {
				return DigestPage{}, err
			}
			if !last.Valid {
				break
			}
			sp := spanAt(p, parseStored(last.String))
			spans = append(spans, sp)
			before = sp.from
		}
		page := DigestPage{Digests: []DigestSummary{}}
		if len(spans) > limit {
			spans = spans[:limit]
			page.NextCursor = spans[limit-1].id
		}
		for _, sp := range spans {
			sum := DigestSummary{ID: sp.id, Period: sp.period, From: formatTime(sp.from), To: formatTime(sp.to), Current: sp.id == current.id}
			if err := t.queryRow(`SELECT count(*) FROM activity WHERE at >= ? AND at < ?`, sum.From, sum.To).Scan(&sum.Changes); err != nil {
				return page, err
			}
			if sum.ReadAt, sum.Unread, err = t.readState(sp); err != nil {
				return page, err
			}
			page.Digests = append(page.Digests, sum)
		}
		return page, nil
	})
}

// A DigestRead tells that a digest was read, by whom and when.
type DigestRead struct {
	DigestID string `json:"digest_id"`
	Reader   string `json:"reader"`
	ReadAt   string `json:"read_at"`
}

// MarkDigestRead marks the digest called id read by the caller: its
// changes until now are read. Marking it again changes nothing, unless
// changes came in since: it then adds a mark, and the digest is read up to
// the last one. Marks are only added, never written over, so that marking
// a digest read changes no value that exists.
//
// Unlike other writes, it records nothing in the activity log: the mark is
// the record of who read what and when, and an entry would itself be a
// change of the current digest, which could then never be read whole.
func (s *Store) MarkDigestRead(ctx context.Context, by Actor, id string) (DigestRead, error) {
	return write(ctx, s, by, func(t *tx) (DigestRead, error) {
		sp, err := parseDigestID(id)
		if err != nil {
			return DigestRead{}, err
		}
		if sp.from.After(t.now) {
			return DigestRead{}, invalidf("digest %q is of a period that has not begun", id)
		}
		readAt, unread, err := t.readState(sp)
		if err != nil {
			return DigestRead{}, err
		}
		if readAt != "" && unread == 0 {
			return DigestRead{id, by.Name, readAt}, nil
		}
		if by.TokenID == "" {
			return DigestRead{}, fmt.Errorf("store: mark_digest_read without an actor")
		}
		now := t.nowText()
		_, err = t.exec(`INSERT INTO digest_reads (reader, digest_id, read_at, token_id) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, by.Name, id, now, by.TokenID)
		if err != nil {
			return DigestRead{}, err
		}
		return DigestRead{id, by.Name, now}, nil
	})
}
