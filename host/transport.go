package host

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What go-sdk's client cannot carry of two drafts, carried on the wire
// instead: go-sdk's CallToolParams has no idempotencyKey (SEP-3182), its
// ServerCapabilities no tools.idempotency, and its ToolAnnotations no
// recovery (SEP-3172). A [Transport] (stdio, in memory, a command) or a
// [RoundTripper] (Streamable HTTP) under a go-sdk client:
//
//   - sends the key a call sets with [WithIdempotencyKey] (in its _meta,
//     under [mcpeffect.IdempotencyKeyMetaKey], where go-sdk keeps it) in
//     the call's params.idempotencyKey, where the draft puts it;
//   - reports whether the server declared capabilities.tools.idempotency
//     (IdempotencyAdvertised), which a client should check before it
//     relies on keys;
//   - copies the annotations.recovery of each listed tool into its _meta
//     under [mcpeffect.RecoveryMetaKey], where [RecoveryOf] reads it.

// WithIdempotencyKey returns a copy of params whose call carries key, an
// idempotency key (SEP-3182): a new one for each new call, the same one
// for a retry of a call whose answer was lost (see [NewIdempotencyKey]).
// A go-sdk client sends it in the call's _meta, under
// [mcpeffect.IdempotencyKeyMetaKey], which a server built with mcpeffect
// reads; a client whose transport is a [Transport] or whose HTTP client's
// is a [RoundTripper] sends it where the draft puts it, which any server
// that implements the draft reads.
func WithIdempotencyKey(params *mcp.CallToolParams, key string) *mcp.CallToolParams {
	p := mcp.CallToolParams{}
	if params != nil {
		p = *params
	}
	meta := mcp.Meta{}
	for k, v := range p.Meta {
		meta[k] = v
	}
	meta[mcpeffect.IdempotencyKeyMetaKey] = key
	p.Meta = meta
	return &p
}

// NewIdempotencyKey returns a new idempotency key: 128 random bits in
// hexadecimal, as the draft asks (a key that cannot collide by chance
// with another call's).
func NewIdempotencyKey() string {
	return newKey()
}

// A Transport is the transport of a go-sdk client, stdio, in memory or a
// command, with what go-sdk's client cannot carry of SEP-3182 and
// SEP-3172 carried on the wire (see [WithIdempotencyKey], [RecoveryOf]).
// Make one with [NewTransport] for each connection, as a transport is
// connected once.
//
// It hides from go-sdk the methods its own connections have beyond
// [mcp.Connection], which are unexported: do not wrap a
// [mcp.StreamableClientTransport] (its connection needs them, to send
// the protocol version it negotiated); give its HTTP client a
// [RoundTripper] instead.
type Transport struct {
	inner mcp.Transport
	seen  seen
}

// NewTransport returns t with the drafts carried.
func NewTransport(t mcp.Transport) *Transport { return &Transport{inner: t} }

// Connect implements [mcp.Transport].
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &carryingConn{Connection: conn, seen: &t.seen}, nil
}

// IdempotencyAdvertised reports whether the server declared
// capabilities.tools.idempotency when the session began: it honors keys.
func (t *Transport) IdempotencyAdvertised() bool { return t.seen.advertised.Load() }

// seen is what a Transport or a RoundTripper learned of the server, and
// the requests whose answers it reads.
type seen struct {
	advertised atomic.Bool
	mu         sync.Mutex
	pending    map[jsonrpc.ID]string // request to method
}

func (s *seen) expect(id jsonrpc.ID, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[jsonrpc.ID]string{}
	}
	s.pending[id] = method
}

func (s *seen) answered(id jsonrpc.ID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.pending[id]
	delete(s.pending, id)
	return m
}

// read returns result, the result of a request of method, as the client
// should see it.
func (s *seen) read(method string, result json.RawMessage) json.RawMessage {
	switch method {
	case "initialize", "server/discover":
		if DeclaresIdempotency(result) {
			s.advertised.Store(true)
		}
	case "tools/list":
		return copyRecoveries(result)
	}
	return result
}

// watched reports whether the answer of a request of method is read.
func watched(method string) bool {
	return method == "initialize" || method == "server/discover" || method == "tools/list"
}

