package mcpgo

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
)

// Listen serves s over in and out, as [server.StdioServer.Listen] does,
// and sends each refusal as the go-sdk integration of mcpeffect does: a
// JSON-RPC error with the code [mcpeffect.CodeDenied] and the
// [mcpeffect.DeniedError] as data, which [mcpeffect.AsDeniedError] reads
// back on the client. (mcp-go alone would send it as an internal error,
// with the same message and no data.)
//
// Over stdio there is no token: give the connection its scope on ctx
// with [mcpeffect.WithConnectionScope]. Without one, every request has
// the zero Scope, which may call nothing.
//
// It carries the idempotency key of each tools/call from
// params.idempotencyKey, where SEP-3182 puts it and where mcp-go drops
// it, into params._meta, where the options' Idempotency reads it, and
// declares capabilities.tools.idempotency (see
// [mcpeffect.IdempotencyOptions]).
func Listen(ctx context.Context, s *server.StdioServer, in io.Reader, out io.Writer) error {
	rs := &refusals{connection: newConnectionID()}
	return s.Listen(withRefusals(ctx, rs), &carryingReader{r: bufio.NewReader(in)}, &lineWriter{rs: rs, write: out.Write})
}

// newConnectionID returns a random identity for a stdio connection.
func newConnectionID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on the systems Go supports
	}
	return hex.EncodeToString(b)
}

// A carryingReader passes on the lines of r, each JSON-RPC message with
// its idempotency key carried ([mcpeffect.CarryIdempotencyKeys]).
type carryingReader struct {
	r    *bufio.Reader
	line []byte // what is left of the line being read
	err  error  // the error after it
}

func (c *carryingReader) Read(p []byte) (int, error) {
	for len(c.line) == 0 && c.err == nil {
		line, err := c.r.ReadBytes('\n')
		c.err = err
		if len(line) > 0 {
			msg := bytes.TrimRight(line, "\r\n")
			end := line[len(msg):]
			c.line = append(mcpeffect.CarryIdempotencyKeys(msg), end...)
		}
	}
	n := copy(p, c.line)
	c.line = c.line[n:]
	if len(c.line) == 0 && c.err != nil {
		return n, c.err
	}
	return n, nil
}

// ServeStdio serves s over the process's standard input and output with
// [Listen], until ctx is done or the input ends: the way to serve a
// stdio server, as [server.ServeStdio] does without the refusals'
// code and data. Options such as [server.WithStdioContextFunc] apply to
// the [server.StdioServer].
func ServeStdio(ctx context.Context, s *server.MCPServer, opts ...server.StdioOption) error {
	stdio := server.NewStdioServer(s)
	for _, opt := range opts {
		opt(stdio)
	}
	return Listen(ctx, stdio, os.Stdin, os.Stdout)
}

// refusingWriter is the http.ResponseWriter that Handler gives mcp-go:
// it rewrites the refusals of its request's responses, JSON or SSE.
type refusingWriter struct {
	http.ResponseWriter
	lines *lineWriter
}

func (w *refusingWriter) Write(p []byte) (int, error) { return w.lines.Write(p) }

// Flush passes on what is written whole, and flushes it: mcp-go streams
// SSE only through a writer that can flush.
func (w *refusingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath, for
// mcp-go's write deadlines.
func (w *refusingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// refusing returns h, which serves MCP with mcp-go, with the refusals
// of each request rewritten as Listen rewrites them; with idem, the
// idempotency key of each tools/call carried, from a body read whole up
// to its MaxBodyBytes.
func refusing(h http.Handler, idem *mcpeffect.IdempotencyOptions) http.Handler {
	limit := int64(mcpeffect.DefaultMaxIdempotencyBodyBytes)
	if idem != nil && idem.MaxBodyBytes > 0 {
		limit = idem.MaxBodyBytes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if idem != nil && req.Method == http.MethodPost && req.Body != nil && !carryBody(w, req, limit) {
			return
		}
		rs := new(refusals)
		rw := &refusingWriter{ResponseWriter: w}
		rw.lines = &lineWriter{rs: rs, write: w.Write}
		h.ServeHTTP(rw, req.WithContext(withRefusals(req.Context(), rs)))
		// A response mcp-go left without its line's end (none does) is
		// passed on as it is.
		rw.lines.mu.Lock()
		defer rw.lines.mu.Unlock()
		_ = rw.lines.flushBuffered()
	})
}

// Handler returns h, an mcp-go Streamable HTTP server
// ([server.NewStreamableHTTPServer]) or any handler in front of one, such
// that each refusal of [ServerOptions] reaches the client as
// [mcpeffect.CodeDenied] with the [mcpeffect.DeniedError] as data, in a
// JSON response or an SSE stream, as [Listen] does over stdio. With
// opts.Challenge, a refused request is answered earlier still, before
// mcp-go reads it, with the step-up challenge of the MCP authorization
// specification (403 and WWW-Authenticate: Bearer
// error="insufficient_scope"), decided by the same configuration: give
// Handler the opts given to ServerOptions. The challenge is an early
// answer only; the check of ServerOptions stays the authoritative one.
//
// Place it inside go-sdk's [auth.RequireBearerToken], whose
// [auth.TokenInfo] reaches the handlers through the request's context:
//
//	h := mcpgo.Handler(r, opts, server.NewStreamableHTTPServer(s))
//	http.Handle("/mcp", auth.RequireBearerToken(verify, nil)(h))
//
// With the options' Idempotency, it carries the idempotency key of each
// tools/call into params._meta and declares the capability, as [Listen]
// does, reading each POST body whole, up to its MaxBodyBytes, and
// answering a longer one 413.
//
// A response that mcp-go keeps in an event store
// ([server.WithEventStore]) and replays on a resumed stream is replayed
// as mcp-go stored it, with the refusal as an internal error.
//
// [auth.RequireBearerToken]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#RequireBearerToken
// [auth.TokenInfo]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#TokenInfo
func Handler(r *mcpeffect.Registry, opts *Options, h http.Handler) http.Handler {
	var idem *mcpeffect.IdempotencyOptions
	if opts != nil {
		idem = opts.Idempotency
	}
	h = refusing(h, idem)
	if opts != nil && opts.Challenge != nil {
		h = opts.enforcer(r).Challenge(opts.Challenge)(h)
	}
	return h
}

// carryBody replaces the body of req, a POST, with the same messages,
// their idempotency keys carried; it answers 413 to a body longer than
// limit, whose key it could not carry, and reports whether req goes on.
func carryBody(w http.ResponseWriter, req *http.Request, limit int64) bool {
	if req.ContentLength > limit {
		http.Error(w, fmt.Sprintf("the request body is %d bytes; at most %d are read", req.ContentLength, limit), http.StatusRequestEntityTooLarge)
		return false
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	req.Body.Close()
	switch {
	case err != nil:
		http.Error(w, "the request body could not be read: "+err.Error(), http.StatusBadRequest)
		return false
	case int64(len(body)) > limit:
		http.Error(w, fmt.Sprintf("the request body is longer than %d bytes, the most that is read", limit), http.StatusRequestEntityTooLarge)
		return false
	}
	body = mcpeffect.CarryIdempotencyKeys(body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return true
}
