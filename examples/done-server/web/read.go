package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"
	_ "time/tzdata" // the zones a person may choose, wherever Done runs

	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// What the page does so that a person reads it: times where the person
// is, activity in words, and a notice after each action.

// The store writes times as fixed-width UTC stamps, such as
// 2026-12-01T21:40:21.816Z; the page shows them as people read them, in
// the person's time zone, 1 Dec 2026, 21:40, the stamp itself in a
// <time> element's datetime and on hover.
const (
	stampLayout = "2006-01-02T15:04:05.000Z"
	shownLayout = "2 Jan 2006, 15:04"
)

// zoneCookie holds the time zone a person chose on the page, for this
// browser: where the person is, which a page without script cannot ask
// the browser. Without it, times are the server's, which for Done on the
// person's own machine is where they are.
const zoneCookie = "done_zone"

// A stamp is one time as the page shows it.
type stamp struct {
	// Stamp is the time as the store wrote it, and Text as the person
	// reads it; Text is Stamp when it is not a time.
	Stamp, Text string
}

// at returns the time the store wrote as s, shown in zone.
func at(zone *time.Location, s string) stamp {
	t, err := time.Parse(stampLayout, s)
	if err != nil {
		return stamp{Stamp: s, Text: s}
	}
	if zone == nil {
		zone = time.Local
	}
	return stamp{Stamp: s, Text: t.In(zone).Format(shownLayout)}
}

// zoneOf returns the time zone the person of r reads times in, and its
// name: the one they chose, or the server's.
func zoneOf(r *http.Request) (*time.Location, string) {
	if c, err := r.Cookie(zoneCookie); err == nil {
		if z, err := loadZone(c.Value); err == nil {
			return z, c.Value
		}
	}
	name, _ := time.Now().Zone()
	return time.Local, "the server's (" + name + ")"
}

// loadZone returns the IANA time zone name, such as Europe/Paris, or an
// error that says what a zone is.
func loadZone(name string) (*time.Location, error) {
	if name == "" || len(name) > 64 || name == "Local" || strings.ContainsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/_+-", r))
	}) {
		return nil, fmt.Errorf("a time zone is a name such as Europe/Paris, America/New_York or UTC")
	}
	z, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q is no time zone Done knows: write one such as Europe/Paris, America/New_York or UTC", name)
	}
	return z, nil
}

// commonZones are offered when a person chooses a zone; any other IANA
// name is taken too.
var commonZones = []string{
	"UTC", "Europe/London", "Europe/Paris", "Europe/Berlin", "Europe/Madrid", "Europe/Rome", "Europe/Warsaw",
	"Europe/Athens", "Europe/Moscow", "Africa/Lagos", "Africa/Nairobi", "Asia/Dubai", "Asia/Kolkata",
	"Asia/Singapore", "Asia/Shanghai", "Asia/Tokyo", "Asia/Seoul", "Australia/Sydney", "Pacific/Auckland",
	"America/Sao_Paulo", "America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles",
	"America/Anchorage", "Pacific/Honolulu",
}

