package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// mcp-go answers every error that a tool, resource or prompt handler
// returns with a JSON-RPC internal error whose message is the error's
// text, and without data: a handler cannot choose the code. A refusal
// must reach the client as the go-sdk integration sends it, with the code
// mcpeffect.CodeDenied and the DeniedError as data, so that
// mcpeffect.AsDeniedError reads it back. So the adapter rewrites it on
// the way out: the check that refuses records the error it means to send
// under its message, in a refusals value that the transport's wrapper
// ([Listen], [Handler]) put on the context of the connection or of the
// HTTP request, and the wrapper's writer replaces the internal error that
// carries that message with the recorded one. A message that was not
// recorded, or a server served without the wrappers, goes out as mcp-go
// wrote it: a refusal is still a refusal, with the same message, but with
// the code of an internal error and no data.

// A rpcError is a JSON-RPC error as it goes on the wire.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e rpcError) jsonrpc() *jsonrpc.Error {
	return &jsonrpc.Error{Code: int64(e.Code), Message: e.Message, Data: e.Data}
}

// A refusal is the error that a check returns to mcp-go for a refused
// request: its text is the message of the JSON-RPC error, and wire is
// the error to send in its place.
type refusal struct {
	wire rpcError
	// cause is the error the refusal stands for, such as a
	// *mcpeffect.DeniedError, for errors.As on the server (in hooks).
	cause error
}

func (r *refusal) Error() string { return r.wire.Message }
func (r *refusal) Unwrap() error { return r.cause }

// maxPending bounds the refusals a connection or a request holds that
// were not yet written: a response that never goes out (a request
// cancelled after its refusal) must not make the table grow without end.
// Beyond it a refusal goes out as mcp-go writes it.
const maxPending = 1024

// refusals holds the refusals of one connection (stdio) or one HTTP
// request that were decided and not yet written, by message; and the
// results of initialize and server/discover, by request id (in JSON),
// that declare capabilities.tools.idempotency.
type refusals struct {
	mu      sync.Mutex
	pending map[string][]rpcError
	n       int
	declare map[string]bool
	// connection identifies a stdio connection served by Listen, for
	// the idempotency keys of its calls; empty over HTTP.
	connection string
}

// expectDeclare notes that the result of the request id declares the
// idempotency capability.
func (rs *refusals) expectDeclare(id any) {
	raw, err := json.Marshal(id)
	if err != nil {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.declare) >= maxPending {
		return
	}
	if rs.declare == nil {
		rs.declare = map[string]bool{}
	}
	rs.declare[string(raw)] = true
}

func (rs *refusals) declaring() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.declare) > 0
}

// declared returns msg, one JSON-RPC message, with the capability
// declared if it is a result noted by expectDeclare, and whether it is.
func (rs *refusals) declared(msg []byte) ([]byte, bool) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Result == nil {
		return msg, false
	}
	var id any
	if json.Unmarshal(m.ID, &id) != nil {
		return msg, false
	}
	key, _ := json.Marshal(id)
	rs.mu.Lock()
	ok := rs.declare[string(key)]
	delete(rs.declare, string(key))
	rs.mu.Unlock()
	if !ok {
		return msg, false
	}
	m.Result = mcpeffect.DeclareIdempotency(m.Result)
	out, err := json.Marshal(m)
	if err != nil {
		return msg, false
	}
	return out, true
}

type refusalsKey struct{}

func withRefusals(ctx context.Context, rs *refusals) context.Context {
	return context.WithValue(ctx, refusalsKey{}, rs)
}

