package mcpeffect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The carriers of the idempotency key: go-sdk's server decodes the params
// of a tools/call into a struct that has no idempotencyKey, and so drops
// the member that SEP-3182 puts the key in before any middleware sees the
// request. A carrier reads each request before go-sdk decodes it and
// moves the key into the params' _meta, under IdempotencyKeyMetaKey,
// which go-sdk keeps; it marks the initialize and server/discover
// requests it passes on, so that the middleware advertises the
// capability only where keys are carried. It changes nothing else: a
// message that has no idempotencyKey member goes on as it came, byte for
// byte.

// IdempotencyTransport returns t, a server transport (stdio, in memory,
// or any other that hands go-sdk whole JSON-RPC messages), with the
// idempotency key of each tools/call carried where the middleware reads
// it, as the draft's field needs on a go-sdk server (see
// [IdempotencyOptions]):
//
//	ss, err := server.Connect(ctx, enforcer.IdempotencyTransport(&mcp.StdioTransport{}), nil)
//
// Without Idempotency in e's options it returns t as it is. Over
// Streamable HTTP, wrap the HTTP handler with [Enforcer.IdempotencyHandler]
// instead: go-sdk's Streamable HTTP handler makes its transports itself.
//
// The connection it returns is go-sdk's underneath, but hides from go-sdk
// the methods its own connections have beyond [mcp.Connection], which are
// unexported: for stdio and in memory, go-sdk then no longer refuses a
// JSON-RPC batch from protocol 2025-06-18 on (the middleware still
// decides each of its requests).
func (e *Enforcer) IdempotencyTransport(t mcp.Transport) mcp.Transport {
	if e.idem == nil || t == nil {
		return t
	}
	return &carryingTransport{t}
}

type carryingTransport struct{ mcp.Transport }

func (t *carryingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &carryingConn{conn}, nil
}

// SupportsProtocolVersion implements [mcp.ProtocolVersionSupporter] as the
// transport underneath does, or for every version if it does not say.
func (t *carryingTransport) SupportsProtocolVersion(version string) bool {
	if s, ok := t.Transport.(mcp.ProtocolVersionSupporter); ok {
		return s.SupportsProtocolVersion(version)
	}
	return true
}

type carryingConn struct{ mcp.Connection }

func (c *carryingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil {
		req.Params = carryParams(req.Method, req.Params)
	}
	return msg, err
}

// IdempotencyHandler returns h, a Streamable HTTP handler of a go-sdk
// server ([mcp.NewStreamableHTTPHandler]), with the idempotency key of
// each tools/call carried where the middleware reads it, as
// [Enforcer.IdempotencyTransport] does for other transports. Place it
// where the body is read before go-sdk reads it, inside
// [auth.RequireBearerToken] (and beside [Enforcer.Challenge], in either
// order):
//
//	h := enforcer.IdempotencyHandler(mcp.NewStreamableHTTPHandler(getServer, nil))
//	http.Handle("/mcp", auth.RequireBearerToken(verify, nil)(h))
//
// It reads each POST body whole, up to [IdempotencyOptions] MaxBodyBytes
// (go-sdk's own bound by default), and answers a longer one 413, since a
// key it could not read would be dropped and its call run as many times
// as it is sent. Without Idempotency in e's options it returns h as it
// is.
//
// [auth.RequireBearerToken]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#RequireBearerToken
func (e *Enforcer) IdempotencyHandler(h http.Handler) http.Handler {
	if e.idem == nil {
		return h
	}
	limit := e.idem.maxBody
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.Body == nil {
			h.ServeHTTP(w, req)
			return
		}
		if req.ContentLength > limit {
			http.Error(w, fmt.Sprintf("the request body is %d bytes; at most %d are read", req.ContentLength, limit), http.StatusRequestEntityTooLarge)
			return
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
		req.Body.Close()
		switch {
		case err != nil:
			http.Error(w, "the request body could not be read: "+err.Error(), http.StatusBadRequest)
			return
		case int64(len(body)) > limit:
			http.Error(w, fmt.Sprintf("the request body is longer than %d bytes, the most that is read", limit), http.StatusRequestEntityTooLarge)
			return
		}
		if out, changed := carryBody(body); changed {
			body = out
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Length", strconv.Itoa(len(body)))
		h.ServeHTTP(w, req)
	})
}

// CarryIdempotencyKeys returns msg, one JSON-RPC message or a batch as a
// transport reads it, with the idempotency key of each tools/call moved
// from params.idempotencyKey into params._meta, as the carriers of this
// package move it ([Enforcer.IdempotencyTransport]): for an adapter whose
// SDK drops the draft's field too (package mcpgo, for mcp-go). A message
// without the field is returned as it came.
func CarryIdempotencyKeys(msg []byte) []byte {
	out, _ := carryBody(msg)
	return out
}

// DeclareIdempotency returns result, the JSON of the result of
// initialize or server/discover, with capabilities.tools.idempotency, as
// SEP-3182 declares the capability, for an adapter whose SDK's types
// cannot carry it: the middleware declares it on a go-sdk server. A
// result that declares no tools, or is not JSON, is returned as it is.
func DeclareIdempotency(result []byte) []byte {
	out, err := withIdempotencyCapability(result)
	if err != nil {
		return result
	}
	return out
}

// mayCarry reports whether raw may hold what a carrier changes: the
// member idempotencyKey, a method it marks, or an escape that could
// spell either.
func mayCarry(raw []byte) bool {
	return bytes.Contains(raw, []byte(IdempotencyKeyParam)) || bytes.Contains(raw, []byte(methodInitialize)) ||
		bytes.Contains(raw, []byte(methodDiscover)) || bytes.Contains(raw, []byte(`\u`))
}

