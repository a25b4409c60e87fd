package main

import (
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
)

// targetFlags are the flags that name the server a command reaches, the
// same for audit and verify: -url and its -header, and -timeout; a
// server run as a command is given after them.
type targetFlags struct {
	url     string
	header  headerFlag
	timeout time.Duration
}

// register defines the flags on fs; verb says what the command does to
// the server ("audit"), and timeout is -timeout's default.
func (f *targetFlags) register(fs *flag.FlagSet, verb string, timeout time.Duration) {
	f.header = headerFlag{}
	fs.StringVar(&f.url, "url", "", verb+" the Streamable HTTP endpoint at `URL`")
	fs.Var(f.header, "header", "add the header `\"Name: value\"` to every HTTP request (repeatable)")
	fs.DurationVar(&f.timeout, "timeout", timeout, "give up after this `duration`; 0 waits for ever")
}

// target returns the server that the flags and the command line command
// name, or a message saying what is wrong with them.
func (f *targetFlags) target(command []string) (connect.Target, string) {
	t := connect.Target{Command: command, URL: f.url, Header: http.Header(f.header), Timeout: f.timeout}
	switch {
	case f.url != "" && len(command) > 0:
		return t, "give either -url or a command to run, not both"
	case f.url != "":
		if err := checkURL(f.url); err != nil {
			return t, err.Error()
		}
	case len(command) > 0:
		if len(f.header) > 0 {
			return t, "-header needs -url: a server run over stdio gets no HTTP headers"
		}
	default:
		return t, "no server: give a command to run after --, or -url"
	}
	if f.timeout < 0 {
		return t, fmt.Sprintf("-timeout %v is negative", f.timeout)
	}
	return t, ""
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("-url %q: want an http:// or https:// URL: %v", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-url %q: want an http:// or https:// URL", s)
	}
	return nil
}

// A headerFlag collects the -header flags: "Name: value", repeatable.
type headerFlag http.Header

func (h headerFlag) String() string { return "" }

func (h headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" {
		return fmt.Errorf("%q is not a header: want \"Name: value\"", s)
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return !isTokenRune(r) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return fmt.Errorf("header name %q: character %q is not allowed", name, r)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("header %q: the value holds a line break or NUL", name)
	}
	http.Header(h).Add(name, value)
	return nil
}

// isTokenRune reports whether r may appear in an HTTP header name (a
// token of RFC 9110, section 5.6.2).
func isTokenRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
		strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}
