// Package ical writes iCalendar (RFC 5545) calendars of events: the feeds
// that calendar applications subscribe to.
//
// It writes what the RFC requires of such a feed, and nothing more: lines
// end in CRLF and are folded at 75 octets without splitting a UTF-8
// sequence (section 3.1), TEXT values are escaped (section 3.3.11), and
// every event has a UID and a DTSTAMP (section 3.6.1).
package ical

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// A Calendar is a VCALENDAR object holding events.
type Calendar struct {
	// ProdID names the product that made the calendar, as in
	// "-//Example Corp//Example App 1.0//EN". It is required.
	ProdID string
	// Name is the name calendar applications show for the calendar
	// (X-WR-CALNAME, a common extension). Optional.
	Name   string
	Events []Event
}

// An Event is a VEVENT.
type Event struct {
	// UID identifies the event for good, across every version of the
	// calendar; applications use it to update the event they have.
	UID string
	// Stamp is when the information of the event last changed (DTSTAMP;
	// the calendar has no METHOD, so section 3.8.7.2 reads it so).
	Stamp time.Time
	// Start and End bound the event; End is exclusive. A zero End leaves
	// DTEND out: a date then lasts a day, a time an instant.
	Start, End Time
	Summary    string
	// Description is optional; it may hold several lines.
	Description string
	// Transparent events do not block time in the calendar of the
	// person, as for a due date.
	Transparent bool
}

// A Time is a date, for an event of whole days, or a time of day in UTC.
type Time struct {
	t    time.Time
	date bool
}

// Date returns the date, without a time of day, of t's year, month and
// day.
func Date(t time.Time) Time {
	return Time{time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), true}
}

// At returns the instant t, written in UTC.
func At(t time.Time) Time {
	return Time{t.UTC(), false}
}

// IsZero reports whether t is the zero Time.
func (t Time) IsZero() bool { return t.t.IsZero() }

// property returns the name, with its VALUE parameter for a date, and the
// value of a property holding t.
func (t Time) property(name string) (string, string) {
	if t.date {
		return name + ";VALUE=DATE", t.t.Format("20060102")
	}
	return name, t.t.Format("20060102T150405Z")
}

// WriteTo writes c to w as an iCalendar stream. It writes nothing when c
// lacks what RFC 5545 requires: a PRODID, and a UID, a DTSTAMP and a start
// on every event.
func (c *Calendar) WriteTo(w io.Writer) (int64, error) {
	if strings.TrimSpace(c.ProdID) == "" {
		return 0, errors.New("ical: the calendar has no PRODID")
	}
	for i, e := range c.Events {
		switch {
		case strings.TrimSpace(e.UID) == "":
			return 0, fmt.Errorf("ical: event %d has no UID", i)
		case e.Stamp.IsZero():
			return 0, fmt.Errorf("ical: event %q has no DTSTAMP", e.UID)
		case e.Start.IsZero():
			return 0, fmt.Errorf("ical: event %q has no start", e.UID)
		}
	}
	cw := &writer{w: bufio.NewWriter(w)}
	cw.line("BEGIN:VCALENDAR")
	cw.line("VERSION:2.0")
	cw.text("PRODID", c.ProdID)
	cw.line("CALSCALE:GREGORIAN")
	if c.Name != "" {
		cw.text("X-WR-CALNAME", c.Name)
	}
	for _, e := range c.Events {
		cw.line("BEGIN:VEVENT")
		cw.text("UID", e.UID)
		cw.line("DTSTAMP:" + e.Stamp.UTC().Format("20060102T150405Z"))
		name, value := e.Start.property("DTSTART")
		cw.line(name + ":" + value)
		if !e.End.IsZero() {
			name, value := e.End.property("DTEND")
			cw.line(name + ":" + value)
		}
		cw.text("SUMMARY", e.Summary)
		if e.Description != "" {
			cw.text("DESCRIPTION", e.Description)
		}
		if e.Transparent {
			cw.line("TRANSP:TRANSPARENT")
		}
		cw.line("END:VEVENT")
	}
	cw.line("END:VCALENDAR")
	if cw.err == nil {
		cw.err = cw.w.Flush()
	}
	return cw.n, cw.err
}

// writer writes content lines, folded, keeping the first error.
type writer struct {
	w   *bufio.Writer
	n   int64
	err error
}

// text writes a property whose value is TEXT.
func (w *writer) text(name, value string) {
	w.line(name + ":" + EscapeText(value))
}

// MaxLine is the longest a line may be, in octets, without its CRLF.
const MaxLine = 75

// line writes one content line, folded into lines of at most MaxLine
// octets: each continuation line begins with a space, which counts. A
// cut never falls inside a UTF-8 sequence; bytes that are not UTF-8 (which
// EscapeText never leaves) are cut anywhere, rather than searched back
// past the start of s.
func (w *writer) line(s string) {
	limit := MaxLine
	for len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = limit
		}
		w.write(s[:cut], "\r\n ")
		s = s[cut:]
		limit = MaxLine - 1
	}
	w.write(s, "\r\n")
}

func (w *writer) write(parts ...string) {
	for _, p := range parts {
		if w.err != nil {
			return
		}
		var n int
		n, w.err = w.w.WriteString(p)
		w.n += int64(n)
	}
}

// EscapeText returns s as a TEXT value: backslashes, semicolons and commas
// escaped with a backslash, line breaks (CRLF, LF or CR) as \n. Other
// control characters, which TEXT cannot hold, are dropped, and invalid
// UTF-8 becomes U+FFFD.
func EscapeText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\\' || r == ';' || r == ',':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n' || r == '\r':
			b.WriteString(`\n`)
		case r == '\t' || r >= 0x20 && r != 0x7f:
			b.WriteRune(r)
		}
	}
	return b.String()
}
