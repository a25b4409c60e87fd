package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpLimits bound what HTTP clients may hold of the server: time and
// sessions. [defaultHTTPLimits] are those of done-server; tests lower them.
type httpLimits struct {
	// readHeader is the most the headers of a request may take to come;
	// read, the most the whole request may take, body included; write,
	// the most one write of an answer may wait for the client to read:
	// see [streamDeadlines] for why /mcp counts it per write rather than
	// for the whole answer. idle is how long a keep-alive connection may
	// wait for its next request.
	readHeader, read, write, idle time.Duration

	// sessionIdle is how long a Streamable HTTP session may go without a
	// request before go-sdk closes it; sessionsPerTree and sessions
	// bound the sessions open at once, per tree of tokens (see
	// [store.Token.Root]) and in all.
	sessionIdle     time.Duration
	sessionsPerTree int
	sessions        int
}

// defaultHTTPLimits are the limits of done-server.
//
// An open session costs memory (its state and the stack of its one
// goroutine: TestSessionMemory measures it), and go-sdk keeps one until
// the client closes it or it is idle for sessionIdle. Clients that go
// away without closing theirs, or an attacker who opens them in a loop,
// would otherwise hold memory without bound (docs/attacks.md says how
// much). So the sessions are capped in all, and no
// token may have more than 32, enough for a person's hosts and windows,
// or agents that share a token, but not for one caller to shut the
// others out.
//
// sessionIdle is 5 minutes: a client that stays longer without a request
// finds its session gone (404), and the MCP specification has it start a
// new one (one initialize); a client that wants to keep a session through
// a long pause sends a ping now and then. An abandoned session then
// holds its place under the caps for 5 minutes at most, not 30.
var defaultHTTPLimits = httpLimits{
	readHeader: 10 * time.Second,
	read:       30 * time.Second,
	write:      30 * time.Second,
	idle:       time.Minute,

	sessionIdle:     5 * time.Minute,
	sessionsPerTree: 32,
	sessions:        1024,
}

// configure sets the timeouts of lim on srv.
func (lim httpLimits) configure(srv *http.Server) {
	srv.ReadHeaderTimeout = lim.readHeader
	srv.ReadTimeout = lim.read
	srv.WriteTimeout = lim.write
	srv.IdleTimeout = lim.idle
}

// streamDeadlines returns next, with the deadlines of the connection set
// for Streamable HTTP, whose answers may last as long as the session: a
// GET holds a stream of server messages open, and the answer to a POST
// may be a stream too.
//
// The server's ReadTimeout bounds the time to read the request: past it,
// net/http's read of the connection in the background fails and cancels
// the request's context, which would end a stream that is working as it
// should. So the read deadline is lifted once the body has been read
// whole (at once for a GET), and a slow body is still cut at ReadTimeout.
//
// The server's WriteTimeout counts from the request's headers to the end
// of the answer, which would cut every stream at 30 seconds. Instead each
// write (and flush) gets write to complete: a client that stops reading
// its stream is let go of within that time, and a stream that carries a
// message now and then lives as long as its session does. A stream with
// nothing to send ends with its session (see httpLimits.sessionIdle).
func streamDeadlines(write time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// Errors mean a ResponseWriter without deadlines (a test's
		// recorder): there is nothing to lift then.
		_ = rc.SetWriteDeadline(time.Time{})
		if r.Body == nil || r.Body == http.NoBody {
			_ = rc.SetReadDeadline(time.Time{})
		} else {
			r.Body = &liftOnEOF{ReadCloser: r.Body, rc: rc}
		}
		next.ServeHTTP(&rollingWriter{ResponseWriter: w, rc: rc, timeout: write}, r)
	})
}

// liftOnEOF is a request body that lifts the connection's read deadline
// once it has been read to its end.
type liftOnEOF struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *liftOnEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// rollingWriter is a ResponseWriter that gives each write and flush its
// own deadline, timeout from when it starts.
type rollingWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (w *rollingWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.ResponseWriter.Write(p)
}

