package ical

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestEscapeText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{`a\b`, `a\\b`},
		{"a;b,c", `a\;b\,c`},
		{"one\ntwo\r\nthree\rfour", `one\ntwo\nthree\nfour`},
		{"tab\tkept, bell\a and nul\x00 dropped", `tab` + "\t" + `kept\, bell and nul dropped`},
		{"colon: and \"quotes\" stay", `colon: and "quotes" stay`},
		{"caf\xe9", "caf\uFFFD"},
		{"", ""},
	} {
		if got := EscapeText(c.in); got != c.want {
			t.Errorf("EscapeText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFold checks the folding of long lines: the first line of at most 75
// octets, each continuation a space and at most 74 more, no UTF-8 sequence
// split, and nothing lost.
func TestFold(t *testing.T) {
	for _, c := range []struct {
		name string
		line string
		want []string // the physical lines, without CRLF
	}{
		{"short", "SUMMARY:hi", []string{"SUMMARY:hi"}},
		{"exactly 75", strings.Repeat("a", 75), []string{strings.Repeat("a", 75)}},
		{"76", strings.Repeat("a", 76), []string{strings.Repeat("a", 75), " a"}},
		{"three lines", strings.Repeat("b", 75+74+1), []string{strings.Repeat("b", 75), " " + strings.Repeat("b", 74), " b"}},
		// é is 2 octets: a cut at 75 would fall inside the 38th.
		{"two-octet runes", strings.Repeat("é", 40), []string{strings.Repeat("é", 37), " " + strings.Repeat("é", 3)}},
		// 😀 is 4 octets: 74 = 18*4 + 2, so the first line holds 18 and
		// one ASCII letter, 73 octets.
		{"four-octet runes", "x" + strings.Repeat("😀", 20), []string{"x" + strings.Repeat("😀", 18), " " + strings.Repeat("😀", 2)}},
		// No rune starts in the first 75 octets: cut there, rather than
		// search back past the start (which indexed s[-1]).
		{"not UTF-8", strings.Repeat("\x80", 80), []string{strings.Repeat("\x80", 75), " " + strings.Repeat("\x80", 5)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			w := &writer{w: bufio.NewWriter(&b)}
			w.line(c.line)
			w.w.Flush()
			got := strings.Split(strings.TrimSuffix(b.String(), "\r\n"), "\r\n")
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("folded into %q, want %q", got, c.want)
			}
			for i, l := range got {
				if len(l) > MaxLine || !utf8.ValidString(l) && utf8.ValidString(c.line) {
					t.Errorf("line %d: %d octets, valid UTF-8 %t", i, len(l), utf8.ValidString(l))
				}
			}
			if unfolded := strings.ReplaceAll(b.String(), "\r\n ", ""); unfolded != c.line+"\r\n" {
				t.Errorf("unfolds to %q", unfolded)
			}
		})
	}
}

func TestWriteTo(t *testing.T) {
	stamp := time.Date(2025, 6, 2, 9, 30, 0, 0, time.UTC)
	c := &Calendar{
		ProdID: "-//Example//Test//EN",
		Name:   "Work, mostly",
		Events: []Event{
			{UID: "1@test", Stamp: stamp, Start: Date(time.Date(2025, 6, 30, 15, 0, 0, 0, time.UTC)),
				End: Date(time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)), Summary: "Due: report; draft", Transparent: true},
			{UID: "2@test", Stamp: stamp, Start: At(time.Date(2025, 6, 3, 16, 0, 0, 0, time.FixedZone("CEST", 2*3600))),
				End: At(time.Date(2025, 6, 3, 15, 0, 0, 0, time.UTC)), Summary: "Review", Description: "line 1\nline 2"},
		},
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	want := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//Test//EN\r\nCALSCALE:GREGORIAN\r\nX-WR-CALNAME:Work\\, mostly\r\n" +
		"BEGIN:VEVENT\r\nUID:1@test\r\nDTSTAMP:20250602T093000Z\r\nDTSTART;VALUE=DATE:20250630\r\nDTEND;VALUE=DATE:20250701\r\n" +
		"SUMMARY:Due: report\\; draft\r\nTRANSP:TRANSPARENT\r\nEND:VEVENT\r\n" +
		"BEGIN:VEVENT\r\nUID:2@test\r\nDTSTAMP:20250602T093000Z\r\nDTSTART:20250603T140000Z\r\nDTEND:20250603T150000Z\r\n" +
		"SUMMARY:Review\r\nDESCRIPTION:line 1\\nline 2\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestWriteToRefusesWhatRFC5545Requires(t *testing.T) {
	stamp := time.Now()
	start := Date(stamp)
	for _, c := range []struct {
		name string
		cal  Calendar
	}{
		{"no PRODID", Calendar{}},
		{"no UID", Calendar{ProdID: "p", Events: []Event{{Stamp: stamp, Start: start}}}},
		{"no DTSTAMP", Calendar{ProdID: "p", Events: []Event{{UID: "u", Start: start}}}},
		{"no start", Calendar{ProdID: "p", Events: []Event{{UID: "u", Stamp: stamp}}}},
	} {
		var b bytes.Buffer
		if _, err := c.cal.WriteTo(&b); err == nil || b.Len() > 0 {
			t.Errorf("%s: err = %v, %d bytes written; want an error and nothing written", c.name, err, b.Len())
		}
	}
}
