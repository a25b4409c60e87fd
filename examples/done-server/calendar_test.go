package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fetch GETs url and returns the status and the body.
func fetch(t *testing.T, method, url string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// icsEvent is a VEVENT: its properties by name (with their parameters,
// as in DTSTART;VALUE=DATE), values still escaped.
type icsEvent map[string]string

// escapedText matches a TEXT value as RFC 5545 (3.3.11) writes it: no
// bare ; , or line break, and a backslash only before \ ; , n or N.
var escapedText = regexp.MustCompile(`^(?:[^\\;,\r\n]|\\[\\;,nN])*$`)

func unescapeText(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\;`, `;`, `\,`, `,`, `\n`, "\n", `\N`, "\n").Replace(s)
}

// checkICS holds body to the rules of RFC 5545 that a feed must follow,
// checked on the raw bytes rather than with the package that wrote them,
// and returns its events.
func checkICS(t *testing.T, body string) (events []icsEvent, folded int) {
	t.Helper()
	if !strings.HasSuffix(body, "\r\n") {
		t.Fatalf("the feed does not end with CRLF: %q", body[max(0, len(body)-20):])
	}
	physical := strings.Split(strings.TrimSuffix(body, "\r\n"), "\r\n")
	for i, line := range physical {
		// A bare CR or LF is a line not ended by CRLF (3.1).
		if strings.ContainsAny(line, "\r\n") {
			t.Errorf("line %d has a line break that is not CRLF: %q", i+1, line)
		}
		// Lines SHOULD NOT be longer than 75 octets (3.1); each line
		// being valid UTF-8 shows that no fold split a sequence.
		if len(line) > 75 {
			t.Errorf("line %d is %d octets long: %q", i+1, len(line), line)
		}
		if !utf8.ValidString(line) {
			t.Errorf("line %d is not valid UTF-8 (a fold split a sequence?): %q", i+1, line)
		}
		if strings.HasPrefix(line, " ") {
			folded++
		}
	}
	var lines []string
	for l := range strings.SplitSeq(strings.TrimSuffix(body, "\r\n"), "\r\n") {
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			lines[len(lines)-1] += l[1:]
			continue
		}
		lines = append(lines, l)
	}
	if lines[0] != "BEGIN:VCALENDAR" || lines[len(lines)-1] != "END:VCALENDAR" {
		t.Errorf("the feed is not one VCALENDAR: %q ... %q", lines[0], lines[len(lines)-1])
	}
	calendar := map[string]string{}
	var current icsEvent
	for _, l := range lines[1 : len(lines)-1] {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			t.Errorf("a content line without a value: %q", l)
			continue
		}
		switch {
		case l == "BEGIN:VEVENT":
			current = icsEvent{}
		case l == "END:VEVENT":
			events = append(events, current)
			current = nil
		case current != nil:
			current[name] = value
		default:
			calendar[name] = value
		}
		switch strings.SplitN(name, ";", 2)[0] {
		case "SUMMARY", "DESCRIPTION", "X-WR-CALNAME", "PRODID", "UID":
			if !escapedText.MatchString(value) {
				t.Errorf("%s is not escaped as TEXT: %q", name, value)
			}
		}
	}
	if calendar["VERSION"] != "2.0" || calendar["PRODID"] == "" {
		t.Errorf("the VCALENDAR lacks VERSION:2.0 or PRODID: %v", calendar)
	}
	for _, e := range events {
		if e["UID"] == "" || !regexp.MustCompile(`^\d{8}T\d{6}Z$`).MatchString(e["DTSTAMP"]) {
			t.Errorf("a VEVENT without a UID or a UTC DTSTAMP: %v", e)
		}
	}
	return events, folded
}

// TestCalendarFeed serves a project's feed and a person's over HTTP and
// holds them to RFC 5545; revoking or rotating a link ends its URL at once.
func TestCalendarFeed(t *testing.T) {
	e := newEnv(t)
	base := e.serveHTTP()
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	builder := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	project := must[store.Project](t, alice, "create_project", args{"name": "Lancement, été; phase \\1"}).ID
	other := must[store.Project](t, alice, "create_project", args{"name": "Other"}).ID

	title := `Write the "README"; then, tag \ release`
	description := "First line, with commas; and semicolons.\nSecond line: " + strings.Repeat("déjà vu 😀 ", 12) + "\r\nThird."
	readme := must[store.Task](t, alice, "create_task", args{"title": title, "description": description, "project_id": project, "due": "2025-06-30"})
	review := must[store.Task](t, alice, "create_task", args{"title": "Review", "project_id": project, "assignee": "builder"})
	must[store.Task](t, alice, "schedule_task", args{"task_id": review.ID, "start": "2025-06-03T14:00:00+02:00", "end": "2025-06-03T16:00:00+02:00"})
	offsite := must[store.Task](t, alice, "create_task", args{"title": "Offsite", "project_id": project, "due": "2025-06-12"})
	must[store.Task](t, alice, "schedule_task", args{"task_id": offsite.ID, "start": "2025-06-10", "end": "2025-06-12"})
	must[store.Task](t, alice, "create_task", args{"title": "No date", "project_id": project})
	finished := must[store.Task](t, alice, "create_task", args{"title": "Kick-off", "project_id": project, "due": "2025-06-01", "auto_close": true})
	must[store.Task](t, alice, "close_task", args{"task_id": finished.ID})
	trashed := must[store.Task](t, alice, "create_task", args{"title": "Deleted", "project_id": project, "due": "2025-06-05"})
	must[store.TrashItem](t, alice, "delete_task", args{"task_id": trashed.ID})
	must[store.Task](t, alice, "create_task", args{"title": "Elsewhere", "project_id": other, "due": "2025-06-05"})

	res := must[calendarLinkResult](t, alice, "create_calendar_link", args{"project_id": project})
	if !strings.HasPrefix(res.URL, base+"/calendar/"+store.CalendarSecretPrefix) || !strings.HasSuffix(res.URL, ".ics") ||
		res.URL != base+res.Path || !strings.Contains(res.Served, "This server serves the feed") || res.Link.Owner != "alice" {
		t.Fatalf("create_calendar_link: %+v", res)
	}
	status, header, body := fetch(t, http.MethodGet, res.URL)
	if status != http.StatusOK || header.Get("Content-Type") != "text/calendar; charset=utf-8" {
		t.Fatalf("GET the feed: %d %s\n%s", status, header.Get("Content-Type"), body)
	}
	events, folded := checkICS(t, body)
	if folded == 0 {
		t.Error("no line of the feed was folded: the test does not exercise folding")
	}
	byUID := map[string]icsEvent{}
	for _, ev := range events {
		byUID[ev["UID"]] = ev
	}
	var uids []string
	for uid := range byUID {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	want := []string{readme.ID + "-due@done", review.ID + "-scheduled@done", offsite.ID + "-due@done", offsite.ID + "-scheduled@done", finished.ID + "-due@done"}
	slices.Sort(want)
	if !slices.Equal(uids, want) || len(events) != len(want) {
		t.Fatalf("events %v, want %v", uids, want)
	}
	due := byUID[readme.ID+"-due@done"]
	if unescapeText(due["SUMMARY"]) != "Due: "+title || due["DTSTART;VALUE=DATE"] != "20250630" || due["DTEND;VALUE=DATE"] != "20250701" || due["TRANSP"] != "TRANSPARENT" {
		t.Errorf("the due date of the README task: %v", due)
	}
	wantDescription := strings.ReplaceAll(description, "\r\n", "\n")
	if got := unescapeText(due["DESCRIPTION"]); !strings.Contains(got, wantDescription) || !strings.Contains(got, "Project: Lancement, été; phase \\1") {
		t.Errorf("the description of the README task:\n%s\nlacks\n%s", got, wantDescription)
	}
	if r := byUID[review.ID+"-scheduled@done"]; r["DTSTART"] != "20250603T120000Z" || r["DTEND"] != "20250603T140000Z" || r["SUMMARY"] != "Review" {
		t.Errorf("the scheduled review: %v", r)
	}
	if o := byUID[offsite.ID+"-scheduled@done"]; o["DTSTART;VALUE=DATE"] != "20250610" || o["DTEND;VALUE=DATE"] != "20250613" {
		t.Errorf("the offsite, scheduled from 10 to 12 June included: %v", o)
	}
	if f := byUID[finished.ID+"-due@done"]; unescapeText(f["SUMMARY"]) != "Due: ✓ Kick-off" {
		t.Errorf("a done task: %v", f)
	}
	if !strings.Contains(body, "X-WR-CALNAME:Lancement\\, été\\; phase \\\\1\r\n") {
		t.Errorf("the calendar's name is not escaped:\n%s", body)
	}

	// The secret is the credential: the database keeps only its hash, and
	// list_calendar_links never shows it.
	secret := strings.TrimSuffix(strings.TrimPrefix(res.Path, feedPath), ".ics")
	if dump := e.dump(); strings.Contains(dump, secret) || !strings.Contains(dump, fmt.Sprintf("%x", sha256.Sum256([]byte(secret)))) {
		t.Error("the database holds the secret of the link, or not its SHA-256")
	}
	listed, err := alice.CallTool(t.Context(), callParams("list_calendar_links", nil))
	if err != nil {
		t.Fatal(err)
	}
	if txt := text(listed); strings.Contains(txt, store.CalendarSecretPrefix) || !strings.Contains(txt, res.Link.ID) || !strings.Contains(txt, `"last_fetched_at":"2025-06-02T09:00:00.000Z"`) {
		t.Errorf("list_calendar_links: %s", txt)
	}

	// A person's feed shows the tasks assigned to them, in any project.
	mine := must[calendarLinkResult](t, builder, "create_calendar_link", nil)
	if mine.Link.Name != "Tasks of builder" {
		t.Errorf("the name of a personal link: %q", mine.Link.Name)
	}
	_, _, body = fetch(t, http.MethodGet, mine.URL)
	if events, _ := checkICS(t, body); len(events) != 1 || events[0]["UID"] != review.ID+"-scheduled@done" {
		t.Errorf("builder's feed: %v, want only the review", events)
	}

	// Only its owner may revoke or rotate a link.
	mustFail(t, builder, "revoke_calendar_link", args{"link_id": res.Link.ID}, "does not exist")
	mustFail(t, builder, "rotate_calendar_link", args{"link_id": res.Link.ID}, "does not exist")

	rotated := must[calendarLinkResult](t, alice, "rotate_calendar_link", args{"link_id": res.Link.ID})
	if rotated.Link.Replaces != res.Link.ID || rotated.URL == res.URL || rotated.Link.Name != res.Link.Name {
		t.Errorf("rotate_calendar_link: %+v", rotated)
	}
	if status, _, _ := fetch(t, http.MethodGet, res.URL); status != http.StatusNotFound {
		t.Errorf("the rotated URL: %d, want 404", status)
	}
	if status, _, body := fetch(t, http.MethodGet, rotated.URL); status != http.StatusOK || !strings.Contains(body, readme.ID) {
		t.Errorf("the new URL: %d", status)
	}
	mustFail(t, alice, "rotate_calendar_link", args{"link_id": res.Link.ID}, "already rotated into "+fmt.Sprintf("%q", rotated.Link.ID))

	revoked := must[store.CalendarLink](t, alice, "revoke_calendar_link", args{"link_id": rotated.Link.ID})
	if revoked.RevokedAt == "" {
		t.Errorf("revoke_calendar_link: %+v", revoked)
	}
	if status, _, _ := fetch(t, http.MethodGet, rotated.URL); status != http.StatusNotFound {
		t.Errorf("a revoked URL: %d, want 404", status)
	}
	mustFail(t, alice, "rotate_calendar_link", args{"link_id": rotated.Link.ID}, "revoked for good")

	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/calendar/" + store.CalendarSecretPrefix + "nothing.ics"},
		{http.MethodGet, "/calendar/" + strings.TrimPrefix(mine.Path, feedPath)[:20] + ".ics"},
		{http.MethodGet, strings.TrimSuffix(mine.Path, ".ics")},
		{http.MethodGet, "/calendar/"},
	} {
		if status, _, _ := fetch(t, c.method, base+c.path); status != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404", c.method, c.path, status)
		}
	}
	if status, _, _ := fetch(t, http.MethodPost, mine.URL); status != http.StatusMethodNotAllowed {
		t.Errorf("POST a feed: %d, want 405", status)
	}
}

// TestCalendarLinkOverStdio makes a link where no HTTP server runs: the
// answer says who serves it, and an HTTP server on the same data does.
func TestCalendarLinkOverStdio(t *testing.T) {
	e := newEnv(t)
	stdio, _ := newDone(e.store, e.logger, config{}).newServer()
	secret := e.mint("alice", store.Human, mcpeffect.NonDestructive)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := stdio.Connect(mcpeffect.WithConnectionScope(withStdioCredential(t.Context(), stdioCredential{secret: secret}), mcpeffect.NonDestructive), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs := e.clientConnect(ct)
	must[store.Task](t, cs, "create_task", args{"title": "Due soon", "due": "2025-06-04", "assignee": "alice"})
	res := must[calendarLinkResult](t, cs, "create_calendar_link", nil)
	if res.URL != "" || !strings.HasPrefix(res.Path, feedPath+store.CalendarSecretPrefix) ||
		!strings.Contains(res.Served, "over stdio and no HTTP") || !strings.Contains(res.Served, "done-server serve -http ADDR") ||
		!strings.Contains(res.Served, "http://ADDR"+res.Path) {
		t.Fatalf("create_calendar_link over stdio: %+v", res)
	}
	status, _, body := fetch(t, http.MethodGet, e.serveHTTP()+res.Path)
	if status != http.StatusOK || !strings.Contains(body, "SUMMARY:Due: Due soon\r\n") {
		t.Errorf("the feed from an HTTP server on the same data: %d\n%s", status, body)
	}
}

// TestScheduleAndAgenda plans tasks and reads them back as an agenda.
func TestScheduleAndAgenda(t *testing.T) {
	e := newEnv(t) // Monday 2 June 2025
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	e.mint("builder", store.Agent, mcpeffect.ReadOnly)
	project := must[store.Project](t, alice, "create_project", args{"name": "Launch"}).ID
	archived := must[store.Project](t, alice, "create_project", args{"name": "Old"}).ID
	task := must[store.Task](t, alice, "create_task", args{"title": "Demo", "project_id": project})

	got := must[store.Task](t, alice, "schedule_task", args{"task_id": task.ID, "start": "2025-06-04T10:00:00+02:00"})
	if got.ScheduledStart != "2025-06-04T08:00:00.000Z" || got.ScheduledEnd != "2025-06-04T09:00:00.000Z" {
		t.Errorf("a time without an end lasts an hour: %s to %s", got.ScheduledStart, got.ScheduledEnd)
	}
	got = must[store.Task](t, alice, "schedule_task", args{"task_id": task.ID, "start": "2025-06-05"})
	if got.ScheduledStart != "2025-06-05" || got.ScheduledEnd != "2025-06-05" {
		t.Errorf("a date without an end lasts the day: %s to %s", got.ScheduledStart, got.ScheduledEnd)
	}
	for _, c := range []struct {
		a    args
		want string
	}{
		{args{"start": "2025-06-05", "end": "2025-06-04"}, "is before start"},
		{args{"start": "2025-06-05T10:00:00Z", "end": "2025-06-05T10:00:00Z"}, "is before start"},
		{args{"start": "2025-06-05", "end": "2025-06-05T10:00:00Z"}, "both be dates or both be times"},
		{args{"start": "tomorrow"}, "neither a date"},
		{args{"end": "2025-06-05"}, "end needs a start"},
		{args{"start": "2025-01-01", "end": "2026-06-01"}, "at most 366 days"},
	} {
		c.a["task_id"] = task.ID
		mustFail(t, alice, "schedule_task", c.a, c.want)
	}
	if got := must[store.Task](t, alice, "schedule_task", args{"task_id": task.ID}); got.ScheduledStart != "" || got.ScheduledEnd != "" {
		t.Errorf("schedule_task without start: %+v, want it unscheduled", got)
	}

	week := must[store.Task](t, alice, "create_task", args{"title": "Week-long", "project_id": project, "assignee": "builder"})
	must[store.Task](t, alice, "schedule_task", args{"task_id": week.ID, "start": "2025-05-30", "end": "2025-06-03"})
	late := must[store.Task](t, alice, "create_task", args{"title": "Late call", "due": "2025-06-08"})
	must[store.Task](t, alice, "schedule_task", args{"task_id": late.ID, "start": "2025-06-04T23:00:00Z", "end": "2025-06-05T01:00:00Z"})
	must[store.Task](t, alice, "create_task", args{"title": "Next month", "due": "2025-07-02"})
	hidden := must[store.Task](t, alice, "create_task", args{"title": "In an archived project", "project_id": archived, "due": "2025-06-03"})
	must[store.Project](t, alice, "archive_project", args{"project_id": archived})
	ends := must[store.Task](t, alice, "create_task", args{"title": "Ends at midnight"})
	must[store.Task](t, alice, "schedule_task", args{"task_id": ends.ID, "start": "2025-06-01T22:00:00Z", "end": "2025-06-02T00:00:00Z"})

	entries := func(a args) []string {
		t.Helper()
		var out []string
		for _, en := range must[store.Agenda](t, alice, "get_agenda", a).Entries {
			out = append(out, en.Kind+" "+en.Task.Title+" "+en.Date)
		}
		return out
	}
	want := []string{"scheduled Week-long 2025-05-30", "scheduled Late call 2025-06-04", "due Late call 2025-06-08"}
	if got := entries(nil); !slices.Equal(got, want) {
		t.Errorf("the agenda of the week:\n%q\nwant\n%q", got, want)
	}
	if got := entries(args{"from": "2025-06-05", "to": "2025-06-05"}); !slices.Equal(got, []string{"scheduled Late call 2025-06-04"}) {
		t.Errorf("a call across midnight on its second day: %q", got)
	}
	if got := entries(args{"project_id": project}); !slices.Equal(got, []string{"scheduled Week-long 2025-05-30"}) {
		t.Errorf("the agenda of a project: %q", got)
	}
	if got := entries(args{"mine": true, "to": "2025-07-31"}); len(got) != 0 {
		t.Errorf("alice's own agenda: %q, want nothing", got)
	}
	if got := entries(args{"from": "2025-06-01", "to": "2025-07-31"}); len(got) != 5 || slices.Contains(got, "due "+hidden.Title+" 2025-06-03") {
		t.Errorf("two months: %q", got)
	}
	mustFail(t, alice, "get_agenda", args{"from": "2025-06-05", "to": "2025-06-04"}, "must be 1 to 92 days")
	mustFail(t, alice, "get_agenda", args{"from": "2025-06-01", "to": "2025-09-01"}, "must be 1 to 92 days")
	mustFail(t, alice, "get_agenda", args{"from": "June"}, "not a date")
}