// FlushError flushes what was written; http.ResponseController calls it.
func (w *rollingWriter) FlushError() error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the writer beneath.
func (w *rollingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// codeTooManySessions is the JSON-RPC error code of a request refused
// because it would open a session past a limit. It is in the range
// JSON-RPC leaves to servers, clear of those go-sdk, MCP and mcpeffect
// use.
const codeTooManySessions = -32060

// A sessionLimiter bounds the Streamable HTTP sessions of a server: per
// tree of tokens (those that descend from one token of the command line,
// that token included, see [store.Token.Root]) and in all. Per tree, not
// per token: a token may mint others, and a bound for each would be
// multiplied by as many, up to the server's whole limit.
//
// go-sdk opens a session for a POST without an Mcp-Session-Id header (an
// initialize) and gives its id in that header of the answer; it closes a
// session on DELETE, when it has been idle for the handler's
// SessionTimeout, or when its initialize fails, and then drops it from
// [mcp.Server.Sessions]. The limiter counts, for each tree, the sessions
// it let open whose ids are still among the server's, and those being
// opened, so that concurrent initializes cannot pass a limit together.
type sessionLimiter struct {
	server  *mcp.Server
	perTree int
	total   int
	idle    time.Duration

	mu      sync.Mutex
	owners  map[string]string // session id -> root token id
	opening map[string]int    // root token id -> sessions being opened
}

func newSessionLimiter(server *mcp.Server, lim httpLimits) *sessionLimiter {
	return &sessionLimiter{
		server:  server,
		perTree: lim.sessionsPerTree,
		total:   lim.sessions,
		idle:    lim.sessionIdle,
		owners:  map[string]string{},
		opening: map[string]int{},
	}
}

// wrap returns next with sessions bounded: a request that would open a
// session past a limit is answered 429 (the token's limit) or 503 (the
// server's), with a JSON-RPC error that says which limit, and what to do.
//
// Only an initialize opens a session that lasts. go-sdk connects a
// session for any POST without an Mcp-Session-Id, but closes it at the
// end of the request unless an initialize went through: a
// server/discover (which go-sdk's client sends before each initialize), a
// ping or a stray call lives no longer than its request, and is not
// counted, nor refused. Counting them made clients that connect together
// refuse one another below the limit, each one's discover holding a place
// that its own initialize, or another's, then lacked.
func (l *sessionLimiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		var token string // the root of the caller's tree
		if k, ok := tokenFromInfo(auth.TokenInfoFromContext(r.Context())); ok {
			token = cmp.Or(k.Root, k.ID)
		}
		reserved := opensSession(r)
		if reserved {
			if status, msg := l.reserve(token); status != 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(l.idle.Seconds())))
				writeJSONRPCError(w, r, status, codeTooManySessions, msg)
				return
			}
		}
		// Deferred, so that a panic below releases the reservation too. A
		// session that go-sdk gives an id is counted whether or not it was
		// reserved: should go-sdk ever keep one that opensSession took for
		// none, it still counts against its token from then on.
		defer func() { l.opened(token, reserved, w.Header().Get("Mcp-Session-Id")) }()
		next.ServeHTTP(w, r)
	})
}

// maxPeek is the most of a body [opensSession] reads to find an
// initialize: one is a few hundred bytes, and a longer body is taken to
// open a session rather than read whole twice.
const maxPeek = 64 << 10

// opensSession reports whether r, a POST without a session id, may open
// a session: whether its body holds an initialize, or cannot be read as
// JSON-RPC the way go-sdk reads it (jsonrpc.DecodeMessage, for one message
// or each of a batch), or is longer than maxPeek. Only a body known to
// hold no initialize is let through uncounted. r.Body is left to be read
// again from its start.
func opensSession(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false // go-sdk refuses a POST without a body
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || len(head) > maxPeek {
		return true
	}
	msgs := []json.RawMessage{head}
	if trimmed := bytes.TrimLeft(head, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(head, &msgs) != nil {
			return true
		}
	}
	for _, raw := range msgs {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return true
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
			return true
		}
	}
	return false
}

// reserve counts a session about to be opened for token, or returns the
// HTTP status and message of the refusal if it would pass a limit.
func (l *sessionLimiter) reserve(token string) (status int, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	live := map[string]bool{}
	for ss := range l.server.Sessions() {
		live[ss.ID()] = true
	}
	mine, all := l.opening[token], 0
	for _, n := range l.opening {
		all += n
	}
	for id, owner := range l.owners {
		if !live[id] {
			delete(l.owners, id)
			continue
		}
		all++
		if owner == token {
			mine++
		}
	}
	switch {
	case mine >= l.perTree:
		return http.StatusTooManyRequests, fmt.Sprintf("done: this token, with those minted from the same command-line token, already has %d MCP sessions open, the most they may have: "+
			"close those you no longer use (HTTP DELETE %s with their Mcp-Session-Id), or wait for an idle one to expire (after %v without a request)",
			mine, mcpPath, l.idle)
	case all >= l.total:
		return http.StatusServiceUnavailable, fmt.Sprintf("done: the server has %d MCP sessions open, the most it keeps: "+
			"try again later (an idle session expires after %v without a request)", all, l.idle)
	}
	l.opening[token]++
	return 0, ""
}

// opened ends the opening of a session for token, reserved or not: id is
// the session's id, or "" if none was opened.
func (l *sessionLimiter) opened(token string, reserved bool, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if reserved {
		if l.opening[token]--; l.opening[token] <= 0 {
			delete(l.opening, token)
		}
	}
	if id != "" {
		// A session closed already (its initialize failed) is dropped by
		// the next reserve.
		l.owners[id] = token
	}
}

// writeJSONRPCError answers r with status and a JSON-RPC error of code
// and message, with the id of the request when its body is one request
// that has one (and null otherwise, as JSON-RPC has it).
func writeJSONRPCError(w http.ResponseWriter, r *http.Request, status int, code int64, message string) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if r.Body != nil {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		_ = json.Unmarshal(body, &req)
	}
	id := req.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	out, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: code, Message: message}})
	if err != nil {
		// Only an id that is not JSON could fail: the body was not.
		out, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": &jsonrpc.Error{Code: code, Message: message}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(out)
}
