package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func digestIDs(t *testing.T, cs *mcp.ClientSession, a args) (ids []string, cursor string) {
	t.Helper()
	page := must[store.DigestPage](t, cs, "list_digests", a)
	for _, d := range page.Digests {
		ids = append(ids, d.ID)
	}
	return ids, page.NextCursor
}

// TestDigest makes digests from a few days of work: what changed, what
// waits for a human, what is blocked, what the caller has read; daily and
// weekly, current and past.
func TestDigest(t *testing.T) {
	e := newEnv(t) // Monday 2 June 2025, 09:00 UTC: ISO week 23
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	builder := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	must[store.Task](t, alice, "create_task", args{"title": "Plan the launch"})
	blocked := must[store.Task](t, alice, "create_task", args{"title": "Sign the contract"})
	must[store.Task](t, alice, "block_task", args{"task_id": blocked.ID, "reason": "waiting for legal"})
	awaiting := must[store.Task](t, builder, "create_task", args{"title": "Write the press release"})
	must[store.Task](t, builder, "close_task", args{"task_id": awaiting.ID})
	failing := must[store.Task](t, alice, "create_task", args{"title": "Translate the site"})
	run := must[store.Run](t, alice, "start_run", args{"task_id": failing.ID, "agent": "builder"})
	must[store.Task](t, builder, "claim_task", args{"task_id": failing.ID})
	must[store.Run](t, builder, "complete_run", args{"run_id": run.ID, "outcome": "failed", "summary": "no glossary"})

	d := must[store.Digest](t, alice, "get_digest", nil)
	wantByAction := map[string]int{"create_task": 4, "block_task": 1, "close_task": 1, "start_run": 1, "claim_task": 1, "complete_run": 1}
	if d.ID != "day-2025-06-02" || !d.Current || d.Changes.Total != 9 || fmt.Sprint(d.Changes.ByAction) != fmt.Sprint(wantByAction) || d.Unread != 9 {
		t.Errorf("get_digest: id %s, current %t, %d changes %v, %d unread", d.ID, d.Current, d.Changes.Total, d.Changes.ByAction, d.Unread)
	}
	if first := d.Changes.Items[0]; first.Action != "complete_run" || first.Actor != "builder" || first.TaskTitle != "Translate the site" {
		t.Errorf("the newest change: %+v", first)
	}
	if a := d.NeedsHuman.Approvals; len(a) != 1 || a[0].TaskID != awaiting.ID || a[0].TaskTitle != "Write the press release" {
		t.Errorf("approvals waiting for a human: %+v", a)
	}
	if f := d.NeedsHuman.FailingRuns; len(f) != 1 || f[0].ID != run.ID {
		t.Errorf("failing runs: %+v", f)
	}
	if b := d.Blocked; len(b) != 1 || b[0].ID != blocked.ID || b[0].Reason != "waiting for legal" {
		t.Errorf("blocked: %+v", b)
	}

	// Reading is per reader, and a change after it is unread again.
	read := must[store.DigestRead](t, alice, "mark_digest_read", args{"digest_id": d.ID})
	if read.Reader != "alice" || read.ReadAt != "2025-06-02T09:00:00.000Z" {
		t.Errorf("mark_digest_read: %+v", read)
	}
	if d := must[store.Digest](t, alice, "get_digest", nil); d.Unread != 0 || d.ReadAt != read.ReadAt {
		t.Errorf("after mark_digest_read: %d unread, read at %q", d.Unread, d.ReadAt)
	}
	if d := must[store.Digest](t, builder, "get_digest", nil); d.Unread != 9 || d.ReadAt != "" {
		t.Errorf("another reader: %d unread, read at %q", d.Unread, d.ReadAt)
	}
	e.clock.Advance(time.Hour)
	must[store.Comment](t, builder, "comment_on_task", args{"task_id": blocked.ID, "body": "Legal replied."})
	if d := must[store.Digest](t, alice, "get_digest", args{"digest_id": "day-2025-06-02"}); d.Unread != 1 || d.Changes.Total != 10 {
		t.Errorf("after a new change: %d unread of %d", d.Unread, d.Changes.Total)
	}
	if again := must[store.DigestRead](t, alice, "mark_digest_read", args{"digest_id": "day-2025-06-02"}); again.ReadAt != "2025-06-02T10:00:00.000Z" {
		t.Errorf("marking read again after a change: %+v", again)
	}

	// Days without changes have no digest, but for the current one.
	e.clock.Advance(24 * time.Hour) // Tuesday
	must[store.Task](t, alice, "create_task", args{"title": "Book the venue"})
	e.clock.Advance(48 * time.Hour) // Thursday
	ids, cursor := digestIDs(t, alice, nil)
	if want := []string{"day-2025-06-05", "day-2025-06-03", "day-2025-06-02"}; !slices.Equal(ids, want) || cursor != "" {
		t.Errorf("list_digests: %v (cursor %q), want %v", ids, cursor, want)
	}
	var paged []string
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		a := args{"limit": 1}
		if cursor != "" {
			a["cursor"] = cursor
		}
		ids, cursor = digestIDs(t, alice, a)
		paged = append(paged, ids...)
		if cursor == "" {
			break
		}
	}
	if want := []string{"day-2025-06-05", "day-2025-06-03", "day-2025-06-02"}; !slices.Equal(paged, want) {
		t.Errorf("list_digests page by page: %v, want %v", paged, want)
	}
	page := must[store.DigestPage](t, alice, "list_digests", nil)
	if got := []int{page.Digests[1].Changes, page.Digests[1].Unread, page.Digests[2].Changes, page.Digests[2].Unread}; !slices.Equal(got, []int{1, 1, 10, 0}) {
		t.Errorf("changes and unread of the past digests: %v, want [1 1 10 0]", got)
	}
	if past := must[store.Digest](t, alice, "get_digest", args{"digest_id": "day-2025-06-02"}); past.Current || past.Changes.Total != 10 || len(past.Blocked) != 1 {
		t.Errorf("a past digest: current %t, %d changes, %d blocked", past.Current, past.Changes.Total, len(past.Blocked))
	}

	if ids, _ := digestIDs(t, alice, args{"period": "weekly"}); !slices.Equal(ids, []string{"week-2025-W23"}) {
		t.Errorf("weekly digests within the first week: %v", ids)
	}
	e.clock.Advance(5 * 24 * time.Hour) // Tuesday of week 24
	if ids, _ := digestIDs(t, alice, args{"period": "weekly"}); !slices.Equal(ids, []string{"week-2025-W24", "week-2025-W23"}) {
		t.Errorf("weekly digests in the second week: %v", ids)
	}
	if w := must[store.Digest](t, alice, "get_digest", args{"digest_id": "week-2025-W23"}); w.Changes.Total != 11 || w.From != "2025-06-02T00:00:00.000Z" || w.To != "2025-06-09T00:00:00.000Z" {
		t.Errorf("the digest of week 23: %d changes, from %s to %s", w.Changes.Total, w.From, w.To)
	}

	for _, c := range []struct{ id, want string }{
		{"day-2025-02-30", "is not a digest"},
		{"week-2025-W53", "is not a digest"}, // 2025 has 52 ISO weeks
		{"week-2025-23", "is not a digest"},
		{"yesterday", "is not a digest"},
		{"day-2030-01-01", "has not begun"},
	} {
		mustFail(t, alice, "get_digest", args{"digest_id": c.id}, c.want)
		mustFail(t, alice, "mark_digest_read", args{"digest_id": c.id}, c.want)
	}
	if w := must[store.Digest](t, alice, "get_digest", args{"digest_id": "week-2020-W53"}); w.From != "2020-12-28T00:00:00.000Z" {
		t.Errorf("week 53 of 2020 begins %s, want 2020-12-28", w.From)
	}
}

// TestDigestTruncates shows that a digest lists at most MaxDigestItems
// changes, newest first, and counts them all.
func TestDigestTruncates(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.NonDestructive))
	var last string
	for i := range store.MaxDigestItems + 1 {
		last = must[store.Task](t, alice, "create_task", args{"title": fmt.Sprintf("task %d", i)}).ID
	}
	d := must[store.Digest](t, alice, "get_digest", args{"period": "weekly"})
	if d.Changes.Total != store.MaxDigestItems+1 || len(d.Changes.Items) != store.MaxDigestItems || !d.Changes.Truncated || d.Changes.Items[0].TaskID != last {
		t.Errorf("%d changes, %d items, truncated %t, newest %s", d.Changes.Total, len(d.Changes.Items), d.Changes.Truncated, d.Changes.Items[0].TaskID)
	}
}
