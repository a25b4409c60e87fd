package audit

import (
	"context"
	"errors"
	"fmt"

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
	cs, server, tools, err := listOpen(ctx, p.transport())
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