// carryBody returns body, an HTTP body of one JSON-RPC message or a batch
// of them, with the params of each carried (carryParams), and whether
// anything changed. A body that is not JSON goes on as it came, for
// go-sdk to refuse.
func carryBody(body []byte) ([]byte, bool) {
	if !mayCarry(body) || !json.Valid(body) {
		return body, false
	}
	sc := scanner{b: body}
	sc.space()
	if sc.peek() != '[' {
		return carryMessage(body)
	}
	var out bytes.Buffer
	out.WriteByte('[')
	changed := false
	sc.i++
	for n := 0; ; n++ {
		sc.space()
		if sc.peek() == ']' || sc.i >= len(body) {
			break
		}
		if n > 0 {
			out.WriteByte(',')
		}
		m, c := carryMessage(sc.value())
		out.Write(m)
		changed = changed || c
		sc.space()
		if sc.peek() == ',' {
			sc.i++
		}
	}
	out.WriteByte(']')
	if !changed {
		return body, false
	}
	return out.Bytes(), true
}

// carryMessage returns msg, one JSON-RPC message, valid JSON, with its
// params carried. A message whose method or params is given twice is
// left as it is: which one go-sdk reads is its decoder's choice, and a
// tools/call among them gets no key, as from a client that sent none.
func carryMessage(msg []byte) ([]byte, bool) {
	var method, params []byte
	var start, end int // of the params' value in msg
	dup := false
	sc := scanner{b: msg}
	sc.space()
	if sc.peek() != '{' {
		return msg, false
	}
	sc.i++
	for {
		sc.space()
		if sc.peek() == '}' || sc.i >= len(msg) {
			break
		}
		key, _ := stringValue(sc.value())
		sc.space()
		sc.i++ // the colon
		sc.space()
		vstart := sc.i
		v := sc.value()
		switch key {
		case "method":
			dup = dup || method != nil
			method = v
		case "params":
			dup = dup || params != nil
			params, start, end = v, vstart, sc.i
		}
		sc.space()
		if sc.peek() == ',' {
			sc.i++
		}
	}
	m, ok := stringValue(method)
	if dup || !ok || params == nil {
		return msg, false
	}
	carried := carryParams(m, params)
	if bytes.Equal(carried, params) {
		return msg, false
	}
	out := make([]byte, 0, len(msg)-len(params)+len(carried))
	out = append(out, msg[:start]...)
	out = append(out, carried...)
	out = append(out, msg[end:]...)
	return out, true
}

// carryParams returns params, those of a request of method, with what a
// carrier changes: for a tools/call, the key of params.idempotencyKey
// moved into params._meta under IdempotencyKeyMetaKey; for initialize and
// server/discover, the mark of a carrier in params._meta. What cannot be
// carried with certainty (the key given twice, a _meta that is not one
// object, a key in _meta already that differs) puts in _meta, in place
// of the key, an object that says why, which the middleware refuses.
// Params that need nothing are returned as they are.
func carryParams(method string, params json.RawMessage) json.RawMessage {
	switch method {
	case methodCallTool:
		if !bytes.Contains(params, []byte(IdempotencyKeyParam)) && !bytes.Contains(params, []byte(`\u`)) {
			return params
		}
	case methodInitialize, methodDiscover:
	default:
		return params
	}
	if !json.Valid(params) {
		return params
	}
	type member struct {
		key   string
		value []byte
	}
	var others []member
	var keys, metas [][]byte
	if members(params, func(key string, v []byte) error {
		switch key {
		case IdempotencyKeyParam:
			keys = append(keys, v)
		case "_meta":
			metas = append(metas, v)
		default:
			others = append(others, member{key, v})
		}
		return nil
	}) != nil {
		return params // not an object: go-sdk refuses it
	}
	if method == methodCallTool && len(keys) == 0 {
		return params
	}
	var meta map[string]json.RawMessage
	var why string
	if len(metas) > 1 {
		why = "params._meta is given twice"
	} else if len(metas) == 1 && string(bytes.TrimSpace(metas[0])) != "null" {
		if json.Unmarshal(metas[0], &meta) != nil || meta == nil {
			if method != methodCallTool {
				return params // go-sdk refuses a _meta that is not an object
			}
			why = "params._meta is not an object"
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	switch {
	case method != methodCallTool:
		if why != "" {
			return params
		}
		meta[idempotencyCarriedMetaKey] = json.RawMessage("true")
	case why != "":
	case len(keys) > 1:
		why = "params.idempotencyKey is given twice"
	default:
		key := bytes.TrimSpace(keys[0])
		if had, ok := meta[IdempotencyKeyMetaKey]; ok && !sameJSONString(had, key) {
			why = "params.idempotencyKey and params._meta." + IdempotencyKeyMetaKey + " differ"
		} else {
			meta[IdempotencyKeyMetaKey] = key
		}
	}
	if why != "" {
		invalid, _ := json.Marshal(map[string]string{invalidKeyMember: why})
		meta[IdempotencyKeyMetaKey] = invalid
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for _, m := range others {
		k, _ := json.Marshal(m.key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(m.value)
		out.WriteByte(',')
	}
	out.WriteString(`"_meta":`)
	rawMeta, err := json.Marshal(meta)
	if err != nil {
		return params
	}
	out.Write(rawMeta)
	out.WriteByte('}')
	return out.Bytes()
}

// sameJSONString reports whether a and b are JSON strings of the same
// value.
func sameJSONString(a, b []byte) bool {
	var x, y string
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && x == y
}
