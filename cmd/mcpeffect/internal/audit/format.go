package audit

import (
	"fmt"
	"strings"
)

// A Format is a form of a command's output: text for people, JSON for
// programs, SARIF for code-scanning readers, Markdown for a pull-request
// comment. The zero Format is text.
type Format string

// The formats.
const (
	FormatText     Format = "text"
	FormatJSON     Format = "json"
	FormatSARIF    Format = "sarif"
	FormatMarkdown Format = "markdown"
)

// Formats returns every format, in the order help lists them.
func Formats() []Format { return []Format{FormatText, FormatJSON, FormatSARIF, FormatMarkdown} }

// ParseFormat parses the name of a format, in any case; "md" is Markdown.
func ParseFormat(s string) (Format, error) {
	if strings.EqualFold(s, "md") {
		return FormatMarkdown, nil
	}
	for _, f := range Formats() {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	names := make([]string, len(Formats()))
	for i, f := range Formats() {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, strings.Join(names, ", "))
}

// String returns the name of the format; "text" for the zero Format.
func (f Format) String() string {
	if f == "" {
		return string(FormatText)
	}
	return string(f)
}

// MarshalText implements [encoding.TextMarshaler].
func (f Format) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseFormat],
// so that a Format is a flag (flag.TextVar).
func (f *Format) UnmarshalText(text []byte) error {
	v, err := ParseFormat(string(text))
	if err != nil {
		return err
	}
	*f = v
	return nil
}
