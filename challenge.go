package mcpeffect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// ChallengeOptions configure [Registry.Challenge]. A nil *ChallengeOptions
// is the zero value.
type ChallengeOptions struct {
	// ResourceMetadataURL is the URL of the server's OAuth 2.0 protected
	// resource metadata (RFC 9728), sent as resource_metadata so that the
	// client knows where to ask for a wider scope. If empty, it is left out.
	ResourceMetadataURL string

	// ScopeNames maps token scope strings to a Scope, as in
	// [MiddlewareOptions]; use the same names in both.
	ScopeNames ScopeNames

	// Scope returns the scope of the caller of an HTTP request and the
	// scope strings its token holds. If nil, both come from the
	// [auth.TokenInfo] that [auth.RequireBearerToken] put in the request's
	// context. If it reports false, the request goes on unchallenged.
	Scope func(*http.Request) (s Scope, scopes []string, ok bool)

	// MaxBodyBytes is the most of a request body that is read to look for
	// tools/call requests; a longer body goes on unchallenged. Zero means
	// 1 MiB.
	MaxBodyBytes int64

	// OnDenied, if non-nil, is called with each refused tools/call, before
	// the challenge is sent, as [MiddlewareOptions.OnDenied] is: a call
	// refused here never reaches the middleware. ctx is the request's
	// context, which holds the caller's [auth.TokenInfo]. It must not
	// block.
	OnDenied func(ctx context.Context, d *Denial)
}

// DefaultMaxBodyBytes is the limit on the body read by [Registry.Challenge]
// when [ChallengeOptions.MaxBodyBytes] is zero.
const DefaultMaxBodyBytes = 1 << 20

// Challenge returns HTTP middleware for a Streamable HTTP MCP server that
// answers a refused tools/call early with the step-up challenge of the MCP
// authorization specification: 403 Forbidden and
//
//	WWW-Authenticate: Bearer error="insufficient_scope", scope="...", resource_metadata="..."
//
// where scope holds the token's scopes and the one the tool requires, so
// that the client can ask its authorization server for them and try again.
// The body is a JSON-RPC error response of code [CodeDenied], as
// [Registry.Middleware] sends, for clients that do not step up.
//
// Place it inside [auth.RequireBearerToken], around the handler from
// [mcp.NewStreamableHTTPHandler]. It is an early answer only, never the
// only check: install [Registry.Middleware] on the server too. It reads
// single and batched JSON-RPC bodies up to MaxBodyBytes and restores the
// body for the next handler. Anything it cannot read with certainty (a
// body too long or not JSON, duplicated keys, a request without a token, a
// tool the registry does not classify) goes on untouched, to be decided by
// the middleware.
//
// Challenge panics if opts.ScopeNames is not valid (see [ScopeNames.Check]).
//
// [mcp.NewStreamableHTTPHandler]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/mcp#NewStreamableHTTPHandler
func (r *Registry) Challenge(opts *ChallengeOptions) func(http.Handler) http.Handler {
	var o ChallengeOptions
	if opts != nil {
		o = *opts
	}
	if err := o.ScopeNames.Check(); err != nil {
		panic(err)
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Scope == nil {
		o.Scope = func(req *http.Request) (Scope, []string, bool) {
			ti := auth.TokenInfoFromContext(req.Context())
			if ti == nil {
				return 0, nil, false
			}
			return o.ScopeNames.Scope(ti.Scopes), ti.Scopes, true
		}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method != http.MethodPost || req.Body == nil || req.ContentLength > o.MaxBodyBytes {
				next.ServeHTTP(w, req)
				return
			}
			granted, scopes, ok := o.Scope(req)
			if !ok {
				next.ServeHTTP(w, req)
				return
			}
			body, complete := peekBody(req, o.MaxBodyBytes)
			if !complete || !bytes.Contains(body, []byte("tools/call")) {
				next.ServeHTTP(w, req)
				return
			}
			calls, batch, err := parseToolCalls(body)
			if err != nil {
				next.ServeHTTP(w, req)
				return
			}
			var denials []*Denial
			for _, c := range calls {
				// A tool the registry does not know is left to the
				// middleware: no wider scope would let it through.
				if need, classified := r.Required(c.name); classified && !granted.allows(need) {
					denials = append(denials, r.denial(c.name, granted, o.ScopeNames))
				}
			}
			if len(denials) == 0 {
				next.ServeHTTP(w, req)
				return
			}
			if o.OnDenied != nil {
				for _, d := range denials {
					o.OnDenied(req.Context(), d)
				}
			}
			writeChallenge(w, o.ResourceMetadataURL, scopes, denials, calls, batch)
		})
	}
}

