package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Session is a connection to a server that stays open, for a command
// that calls its tools (mcpeffect verify): how the server introduced
// itself, its tools as [List] returns them, and the go-sdk session to call
// them on.
type Session struct {
	Client *mcp.ClientSession
	Server Server
	Tools  []Listed

	p *serverProcess // the server run as a command, or nil
}

// Open connects to the target, lists its tools as [List] does, and leaves
// the session open: end it with [Session.Close]. ctx bounds the opening
// only; t.Timeout is not applied, so that the caller bounds the whole of
// its work. An error is a [*ConnectError].
func (t Target) Open(ctx context.Context) (*Session, error) {
	if len(t.Command) == 0 {
		if t.URL == "" {
			return nil, &ConnectError{What: "no server: give a command or a URL"}
		}
		tr := newHTTPTransport(t.URL, t.Header)
		tr.rt.base = limitBodies{tr.rt.base}
		cs, server, tools, err := listOpen(ctx, tr)
		if err != nil {
			if cs != nil {
				closeSession(ctx, cs)
			}
			return nil, t.explainHTTP(ctx, err, tr.rt)
		}
		return &Session{Client: cs, Server: server, Tools: tools}, nil
	}
	p, err := startProcess(t.Command, t.Env)
	if err != nil {
		return nil, describeStart(t.Command[0], err)
	}
	bounded := &mcp.IOTransport{Reader: &lineLimitReader{r: p.stdout, max: maxAnswer}, Writer: p.stdin}
	cs, server, tools, err := listOpen(ctx, bounded)
	if err == nil {
		return &Session{Client: cs, Server: server, Tools: tools, p: p}, nil
	}
	if cs != nil {
		closeSession(ctx, cs)
	}
	p.stop(ctx)
	e := &ConnectError{Err: err, Stderr: p.stderrTail(ctx)}
	switch exit := p.exit(); {
	case exit != "":
		e.What = fmt.Sprintf("the server stopped (%s) before it %s", exit, stageOf(err).done())
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		e.What = fmt.Sprintf("no answer in time while %s", stageOf(err).doing())
	default:
		e.What = err.Error()
	}
	return nil, e
}

// Stderr returns the last lines a server run as a command wrote on its
// standard error, made printable; nil for a server over HTTP.
func (s *Session) Stderr(ctx context.Context) []string {
	if s.p == nil {
		return nil
	}
	return s.p.stderrTail(ctx)
}

// Close ends the session and, for a server run as a command, stops it as
// [Target.List] does, waiting no longer than ctx allows.
func (s *Session) Close(ctx context.Context) {
	closeSession(ctx, s.Client)
	if s.p != nil {
		s.p.stop(ctx)
	}
}

// maxAnswer bounds one message of a server to a session of [Target.Open]:
// a line over stdio, a response body over HTTP. A tool that answers more
// fails its call, rather than exhausting the memory of the caller.
const maxAnswer = 16 << 20

// A lineLimitReader fails a read once a line (bytes between newlines)
// grows past max, as the newline-delimited JSON of stdio has a message a
// line.
type lineLimitReader struct {
	r    io.ReadCloser
	max  int
	line int // bytes since the last newline
}

func (l *lineLimitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			l.line = 0
			continue
		}
		if l.line++; l.line > l.max {
			return 0, fmt.Errorf("the server wrote a message of more than %d bytes", l.max)
		}
	}
	return n, err
}

func (l *lineLimitReader) Close() error { return l.r.Close() }

// limitBodies caps the body of every response at maxAnswer bytes.
type limitBodies struct{ base http.RoundTripper }

func (l limitBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &limitedBody{ReadCloser: resp.Body, left: maxAnswer}
	}
	return resp, err
}

type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("the server answered more than %d bytes", maxAnswer)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
