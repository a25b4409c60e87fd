package connect

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits bound what is read from a server, so that a hostile or broken
// one cannot make its client hold memory without bound: each answer is
// refused, whole, once it passes its limit, with a [*LimitError]. With
// the deadline of [Target.Timeout], which bounds the time, they are the
// bounds of every session a [Target] opens.
//
// A field left zero takes its value in [DefaultLimits]; a limit cannot
// be lifted, only raised.
type Limits struct {
	// Message is the most bytes of one message from the server: a line
	// over stdio; over HTTP, one answer, a JSON body or an event stream
	// whole (every event of the stream, and the comments between them).
	Message int64
	// Tools is the most tools that tools/list may list, all pages
	// together.
	Tools int
	// Pages is the most pages of tools/list.
	Pages int
	// Values is the most JSON values of one message, as Message counts
	// its bytes, the name of each member of an object counted as one:
	// bytes alone do not bound what a message holds once decoded.
	Values int
}

// DefaultLimits are the limits of a [Target] whose Limits are zero: far
// above what a server of thousands of tools sends (a tools/list of a
// hundred tools is some hundreds of kilobytes), and far below what would
// strain the machine.
var DefaultLimits = Limits{Message: 16 << 20, Tools: 10_000, Pages: 1_000, Values: 2_000_000}

// withDefaults returns l with each zero field set to its default.
func (l Limits) withDefaults() Limits {
	if l.Message <= 0 {
		l.Message = DefaultLimits.Message
	}
	if l.Tools <= 0 {
		l.Tools = DefaultLimits.Tools
	}
	if l.Pages <= 0 {
		l.Pages = DefaultLimits.Pages
	}
	if l.Values <= 0 {
		l.Values = DefaultLimits.Values
	}
	return l
}

// A Limit names one of [Limits].
type Limit string

// The limits, as a [*LimitError] names them.
const (
	LimitHTTPAnswer Limit = "HTTP answer"
	LimitLine       Limit = "line"
	LimitTools      Limit = "tools"
	LimitPages      Limit = "pages"
	LimitValues     Limit = "values"
)

// A LimitError is what a server sent past one of its [Limits]: nothing
// more of it was read.
type LimitError struct {
	Limit Limit
	Max   int64 // the limit: bytes, tools or pages
}

// Error names the limit and its value.
func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitHTTPAnswer:
		return fmt.Sprintf("the server sent an HTTP answer of more than %s (the limit of one answer)", bytesText(e.Max))
	case LimitLine:
		return fmt.Sprintf("the server sent a line of more than %s (the limit of one message over stdio)", bytesText(e.Max))
	case LimitTools:
		return fmt.Sprintf("the server listed more than %d tools (the limit of tools)", e.Max)
	case LimitValues:
		return fmt.Sprintf("the server sent a message of more than %d JSON values (the limit of one message, once decoded)", e.Max)
	case LimitPages:
		return fmt.Sprintf("the server listed more than %d pages of tools (the limit of pages)", e.Max)
	}
	return fmt.Sprintf("the server went past the limit of %s (%d)", e.Limit, e.Max)
}

// bytesText writes n bytes for people: in MiB or KiB when it is a whole
// number of them.
func bytesText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// A breach keeps the first limit a session's reading went past. The
// reader that finds it fails with it, but go-sdk keeps only the text of
// the errors of its transports, so the error that reaches the caller is
// explained from the breach.
type breach struct {
	mu  sync.Mutex
	err *LimitError
}

func (b *breach) set(e *LimitError) *LimitError {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = e
	}
	return b.err
}

// get returns the limit passed, or nil.
func (b *breach) get() *LimitError {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// A limitedBody is the body of an HTTP answer that fails once it has
// given max bytes and holds more, or holds more than values JSON values.
type limitedBody struct {
	body   io.ReadCloser
	left   int64 // bytes still allowed, plus one to see that there are more
	max    int64
	values int // 0: not counted
	count  ValueCounter
	breach *breach
}

func newLimitedBody(body io.ReadCloser, max int64, values int, b *breach) *limitedBody {
	return &limitedBody{body: body, left: max + 1, max: max, values: values, breach: b}
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, l.breach.set(&LimitError{LimitHTTPAnswer, l.max})
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.body.Read(p)
	l.left -= int64(n)
	if l.left <= 0 {
		// The byte past the limit is not given: the answer is refused
		// whole.
		return n - 1, l.breach.set(&LimitError{LimitHTTPAnswer, l.max})
	}
	if l.values > 0 {
		l.count.Write(p[:n])
		if l.count.Count() > l.values {
			return 0, l.breach.set(&LimitError{LimitValues, int64(l.values)})
		}
	}
	return n, err
}

func (l *limitedBody) Close() error { return l.body.Close() }

// limitAnswer bounds the body of resp, if it has one.
func limitAnswer(resp *http.Response, max int64, values int, b *breach) {
	if resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = newLimitedBody(resp.Body, max, values, b)
	}
}

// A lineTransport speaks newline-delimited JSON-RPC, as the MCP stdio
// transport does (a message holds no line break), over r and w, and
// refuses a line of more than max bytes with a [*LimitError] at the
// byte past it: what it holds of a line is never more than max bytes.
type lineTransport struct {
	r      io.ReadCloser
	w      io.WriteCloser
	max    int64
	values int // the most JSON values of a line; 0: not counted
	breach *breach
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{w: t.w, r: t.r, incoming: make(chan lineMsg), closed: make(chan struct{})}
	go c.read(bufio.NewReaderSize(t.r, 64<<10), t.max, t.values, t.breach)
	return c, nil
}

type lineMsg struct {
	msg jsonrpc.Message
	err error
}

type lineConn struct {
	r io.ReadCloser
	w io.WriteCloser

	writeMu sync.Mutex

	incoming  chan lineMsg
	closeOnce sync.Once
	closed    chan struct{}
}

// read reads the lines of r, each decoded, until r fails or the
// connection is closed.
func (c *lineConn) read(r *bufio.Reader, max int64, values int, b *breach) {
	for {
		line, err := readLine(r, max)
		var m lineMsg
		var count ValueCounter
		count.Write(line)
		switch {
		case errors.As(err, new(*LimitError)):
			m.err = b.set(err.(*LimitError))
		case err != nil && len(line) == 0:
			m.err = err
		case values > 0 && count.Count() > values:
			// Refused before it is decoded: what it would hold decoded
			// is what the limit is for.
			m.err = b.set(&LimitError{LimitValues, int64(values)})
		default:
			m.msg, m.err = jsonrpc.DecodeMessage(line)
			if m.err != nil {
				m.err = fmt.Errorf("the server wrote a line that is not a JSON-RPC message: %w", m.err)
			}
		}
		if len(line) == 0 && m.err == nil {
			continue // a blank line
		}
		select {
		case c.incoming <- m:
		case <-c.closed:
			return
		}
		if m.err != nil {
			return
		}
	}
}

// readLine reads a line of r without its end, failing once it holds more
// than max bytes; at the end of r, the bytes after the last line break
// and the error.
func readLine(r *bufio.Reader, max int64) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		size := int64(len(line) + len(frag))
		if err == nil {
			size-- // the line break
		}
		if size > max {
			return nil, &LimitError{LimitLine, max}
		}
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return trimSpace(line), err
	}
}

// trimSpace trims the line end and the white space around a message.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.incoming:
		return m.msg, m.err
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.w.Write(append(data, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.w.Close()
		c.r.Close()
	})
	return nil
}

func (c *lineConn) SessionID() string { return "" }