// peekBody reads up to max bytes of the request body and puts back a body
// that yields the same bytes, and then the rest, to the next reader. It
// reports whether the bytes read are the whole body.
func peekBody(req *http.Request, max int64) (body []byte, complete bool) {
	orig := req.Body
	body, err := io.ReadAll(io.LimitReader(orig, max+1))
	var rest io.Reader = orig
	if err != nil {
		// The next handler sees the same failure where this one did.
		rest = errReader{err}
	}
	req.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), orig}
	return body, err == nil && int64(len(body)) <= max
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// A toolCall is one JSON-RPC message of a body. id is set for a request
// that expects an answer, name for a tools/call request.
type toolCall struct {
	id   json.RawMessage
	name string
}

var errUncertain = errors.New("not a body to challenge")

// parseToolCalls reads the JSON-RPC messages of a body: one message or a
// batch. Any doubt about what the SDK will read is an error: a body that
// is not JSON, a key that matters given twice (decoders differ on which
// one wins), a method that is not a string, a tools/call without an id or
// a string name.
//
// It scans the body in place rather than decoding it, as it runs on every
// HTTP request: json.Valid has checked the syntax first, so the scanner
// only has to find where values begin and end.
func parseToolCalls(body []byte) (calls []toolCall, batch bool, err error) {
	if !json.Valid(body) {
		return nil, false, errUncertain
	}
	sc := scanner{b: body}
	sc.space()
	if sc.peek() != '[' {
		c, err := parseMessage(sc.value())
		return []toolCall{c}, false, err
	}
	err = sc.elements(func(raw []byte) error {
		c, err := parseMessage(raw)
		calls = append(calls, c)
		return err
	})
	if err == nil && len(calls) == 0 {
		err = errUncertain
	}
	return calls, true, err
}

// parseMessage reads one JSON-RPC message, valid JSON.
func parseMessage(raw []byte) (toolCall, error) {
	var version, id, method, params []byte
	if err := members(raw, func(key string, v []byte) error {
		var dst *[]byte
		switch key {
		case "jsonrpc":
			dst = &version
		case "id":
			dst = &id
		case "method":
			dst = &method
		case "params":
			dst = &params
		default:
			return nil
		}
		if *dst != nil {
			return errUncertain
		}
		*dst = v
		return nil
	}); err != nil {
		return toolCall{}, err
	}
	var c toolCall
	if method == nil {
		// A response to the server: not for this check, and nothing to
		// answer.
		return c, nil
	}
	m, ok := stringValue(method)
	if !ok {
		return toolCall{}, errUncertain
	}
	if id != nil && string(id) != "null" {
		c.id = id
	}
	if m != "tools/call" {
		return c, nil
	}
	if v, ok := stringValue(version); !ok || v != "2.0" || c.id == nil {
		return toolCall{}, errUncertain
	}
	var name []byte
	if err := members(params, func(key string, v []byte) error {
		if key != "name" {
			return nil
		}
		if name != nil {
			return errUncertain
		}
		name = v
		return nil
	}); err != nil {
		return toolCall{}, err
	}
	if c.name, ok = stringValue(name); !ok || c.name == "" {
		return toolCall{}, errUncertain
	}
	return c, nil
}

