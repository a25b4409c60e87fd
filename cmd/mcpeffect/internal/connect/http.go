package connect

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPTransport returns a transport to the Streamable HTTP endpoint at url
// whose requests all carry header, such as an Authorization header with a
// bearer token. A nil header adds nothing. Each answer it reads is bounded
// by the Message of [DefaultLimits].
//
// The connection it makes sends the Mcp-Protocol-Version header itself once
// the session is initialized, as the MCP specification requires: go-sdk's
// own transport does so only when its connection reaches the client
// unwrapped, and [List] wraps it.
func HTTPTransport(url string, header http.Header) mcp.Transport {
	return newHTTPTransport(url, header)
}

func newHTTPTransport(url string, header http.Header) *httpTransport {
	rt := &headerRoundTripper{base: http.DefaultTransport, header: header.Clone(), limit: DefaultLimits.Message, values: DefaultLimits.Values, breach: &breach{}}
	return &httpTransport{url: url, rt: rt, maxEvent: DefaultLimits.Message}
}

type httpTransport struct {
	url      string
	rt       *headerRoundTripper
	maxEvent int64 // bytes of one event of a stream; 0: go-sdk's default
}

// protocolVersionHeader is the header of the MCP Streamable HTTP transport
// that names the protocol version of the session.
const protocolVersionHeader = "Mcp-Protocol-Version"

func (t *httpTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	rt := t.rt
	st := &mcp.StreamableClientTransport{
		Endpoint:   t.url,
		HTTPClient: &http.Client{Transport: rt},
		// An audit only asks and reads the answers: it needs no stream
		// for messages the server starts.
		DisableStandaloneSSE: true,
		MaxEventSize:         int(t.maxEvent),
	}
	conn, err := st.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &versionConn{Connection: conn, rt: rt}, nil
}

// A headerRoundTripper adds its headers to every request, and the protocol
// version once it is known, unless the request already names one. It
// remembers the last failure it saw, to explain the errors of go-sdk,
// which keep only the status text.
type headerRoundTripper struct {
	base   http.RoundTripper
	header http.Header

	// limit bounds the body of every answer, and values the JSON values
	// it holds, which then fails with a *LimitError kept in breach; 0
	// leaves it unbounded.
	limit  int64
	values int
	breach *breach

	mu      sync.Mutex
	version string
	failure httpFailure
}

// An httpFailure is an HTTP exchange that failed: an answer that is not a
// success, or an error below HTTP.
type httpFailure struct {
	status       int
	method, path string
	authenticate string // the WWW-Authenticate header of the answer
	err          error
}

// last returns the failure of the last exchange, or zero values if it
// succeeded.
func (rt *headerRoundTripper) last() (status int, method, path, authenticate string, err error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	f := rt.failure
	return f.status, f.method, f.path, f.authenticate, f.err
}

func (rt *headerRoundTripper) setVersion(v string) {
	rt.mu.Lock()
	rt.version = v
	rt.mu.Unlock()
}

func (rt *headerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	version := rt.version
	rt.mu.Unlock()
	// A RoundTripper must not change the request it is given.
	req = req.Clone(req.Context())
	for k, v := range rt.header {
		req.Header[k] = v
	}
	if version != "" && req.Header.Get(protocolVersionHeader) == "" {
		req.Header.Set(protocolVersionHeader, version)
	}
	resp, err := rt.base.RoundTrip(req)
	if err == nil && rt.limit > 0 {
		// go-sdk reads a JSON answer whole before it decodes it, and the
		// body of a refusal too.
		limitAnswer(resp, rt.limit, rt.values, rt.breach)
	}
	switch {
	case err == nil && resp.StatusCode >= 200 && resp.StatusCode <= 299:
		rt.record(httpFailure{})
	case err != nil && req.Context().Err() == nil:
		rt.record(httpFailure{method: req.Method, path: req.URL.Path, err: err})
	case err == nil:
		rt.record(httpFailure{
			status:       resp.StatusCode,
			method:       req.Method,
			path:         req.URL.Path,
			authenticate: resp.Header.Get("WWW-Authenticate"),
		})
	}
	return resp, err
}

func (rt *headerRoundTripper) record(f httpFailure) {
	rt.mu.Lock()
	rt.failure = f
	rt.mu.Unlock()
}

// A versionConn watches the initialize exchange to tell its round tripper
// the protocol version the server chose.
type versionConn struct {
	mcp.Connection
	rt *headerRoundTripper

	mu         sync.Mutex
	initialize jsonrpc.ID // id of the initialize request, once sent
}

func (c *versionConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "initialize" {
		c.mu.Lock()
		c.initialize = req.ID
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *versionConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil && resp.Error == nil {
		c.mu.Lock()
		mine := c.initialize.IsValid() && resp.ID == c.initialize
		c.mu.Unlock()
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if mine && json.Unmarshal(resp.Result, &res) == nil {
			c.rt.setVersion(res.ProtocolVersion)
		}
	}
	return msg, err
}
