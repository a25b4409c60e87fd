package connect

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// A Target is an MCP server to list the tools of, or to open a session
// with: a command run over stdio, or a Streamable HTTP endpoint. Every
// session it opens is bounded, in what it reads by Limits and in time by
// Timeout, so that no server can hold its client without end.
type Target struct {
	// Command is the server's command and its arguments, run over stdio.
	// The server inherits the environment; its standard error is kept,
	// and its last lines are shown if listing fails.
	Command []string
	// URL is the server's Streamable HTTP endpoint, when Command is empty.
	URL string
	// Header is added to every HTTP request, such as an Authorization
	// header with a bearer token.
	Header http.Header
	// Timeout bounds everything, the server's shutdown included; 0 waits
	// for ever.
	Timeout time.Duration
	// Limits bound what is read from the server; zero fields take
	// their values in [DefaultLimits].
	Limits Limits
	// Env is added to the environment a server run as a command inherits:
	// "NAME=value" each.
	Env []string
	// Confirm makes the client a person who accepts every question a
	// form elicitation asks, such as a server's confirmation before a
	// destructive call, and declares it can be asked; a question of
	// another mode is declined. The audit leaves it false: a host that
	// cannot ask.
	Confirm bool
	// Progress, if not nil, is told what the session is doing, for people
	// who wait: "starting the server", "listing tools: 250 so far, page
	// 3".
	Progress func(doing string)
}

// tell tells t's Progress what the session is doing.
func (t Target) tell(doing string) {
	if t.Progress != nil {
		t.Progress(doing)
	}
}

// String names the target for people: its command or its URL.
func (t Target) String() string {
	if len(t.Command) > 0 {
		return printable(t.Command[0])
	}
	return printable(t.URL)
}

// List connects to the target, lists its tools as [List] does, within
// t's limits, and ends the session. A server run as a command is then
// stopped: asked to exit, and killed, with the processes it started, if
// it does not, or at once when the time is up.
//
// An error is a [*ConnectError], which says what happened and what to do.
func (t Target) List(ctx context.Context) (Server, []Listed, error) {
	s, err := t.Connect(ctx)
	if err != nil {
		return Server{}, nil, err
	}
	tools, err := s.listTools(ctx)
	s.Close()
	if err != nil {
		return s.Server(), nil, s.Explain(ctx, err)
	}
	return s.Server(), tools, nil
}

// timedOut explains an error that came of ctx being done.
func (t Target) timedOut(ctx context.Context, err error) (what, hint string) {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("interrupted while %s", stageOf(err).doing()), ""
	}
	what = fmt.Sprintf("no answer within %v (-timeout) while %s", t.Timeout, stageOf(err).doing())
	if len(t.Command) > 0 {
		return what, "the server may be waiting for something (npx asks before it installs a package: give it -y), or be slow to start: raise -timeout"
	}
	return what, "the server may be slow: raise -timeout"
}

// explainHTTP explains err, an error of a session with the server at
// t.URL, from what rt saw of the HTTP exchanges.
func (t Target) explainHTTP(ctx context.Context, err error, rt *headerRoundTripper) *ConnectError {
	e := &ConnectError{Err: err}
	status, method, path, authenticate, netErr := rt.last()
	if ctx.Err() != nil {
		e.What, e.Hint = t.timedOut(ctx, err)
		if status != 0 {
			e.What += fmt.Sprintf("; its last HTTP answer was %d %s", status, http.StatusText(status))
		}
		return e
	}
	if netErr != nil {
		explainNetError(e, netErr, t.URL)
		if e.What != "" {
			return e
		}
	}
	switch {
	case status == http.StatusUnauthorized:
		e.What = "the server answered 401 Unauthorized: it wants credentials"
		if t.Header.Get("Authorization") != "" {
			e.Hint = "it refused the Authorization header given: check that the token is valid, and for this server"
		} else {
			e.Hint = `give them with -header "Authorization: Bearer TOKEN"`
		}
		if authenticate != "" {
			e.Hint += fmt.Sprintf(" (its WWW-Authenticate header: %s)", printable(cut(authenticate, 300)))
		}
	case status == http.StatusForbidden:
		e.What = "the server answered 403 Forbidden"
		e.Hint = "the credentials given may lack the scope needed to list tools"
		if authenticate != "" {
			e.Hint += fmt.Sprintf(" (its WWW-Authenticate header: %s)", printable(cut(authenticate, 300)))
		}
	case status == http.StatusNotFound:
		e.What = fmt.Sprintf("the server answered 404 Not Found to %s %s", method, printable(path))
		e.Hint = "check the path of -url: MCP servers often serve at /mcp"
	case status == http.StatusMethodNotAllowed || status == http.StatusUnsupportedMediaType || status == http.StatusNotAcceptable:
		e.What = fmt.Sprintf("the server answered %d %s to %s %s", status, http.StatusText(status), method, printable(path))
		e.Hint = "this may not be a Streamable HTTP MCP endpoint (the older HTTP+SSE transport is not supported): check -url"
	case status >= 500:
		e.What = fmt.Sprintf("the server answered %d %s", status, http.StatusText(status))
		e.Hint = "it failed: see its logs"
	case status != 0:
		e.What = fmt.Sprintf("the server answered %d %s to %s %s", status, http.StatusText(status), method, printable(path))
	default:
		e.What = printable(err.Error())
	}
	return e
}

// explainNetError sets e's What and Hint from err, an error of the
// network below HTTP, if it is one that can be explained.
func explainNetError(e *ConnectError, err error, rawURL string) {
	var (
		dns      *net.DNSError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
		opErr    *net.OpError
	)
	addr := ""
	if errors.As(err, &opErr) && opErr.Addr != nil {
		addr = opErr.Addr.String()
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		if addr == "" {
			addr = "the address of -url"
		}
		e.What = fmt.Sprintf("nothing is listening at %s (connection refused)", addr)
		e.Hint = "start the server, or check the host and port of -url"
	case errors.As(err, &dns):
		e.What = fmt.Sprintf("cannot find the host %s: %v", printable(dns.Name), dns.Err)
		e.Hint = "check the host name of -url"
	case errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid):
		e.What = fmt.Sprintf("the server's TLS certificate is not trusted: %v", err)
	case errors.As(err, &record):
		e.What = "the server does not speak TLS"
		if strings.HasPrefix(rawURL, "https://") {
			e.Hint = "use http:// rather than https:// in -url"
		}
	case errors.Is(err, syscall.ECONNRESET):
		e.What = "the server closed the connection (connection reset)"
	}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// A ConnectError says why the tools of a server could not be listed, for
// people: what happened, and what to do about it.
type ConnectError struct {
	// What says what happened.
	What string
	// Hint says what to do, or is "" if there is nothing to suggest.
	Hint string
	// Stderr holds the last lines a server run as a command wrote on its
	// standard error, made printable.
	Stderr []string
	// Err is the error beneath, from go-sdk or the system, or nil.
	Err error
}

// Error returns what happened and what to do, and the server's last lines
// on its standard error, each on a line of its own.
func (e *ConnectError) Error() string {
	var b strings.Builder
	b.WriteString(e.What)
	if e.Hint != "" {
		b.WriteString(": ")
		b.WriteString(e.Hint)
	}
	if len(e.Stderr) > 0 {
		b.WriteString("\nits standard error ended with:")
		for _, line := range e.Stderr {
			b.WriteString("\n    ")
			b.WriteString(line)
		}
	}
	return b.String()
}

// Unwrap returns the error beneath.
func (e *ConnectError) Unwrap() error { return e.Err }
