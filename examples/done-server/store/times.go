package store

import "time"

// parseInstant parses the argument called field as a point in time: a date,
// 2025-06-30, which is midnight UTC, or an RFC 3339 time such as
// 2025-06-30T14:00:00+02:00.
func parseInstant(field, s string) (time.Time, error) {
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, invalidf("%s %s is neither a date (2025-06-30) nor a time (2025-06-30T14:00:00Z)", field, quote(s))
}

// parseStored parses a time as the store writes it (see timeFormat). The
// store wrote it, so an error is a bug, and the zero Time is as good an
// answer as any.
func parseStored(s string) time.Time {
	t, _ := time.Parse(timeFormat, s)
	return t
}