type carryingConn struct {
	mcp.Connection
	seen *seen
}

func (c *carryingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok {
		if req.Method == "tools/call" {
			if p, changed := sendKey(req.Params); changed {
				out := *req
				out.Params = p
				msg = &out
			}
		} else if watched(req.Method) && req.IsCall() {
			c.seen.expect(req.ID, req.Method)
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *carryingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil && resp.Error == nil {
		if m := c.seen.answered(resp.ID); m != "" {
			resp.Result = c.seen.read(m, resp.Result)
		}
	}
	return msg, err
}

// sendKey returns params, those of a tools/call, with a key set in
// _meta under IdempotencyKeyMetaKey moved into params.idempotencyKey.
func sendKey(params json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(params, []byte(mcpeffect.IdempotencyKeyMetaKey)) {
		return params, false
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params, false
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(p["_meta"], &meta) != nil {
		return params, false
	}
	key, ok := meta[mcpeffect.IdempotencyKeyMetaKey]
	if !ok {
		return params, false
	}
	delete(meta, mcpeffect.IdempotencyKeyMetaKey)
	if len(meta) == 0 {
		delete(p, "_meta")
	} else {
		raw, err := json.Marshal(meta)
		if err != nil {
			return params, false
		}
		p["_meta"] = raw
	}
	p[mcpeffect.IdempotencyKeyParam] = key
	out, err := json.Marshal(p)
	if err != nil {
		return params, false
	}
	return out, true
}

// DeclaresIdempotency reports whether result, the JSON result of
// initialize or server/discover, declares capabilities.tools.idempotency
// (SEP-3182), with any value but null (the draft's value is {}). go-sdk
// decodes the capabilities into a struct that has no such member, so it
// is read from the answer as received: a [Transport] or [RoundTripper]
// does so itself; a host with a transport of its own calls this.
func DeclaresIdempotency(result json.RawMessage) bool {
	var r struct {
		Capabilities struct {
			Tools map[string]json.RawMessage `json:"tools"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) != nil {
		return false
	}
	v, ok := r.Capabilities.Tools[mcpeffect.IdempotencyCapability]
	return ok && !isAbsent(v)
}

// copyRecoveries returns result, that of tools/list, with the
// annotations.recovery of each tool copied into its _meta, under
// RecoveryMetaKey, where it has none there.
func copyRecoveries(result json.RawMessage) json.RawMessage {
	if !bytes.Contains(result, []byte(`"`+mcpeffect.RecoveryAnnotation+`"`)) {
		return result
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return result
	}
	var tools []map[string]json.RawMessage
	if json.Unmarshal(r["tools"], &tools) != nil {
		return result
	}
	changed := false
	for _, t := range tools {
		var ann map[string]json.RawMessage
		if json.Unmarshal(t["annotations"], &ann) != nil || isAbsent(ann[mcpeffect.RecoveryAnnotation]) {
			continue
		}
		var meta map[string]json.RawMessage
		if !isAbsent(t["_meta"]) && (json.Unmarshal(t["_meta"], &meta) != nil || meta == nil) {
			continue
		}
		if meta == nil {
			meta = map[string]json.RawMessage{}
		}
		if _, ok := meta[mcpeffect.RecoveryMetaKey]; ok {
			continue
		}
		meta[mcpeffect.RecoveryMetaKey] = ann[mcpeffect.RecoveryAnnotation]
		raw, err := json.Marshal(meta)
		if err != nil {
			continue
		}
		t["_meta"] = raw
		changed = true
	}
	if !changed {
		return result
	}
	raw, err := json.Marshal(tools)
	if err != nil {
		return result
	}
	r["tools"] = raw
	out, err := json.Marshal(r)
	if err != nil {
		return result
	}
	return out
}

// A RoundTripper is the [http.RoundTripper] of the HTTP client of a
// go-sdk [mcp.StreamableClientTransport], with what go-sdk's client
// cannot carry of SEP-3182 and SEP-3172 carried on the wire, as a
// [Transport] carries it over other transports:
//
//	rt := &host.RoundTripper{Base: http.DefaultTransport}
//	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}}
//
// It rewrites the body of each POST that holds a tools/call with a key,
// and reads whole the answers to initialize, server/discover and
// tools/list (up to 32 MiB, beyond which an answer goes on unread). A
// RoundTripper is safe for concurrent use; use one for each session, as
// IdempotencyAdvertised is the last server's word.
type RoundTripper struct {
	// Base makes the requests; nil means [http.DefaultTransport].
	Base http.RoundTripper
	seen seen
}

// maxAnswer bounds the answer a RoundTripper reads whole.
const maxAnswer = 32 << 20

// IdempotencyAdvertised reports whether the server declared
// capabilities.tools.idempotency in its last answer to initialize or
// server/discover.
func (rt *RoundTripper) IdempotencyAdvertised() bool { return rt.seen.advertised.Load() }

// RoundTrip implements [http.RoundTripper].
func (rt *RoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	base := rt.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if req.Method != http.MethodPost || req.Body == nil {
		return base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	msgs, batch := splitMessages(body)
	watch := map[string]string{} // request id (JSON) to method
	changed := false
	for i, m := range msgs {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(m, &r) != nil {
			continue
		}
		switch {
		case r.Method == "tools/call":
			p, ok := sendKey(r.Params)
			if !ok {
				continue
			}
			var whole map[string]json.RawMessage
			if json.Unmarshal(m, &whole) != nil {
				continue
			}
			whole["params"] = p
			if out, err := json.Marshal(whole); err == nil {
				msgs[i], changed = out, true
			}
		case watched(r.Method) && len(r.ID) > 0:
			watch[string(bytes.TrimSpace(r.ID))] = r.Method
		}
	}
	if changed {
		body = joinMessages(msgs, batch)
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := base.RoundTrip(out)
	if err != nil || len(watch) == 0 || resp.StatusCode/100 != 2 {
		return resp, err
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil || len(answer) > maxAnswer {
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(answer), resp.Body), resp.Body}
		return resp, nil
	}
	resp.Body.Close()
	answer = rt.readAnswer(resp.Header.Get("Content-Type"), answer, watch)
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	resp.ContentLength = int64(len(answer))
	resp.Header.Del("Content-Length")
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// readAnswer returns answer, the body of the answer to a POST whose
// requests watch holds, JSON or an SSE stream, with each response to one
// of them read (seen.read).
func (rt *RoundTripper) readAnswer(contentType string, answer []byte, watch map[string]string) []byte {
	one := func(msg []byte) []byte {
		var r map[string]json.RawMessage
		if json.Unmarshal(msg, &r) != nil {
			return msg
		}
		m := watch[string(bytes.TrimSpace(r["id"]))]
		if m == "" || r["result"] == nil {
			return msg
		}
		res := rt.seen.read(m, r["result"])
		if bytes.Equal(res, r["result"]) {
			return msg
		}
		r["result"] = res
		out, err := json.Marshal(r)
		if err != nil {
			return msg
		}
		return out
	}
	if !strings.HasPrefix(contentType, "text/event-stream") {
		msgs, batch := splitMessages(answer)
		for i := range msgs {
			msgs[i] = one(msgs[i])
		}
		return joinMessages(msgs, batch)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(answer))
	sc.Buffer(make([]byte, 64<<10), maxAnswer+1)
	for sc.Scan() {
		line := sc.Bytes()
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			out.WriteString("data: ")
			out.Write(one(bytes.TrimSpace(data)))
		} else {
			out.Write(line)
		}
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// splitMessages returns the messages of body, one JSON-RPC message or a
// batch, and whether it is a batch.
func splitMessages(body []byte) ([][]byte, bool) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return [][]byte{body}, false
	}
	var raw []json.RawMessage
	if json.Unmarshal(trimmed, &raw) != nil {
		return [][]byte{body}, false
	}
	msgs := make([][]byte, len(raw))
	for i, m := range raw {
		msgs[i] = m
	}
	return msgs, true
}

func joinMessages(msgs [][]byte, batch bool) []byte {
	if !batch {
		return msgs[0]
	}
	return append(append([]byte{'['}, bytes.Join(msgs, []byte{','})...), ']')
}

func newKey() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on the systems Go supports.
		panic(err)
	}
	return hex.EncodeToString(b)
}
