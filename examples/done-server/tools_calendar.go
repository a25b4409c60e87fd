package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// A calendar link is a secret URL of an iCalendar feed, served by the HTTP
// server (feed.go) to calendar applications, which know no other
// credential. Its secret is shown once, when the link is made.
func (d *done) addCalendarTools(t toolbox) {
	addTool(t, "list_calendar_links", "List calendar links",
		"The calendar feed links the caller oversees, its own and, for a person, those agents made: live and revoked, whether each still answers, when it was last fetched. Never their secrets, which Done does not keep."+paged,
		mcpeffect.Read, d.listCalendarLinks)
	addTool(t, "get_agenda", "Get agenda",
		"Tasks due or scheduled between two dates, in time order: the calendar as data. By default the seven days from today (UTC)."+paged,
		mcpeffect.Read, d.getAgenda)

	addTool(t, "create_calendar_link", "Create calendar link",
		"Mint a secret iCalendar feed URL of the tasks of a project, or of the caller's own tasks, for a calendar application to subscribe to: due dates and schedules. The feed answers only while the token that made it is live. The secret is in the answer, once; each call mints another link.",
		mcpeffect.Write, d.createCalendarLink)
	addTool(t, "rotate_calendar_link", "Rotate calendar link",
		"Revoke a feed URL at once and mint a new secret one in its place, for the same tasks. A link is rotated once: rotating it again is refused; rotate the new one.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.rotateCalendarLink)
	addTool(t, "revoke_calendar_link", "Revoke calendar link",
		"Revoke a feed URL for good, the caller's own or, for a person, one an agent made: it answers nothing from the next request on. No-op if already revoked.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.revokeCalendarLink)
	addTool(t, "schedule_task", "Schedule task",
		"Plan a task on days (start and end dates, both included) or at times (RFC 3339); it then shows in feeds and agendas. Without start, the task is no longer scheduled.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.scheduleTask)
}

type linksResult struct {
	Links      []store.CalendarLink `json:"links"`
	NextCursor string               `json:"next_cursor,omitempty"`
}

func (d *done) listCalendarLinks(ctx context.Context, in store.Page) (linksResult, error) {
	l, err := d.store.ListCalendarLinks(ctx, caller(ctx), in)
	return linksResult{l.Items, l.NextCursor}, err
}

func (d *done) getAgenda(ctx context.Context, in store.AgendaFilter) (store.Agenda, error) {
	return d.store.Agenda(ctx, caller(ctx), in)
}

type createLinkArgs struct {
	ProjectID string `json:"project_id,omitempty" jsonschema:"the project whose tasks the feed shows; left out, the tasks assigned to the caller"`
	Name      string `json:"name,omitempty" jsonschema:"the name calendar applications show; by default the project's"`
}

type calendarLinkResult struct {
	Link store.CalendarLink `json:"link"`
	// URL is the feed to subscribe to, secret included, when this process
	// serves HTTP. It is shown this once.
	URL string `json:"url,omitempty"`
	// Path is the feed's path on the HTTP server, secret included.
	Path string `json:"path"`
	// Served says who serves the feed.
	Served string `json:"served"`
}

func (d *done) linkResult(link store.CalendarLink, secret string) calendarLinkResult {
	res := calendarLinkResult{Link: link, Path: feedPath + secret + ".ics"}
	if d.baseURL == "" {
		res.Served = "This process serves MCP over stdio and no HTTP, so it serves no feed: done-server serve -http ADDR, " +
			"on the same data directory, serves it at http://ADDR" + res.Path + ". The secret is shown only now."
		return res
	}
	res.URL = d.baseURL + res.Path
	res.Served = "This server serves the feed at url, with no other credential, until the link is revoked or rotated. The secret is shown only now."
	return res
}

func (d *done) createCalendarLink(ctx context.Context, in createLinkArgs) (calendarLinkResult, error) {
	link, secret, err := d.store.CreateCalendarLink(ctx, caller(ctx), in.ProjectID, in.Name)
	if err != nil {
		return calendarLinkResult{}, err
	}
	return d.linkResult(link, secret), nil
}

type linkArg struct {
	LinkID string `json:"link_id" jsonschema:"the id of the calendar link (from list_calendar_links)"`
}

func (d *done) rotateCalendarLink(ctx context.Context, in linkArg) (calendarLinkResult, error) {
	link, secret, err := d.store.RotateCalendarLink(ctx, caller(ctx), in.LinkID)
	if err != nil {
		return calendarLinkResult{}, err
	}
	return d.linkResult(link, secret), nil
}

func (d *done) revokeCalendarLink(ctx context.Context, in linkArg) (store.CalendarLink, error) {
	return d.store.RevokeCalendarLink(ctx, caller(ctx), in.LinkID)
}

type scheduleTaskArgs struct {
	TaskID string `json:"task_id" jsonschema:"the id of the task"`
	Start  string `json:"start,omitempty" jsonschema:"the first day (2025-06-30) or the start time (2025-06-30T14:00:00+02:00); left out, the task is no longer scheduled"`
	End    string `json:"end,omitempty" jsonschema:"the last day, included, or the end time; by default the start day, or an hour after the start time"`
}

func (d *done) scheduleTask(ctx context.Context, in scheduleTaskArgs) (store.Task, error) {
	return d.store.ScheduleTask(ctx, caller(ctx), in.TaskID, in.Start, in.End)
}
