package connect

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Session is an MCP session with a [Target], opened by [Target.Connect]:
// every message it reads is bounded by the target's Limits, and all it
// does, from Connect to Close, by the target's Timeout. Its errors are
// [*ConnectError] values, which say what happened and what to do. It is
// safe for concurrent use, as an [mcp.ClientSession] is.
type Session struct {
	target   Target
	deadline time.Time // zero: none
	limits   Limits
	cs       *mcp.ClientSession
	rec      *recordingTransport
	server   Server
	breach   *breach
	proc     *serverProcess      // a server run as a command, or nil
	rt       *headerRoundTripper // over HTTP, or nil
}

// Connect starts or reaches the server of t and opens a session with it.
// Close the session to end it, and stop a server run as a command: a
// Session that is not closed leaves it running.
func (t Target) Connect(ctx context.Context) (*Session, error) {
	s := &Session{target: t, limits: t.Limits.withDefaults(), breach: &breach{}}
	if t.Timeout > 0 {
		s.deadline = time.Now().Add(t.Timeout)
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var tr mcp.Transport
	switch {
	case len(t.Command) > 0:
		t.tell("starting the server")
		p, err := startProcess(t.Command, t.Env)
		if err != nil {
			return nil, describeStart(t.Command[0], err)
		}
		s.proc = p
		tr = &lineTransport{r: p.stdout, w: p.stdin, max: s.limits.Message, values: s.limits.Values, breach: s.breach}
	case t.URL != "":
		h := newHTTPTransport(t.URL, t.Header)
		h.rt.limit, h.rt.values, h.rt.breach = s.limits.Message, s.limits.Values, s.breach
		h.maxEvent = s.limits.Message
		s.rt, tr = h.rt, h
	default:
		return nil, &ConnectError{What: "no server: give a command or a URL"}
	}
	s.rec = &recordingTransport{Transport: tr}
	t.tell("initializing the session")
	cs, server, err := connect(ctx, s.rec, t.Confirm)
	if err != nil {
		s.stop(ctx)
		return nil, s.explainIn(ctx, err)
	}
	s.cs, s.server = cs, server
	return s, nil
}

// bound returns ctx, done at the session's deadline too.
func (s *Session) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, s.deadline)
}

// Stderr returns the last lines a server run as a command wrote on its
// standard error, made printable; nil for a server over HTTP.
func (s *Session) Stderr(ctx context.Context) []string {
	if s.proc == nil {
		return nil
	}
	return s.proc.stderrTail(ctx)
}

// Server returns how the server introduced itself.
func (s *Session) Server() Server { return s.server }

// ClientSession returns the go-sdk session, for calls that Session does
// not make itself. Give its calls a context bounded by [Session.Bound],
// and explain their errors with [Session.Explain].
func (s *Session) ClientSession() *mcp.ClientSession { return s.cs }

// Bound returns ctx, done at the session's deadline too, and the function
// that releases it.
func (s *Session) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return s.bound(ctx)
}

// ListTools lists every tool of the server, as [List] does, within the
// target's limits.
func (s *Session) ListTools(ctx context.Context) ([]Listed, error) {
	tools, err := s.listTools(ctx)
	if err != nil {
		return nil, s.Explain(ctx, err)
	}
	return tools, nil
}

func (s *Session) listTools(ctx context.Context) ([]Listed, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	return listTools(ctx, s.cs, s.rec, s.limits, s.target.tell)
}

// CallTool calls a tool, as [mcp.ClientSession.CallTool] does, within the
// target's limits and deadline. A tool that fails answers a result with
// IsError, not an error: an error is the session's.
func (s *Session) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	res, err := s.cs.CallTool(ctx, params)
	if err != nil {
		return nil, s.explainIn(ctx, &stageError{stageCall, err})
	}
	return res, nil
}

// Close ends the session and stops a server run as a command, as
// [Target.List] does, no later than the deadline.
func (s *Session) Close() error {
	ctx, cancel := s.bound(context.Background())
	defer cancel()
	if s.cs != nil {
		closeSession(ctx, s.cs)
	}
	s.stop(ctx)
	return nil
}

func (s *Session) stop(ctx context.Context) {
	if s.proc != nil {
		s.proc.stop(ctx)
	}
}

// Explain returns err, an error of a call made on the session with ctx,
// as a [*ConnectError] that says what happened: a limit passed, an error
// the server answered (its message escaped), an answer that breaks the
// protocol, the deadline, a server that stopped. An error that already is
// one is returned as it is.
func (s *Session) Explain(ctx context.Context, err error) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	return s.explainIn(ctx, err)
}

func (s *Session) explainIn(ctx context.Context, err error) *ConnectError {
	var ce *ConnectError
	if errors.As(err, &ce) {
		return ce
	}
	e := &ConnectError{Err: err}
	if s.proc != nil {
		e.Stderr = s.proc.stderrTail(ctx)
	}
	var (
		limit *LimitError
		proto *ProtocolError
	)
	st := stageOf(err)
	method, wire := s.rec.takeAnsweredError()
	switch {
	case s.breach.get() != nil:
		e.What = fmt.Sprintf("%v while %s", s.breach.get(), st.doing())
		e.Hint = "nothing more of it was read: the server is broken, or hostile"
		return e
	case errors.As(err, &limit):
		e.What = fmt.Sprintf("%v while %s", limit, st.doing())
		return e
	case wire != nil && method == st.method():
		e.What = fmt.Sprintf("the server answered %s with an error (code %d): %s", method, wire.Code, strconv.Quote(cut(wire.Message, 500)))
		return e
	case errors.As(err, &proto):
		e.What = proto.What
		return e
	}
	if s.rt != nil {
		h := s.target.explainHTTP(ctx, err, s.rt)
		h.Stderr = e.Stderr
		return h
	}
	exit := s.proc.exit()
	switch {
	case exit != "":
		e.What = fmt.Sprintf("the server stopped (%s) before it %s", exit, st.done())
		if len(e.Stderr) == 0 {
			e.Hint = "it wrote nothing on its standard error: run it by hand to see why"
		}
	case ctx.Err() != nil:
		e.What, e.Hint = s.target.timedOut(ctx, err)
		if len(e.Stderr) > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			e.Hint += "; its standard error may tell"
		}
	default:
		e.What = printable(err.Error())
	}
	return e
}
