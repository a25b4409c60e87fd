package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpeffect/mcpeffect/examples/done-server/ical"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// feedHandler serves the calendar feeds, GET /calendar/{secret}.ics, as
// iCalendar. A feed has no bearer token: a calendar application can only
// poll a URL, so the secret in the URL is the credential, checked against
// its hash as tokens are. Anything but a live secret, a revoked or rotated
// one included, gets the same 404.
func (d *done) feedHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, ok := strings.CutSuffix(r.PathValue("file"), ".ics")
		if !ok {
			http.NotFound(w, r)
			return
		}
		f, err := d.store.Feed(r.Context(), secret)
		if errors.Is(err, store.ErrNoFeed) {
			http.NotFound(w, r)
			return
		}
		if err == nil {
			f.Link, err = d.store.NoteFetch(r.Context(), f.Link)
		}
		var body bytes.Buffer
		if err == nil {
			_, err = feedCalendar(f).WriteTo(&body)
		}
		if store.Transient(err) {
			d.logger.WarnContext(r.Context(), "serving a calendar feed", "err", err)
			writeUnavailable(w)
			return
		}
		if err != nil {
			d.logger.ErrorContext(r.Context(), "serving a calendar feed", "err", err)
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/calendar; charset=utf-8")
		h.Set("Content-Disposition", `inline; filename="done.ics"`)
		// The URL is a secret: no shared cache may keep the answer, and
		// no page it links to may learn the URL from a Referer.
		h.Set("Cache-Control", "private, max-age=300")
		h.Set("Referrer-Policy", "no-referrer")
		w.Write(body.Bytes())
	})
}

// feedCalendar returns the calendar of a feed: an event of a whole day for
// each due date, and one for each schedule.
func feedCalendar(f store.Feed) *ical.Calendar {
	c := &ical.Calendar{ProdID: "-//mcpeffect//Done " + version + "//EN", Name: f.Link.Name}
	for _, task := range f.Tasks {
		summary := task.Title
		if task.Status == store.StatusDone {
			summary = "✓ " + summary
		}
		description := taskDescription(task, f.Projects[task.ProjectID])
		stamp, _ := time.Parse(time.RFC3339, task.UpdatedAt)
		if due, err := time.Parse(time.DateOnly, task.Due); err == nil {
			c.Events = append(c.Events, ical.Event{
				UID:   task.ID + "-due@done",
				Stamp: stamp, Start: ical.Date(due), End: ical.Date(due.AddDate(0, 0, 1)),
				Summary: "Due: " + summary, Description: description,
				// A due date takes no time of the day.
				Transparent: true,
			})
		}
		if start, end, allDay, ok := store.ScheduledSpan(task); ok {
			e := ical.Event{UID: task.ID + "-scheduled@done", Stamp: stamp, Summary: summary, Description: description}
			if allDay {
				e.Start, e.End = ical.Date(start), ical.Date(end)
			} else {
				e.Start, e.End = ical.At(start), ical.At(end)
			}
			c.Events = append(c.Events, e)
		}
	}
	return c
}

func taskDescription(task store.Task, project string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Status: %s. Priority: %s.", task.Status, task.Priority)
	if task.Assignee != "" {
		fmt.Fprintf(&b, " For %s.", task.Assignee)
	}
	if project != "" {
		fmt.Fprintf(&b, "\nProject: %s", project)
	}
	if task.Description != "" {
		fmt.Fprintf(&b, "\n\n%s", task.Description)
	}
	fmt.Fprintf(&b, "\n\nTask %s in Done.", task.ID)
	return b.String()
}