// did says in words what the entry a of the activity log did, after the
// name of who did it: "asked to close the task", "marked a step done".
// What it quotes (a label's name, a step's status) is the store's, and
// the page shows it escaped, as all text.
func did(a store.Activity) string {
	change := func(field string) (old, new string) {
		c, _ := a.Details[field].(map[string]any)
		o, _ := c["old"].(string)
		n, _ := c["new"].(string)
		return o, n
	}
	detail := func(field string) string {
		s, _ := a.Details[field].(string)
		return s
	}
	switch a.Action {
	case "request_approval":
		if detail("kind") == string(store.ApprovalClose) {
			return "asked to close the task"
		}
		return "asked a person to validate something"
	case "approve_task":
		return "approved the request"
	case "reject_task":
		return "rejected the request"
	case "create_task":
		return "created the task"
	case "decompose_task":
		return "created the task, as a part of another"
	case "update_task":
		return "changed the task"
	case "move_task":
		return "moved the task to another project"
	case "assign_task", "claim_task":
		if _, to := change("assignee"); to != "" {
			if a.Action == "claim_task" && to == a.Actor {
				return "took the task"
			}
			return fmt.Sprintf("assigned the task to %s", to)
		}
		return "left the task to no one"
	case "schedule_task":
		return "scheduled the task"
	case "block_task":
		return "blocked the task"
	case "unblock_task":
		return "unblocked the task"
	case "close_task":
		return "closed the task"
	case "reopen_task":
		return "reopened the task"
	case "delete_task":
		return "moved the task to the Trash"
	case "add_task_dependency":
		return "made the task wait for another"
	case "remove_task_dependency":
		return "stopped the task waiting for another"
	case "add_label_to_task":
		return fmt.Sprintf("labelled the task %q", detail("label"))
	case "remove_label_from_task":
		return "took a label off the task"
	case "attach_context_to_task":
		return "attached a document to the task"
	case "detach_context_from_task":
		return "took a document off the task"
	case "add_step":
		return "added a step"
	case "update_step":
		return "changed a step"
	case "set_step_status":
		if _, to := change("status"); to != "" {
			return "marked a step " + strings.ReplaceAll(to, "_", " ")
		}
		return "changed a step's status"
	case "reorder_steps":
		return "put the steps in another order"
	case "delete_step":
		return "moved a step to the Trash"
	case "comment_on_task":
		return "commented"
	case "edit_comment":
		return "edited a comment"
	case "delete_comment":
		return "moved a comment to the Trash"
	case "start_run":
		return "queued a run of an agent on the task"
	case "retry_run":
		return "queued a run again"
	case "cancel_run":
		return "cancelled a run"
	case "complete_run":
		if _, to := change("status"); to != "" {
			return "finished a run: " + to
		}
		return "finished a run"
	case "restore_from_trash":
		return "restored a " + strings.ReplaceAll(a.SubjectKind, "_", " ") + " from the Trash"
	case "create_project":
		return "created a project"
	case "update_project":
		return "changed a project"
	case "archive_project":
		return "archived a project"
	case "unarchive_project":
		return "brought a project back from the archive"
	case "delete_project":
		return "moved a project to the Trash"
	case "create_label":
		return "created a label"
	case "create_token":
		return "minted a token"
	case "revoke_token":
		return "revoked a token"
	case "create_calendar_link":
		return "made a calendar link"
	case "rotate_calendar_link":
		return "replaced a calendar link"
	case "revoke_calendar_link":
		return "revoked a calendar link"
	case "pause_agent":
		return "paused an agent"
	case "resume_agent":
		return "resumed an agent"
	case "save_context":
		return "saved a document"
	case "create_signin_link":
		return "asked for a link to sign in to this page"
	case "sign_in":
		return "signed in to this page"
	case "sign_out":
		return "signed out of this page"
	case "request_confirmation":
		return "asked a person to confirm a call"
	case "confirm_call":
		return "confirmed a call"
	case "decline_call":
		return "declined a call"
	case "withdraw_confirmation":
		return "gave up a call that waited for a person"
	}
	// An action of a newer Done than this page: its name, in words.
	return strings.ReplaceAll(a.Action, "_", " ") + " (" + strings.ReplaceAll(a.SubjectKind, "_", " ") + ")"
}

// noticeCookie carries, from an action to the page its answer redirects
// to, the notice that says what was done: set by the action, read and
// cleared by the next page of the same session, signed with the
// session's key so that nothing else (another port of the same host,
// which may set cookies here) can make the page say what it did not do.
const noticeCookie = "done_notice"

// notify sets the notice text for the next page that s reads.
func (h *Handler) notify(w http.ResponseWriter, r *http.Request, s *session, text string) {
	v := base64.RawURLEncoding.EncodeToString([]byte(text))
	h.setCookie(w, r, noticeCookie, v+"."+s.sign("notice", v), time.Minute)
}

// notice returns the notice that r carries for s, if any and signed by
// s, and clears it.
func (h *Handler) notice(w http.ResponseWriter, r *http.Request, s *session) string {
	c, err := r.Cookie(noticeCookie)
	if err != nil {
		return ""
	}
	h.setCookie(w, r, noticeCookie, "", 0)
	v, mac, ok := strings.Cut(c.Value, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(s.sign("notice", v))) {
		return ""
	}
	text, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(text) > 1000 {
		return ""
	}
	return string(text)
}

// sign returns the MAC of v for purpose, with the session's key.
func (s *session) sign(purpose, v string) string {
	m := hmac.New(sha256.New, s.reviewKey)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(v))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
