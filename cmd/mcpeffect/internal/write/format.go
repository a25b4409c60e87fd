package write

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
	// FormatJustification is verify's alone: the justification of each
	// hint of each tool that app directories ask for, in Markdown.
	FormatJustification Format = "justification"
)

// Formats returns the formats of every command, in the order help lists
// them.
func Formats() []Format { return []Format{FormatText, FormatJSON, FormatSARIF, FormatMarkdown} }

// ParseFormat parses the name of a format of every command, in any case;
// "md" is Markdown.
func ParseFormat(s string) (Format, error) { return ParseFormatOf(s, Formats()) }

// ParseFormatOf parses the name of one of the formats among, in any
// case; "md" is Markdown.
func ParseFormatOf(s string, among []Format) (Format, error) {
	if strings.EqualFold(s, "md") {
		s = string(FormatMarkdown)
	}
	for _, f := range among {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	names := make([]string, len(among))
	for i, f := range among {
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