// members calls f with the key and the raw value of each member of the
// JSON object raw, valid JSON; anything but an object is an error.
func members(raw []byte, f func(key string, v []byte) error) error {
	sc := scanner{b: raw}
	sc.space()
	if sc.peek() != '{' {
		return errUncertain
	}
	sc.i++
	for {
		sc.space()
		if sc.peek() == '}' {
			return nil
		}
		key, ok := stringValue(sc.value())
		if !ok {
			return errUncertain
		}
		sc.space()
		sc.i++ // the colon
		sc.space()
		if err := f(key, sc.value()); err != nil {
			return err
		}
		sc.space()
		if sc.peek() == ',' {
			sc.i++
		}
	}
}

// stringValue returns the string that raw, a JSON value, holds, and
// whether it is a string. Only strings with escapes are decoded.
func stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

// A scanner finds the values of JSON that json.Valid accepted.
type scanner struct {
	b []byte
	i int
}

func (sc *scanner) peek() byte {
	if sc.i < len(sc.b) {
		return sc.b[sc.i]
	}
	return 0
}

func (sc *scanner) space() {
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// value returns the value that starts at the scanner, and moves past it.
func (sc *scanner) value() []byte {
	start := sc.i
	switch sc.peek() {
	case '"':
		sc.skipString()
	case '{', '[':
		depth := 0
		for sc.i < len(sc.b) {
			switch sc.b[sc.i] {
			case '"':
				sc.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			sc.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
		for sc.i < len(sc.b) && !endsLiteral(sc.b[sc.i]) {
			sc.i++
		}
	}
	return sc.b[start:sc.i]
}

// endsLiteral reports whether c ends a number or a literal.
func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// skipString moves past the string that starts at the scanner.
func (sc *scanner) skipString() {
	for sc.i++; sc.i < len(sc.b); sc.i++ {
		switch sc.b[sc.i] {
		case '\\':
			sc.i++
		case '"':
			sc.i++
			return
		}
	}
}

// elements calls f with each element of the array at the scanner.
func (sc *scanner) elements(f func([]byte) error) error {
	sc.i++
	for {
		sc.space()
		if sc.peek() == ']' {
			return nil
		}
		if err := f(sc.value()); err != nil {
			return err
		}
		sc.space()
		if sc.peek() == ',' {
			sc.i++
		}
	}
}

// writeChallenge answers 403 with the step-up challenge for denials, and a
// JSON-RPC body that answers every request of the body.
func writeChallenge(w http.ResponseWriter, metadataURL string, scopes []string, denials []*Denial, calls []toolCall, batch bool) {
	want := make([]string, 0, len(scopes)+len(denials))
	for _, s := range scopes {
		if checkScopeToken(s) == nil && !slices.Contains(want, s) {
			want = append(want, s)
		}
	}
	tools := make([]string, 0, len(denials))
	for _, d := range denials {
		if !slices.Contains(want, d.RequiredScope) {
			want = append(want, d.RequiredScope)
		}
		tools = append(tools, d.Tool)
	}
	params := []string{
		`error="insufficient_scope"`,
		fmt.Sprintf("scope=%q", strings.Join(want, " ")),
	}
	if metadataURL != "" {
		params = append(params, fmt.Sprintf("resource_metadata=%q", metadataURL))
	}
	params = append(params, fmt.Sprintf("error_description=%q", "a wider scope is needed to call "+strings.Join(tools, ", ")))
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)

	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}
	var out []response
	for _, c := range calls {
		if c.id == nil {
			continue // a notification or a response: nothing to answer
		}
		e := rpcError{Code: CodeDenied, Message: "not processed: another request of the batch needs a wider scope"}
		for _, d := range denials {
			if d.Tool == c.name {
				e = rpcError{Code: CodeDenied, Message: d.Error(), Data: d}
				break
			}
		}
		out = append(out, response{JSONRPC: "2.0", ID: c.id, Error: e})
	}
	enc := json.NewEncoder(w)
	if batch {
		enc.Encode(out)
	} else {
		enc.Encode(out[0])
	}
}