// record notes that the internal error with r's message is r's refusal,
// when a wrapper put a refusals on ctx.
func record(ctx context.Context, r *refusal) {
	rs, _ := ctx.Value(refusalsKey{}).(*refusals)
	if rs == nil {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.n >= maxPending {
		return
	}
	if rs.pending == nil {
		rs.pending = make(map[string][]rpcError)
	}
	rs.pending[r.wire.Message] = append(rs.pending[r.wire.Message], r.wire)
	rs.n++
}

// take removes and returns the refusal recorded with message, if any.
func (rs *refusals) take(message string) (rpcError, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	q := rs.pending[message]
	if len(q) == 0 {
		return rpcError{}, false
	}
	e := q[0]
	if len(q) == 1 {
		delete(rs.pending, message)
	} else {
		rs.pending[message] = q[1:]
	}
	rs.n--
	return e, true
}

func (rs *refusals) empty() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.n == 0
}

// rewrite returns line, one JSON-RPC message as a transport writes it
// (after an SSE "data: " prefix, if any), with an error whose message was
// recorded replaced by its refusal; any other line as it is. The error is
// an internal error, as mcp-go sends a handler's, or an invalid request,
// as it sends the error of a hook that refuses a request before it is
// handled.
func (rs *refusals) rewrite(line []byte) []byte {
	// Most lines are results and notifications, written while no refusal
	// waits and no capability is to be declared: leave them unread,
	// however long.
	if rs.empty() && !rs.declaring() {
		return line
	}
	prefix, msg := []byte(nil), line
	if rest, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
		prefix, msg = line[:len("data: ")], rest
	} else if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		prefix, msg = line[:len("data:")], rest
	}
	trimmed := bytes.TrimRight(msg, "\r\n")
	if bytes.Contains(trimmed, []byte(`"capabilities"`)) && rs.declaring() {
		if out, ok := rs.declared(trimmed); ok {
			return rejoin(prefix, out, msg[len(trimmed):])
		}
	}
	// Most lines are results and notifications: leave them unparsed.
	if !bytes.Contains(trimmed, []byte(`"error"`)) || rs.empty() {
		return line
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *rpcError       `json:"error"`
	}
	if json.Unmarshal(trimmed, &m) != nil || m.Error == nil || m.Error.Code != mcp.INTERNAL_ERROR && m.Error.Code != mcp.INVALID_REQUEST || len(m.Error.Data) != 0 {
		return line
	}
	wire, ok := rs.take(m.Error.Message)
	if !ok {
		return line
	}
	out, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{m.JSONRPC, m.ID, wire})
	if err != nil {
		return line
	}
	return rejoin(prefix, out, msg[len(trimmed):])
}

// rejoin returns a line of prefix, msg and end, the line's end as it was.
func rejoin(prefix, msg, end []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(prefix) + len(msg) + len(end))
	b.Write(prefix)
	b.Write(msg)
	b.Write(end)
	return b.Bytes()
}

// A lineWriter passes what is written to it on to write, a whole line at
// a time, each line through rs.rewrite. It holds back only the part of a
// line not yet ended.
type lineWriter struct {
	mu    sync.Mutex // mcp-go writes a session's requests beside its responses
	rs    *refusals
	write func([]byte) (int, error)
	buf   []byte
	// passing is set while the rest of an overlong line is passed on as
	// it comes.
	passing bool
}

// maxLine bounds the part of a line that a lineWriter holds back: a
// longer line (a large result) is passed on as it comes, unrewritten,
// since it is no refusal, which is short.
const maxLine = 64 << 10

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if !w.passing && len(w.buf)+len(p) <= maxLine {
				w.buf = append(w.buf, p...)
				return n, nil
			}
			w.passing = true
			if err := w.flushBuffered(); err != nil {
				return 0, err
			}
			if _, err := w.write(p); err != nil {
				return 0, err
			}
			return n, nil
		}
		line := p[:i+1]
		p = p[i+1:]
		if w.passing {
			w.passing = false
			if _, err := w.write(line); err != nil {
				return 0, err
			}
			continue
		}
		if len(w.buf) > 0 {
			line = append(w.buf, line...)
			w.buf = w.buf[:0]
		}
		if _, err := w.write(w.rs.rewrite(line)); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// flushBuffered passes on the part of a line held back, as it is.
func (w *lineWriter) flushBuffered() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.write(w.buf)
	w.buf = w.buf[:0]
	return err
}
