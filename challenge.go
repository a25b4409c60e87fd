package mcpeffect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ChallengeOptions configure what is HTTP's own in [Enforcer.Challenge]:
// everything else (the scope names, where the caller's scope comes from,
// the refusal hook) is the [Enforcer]'s, shared with its middleware. A nil
// *ChallengeOptions is the zero value.
type ChallengeOptions struct {
	// ResourceMetadataURL is the URL of the server's OAuth 2.0 protected
	// resource metadata (RFC 9728), sent as resource_metadata so that the
	// client knows where to ask for a wider scope. If empty, it is left out.
	ResourceMetadataURL string

	// MaxBodyBytes is the most of a request body that is read to look for
	// tools/call requests; a longer body goes on unchallenged. Zero means
	// 1 MiB.
	MaxBodyBytes int64
}

// DefaultMaxBodyBytes is the limit on the body read by [Enforcer.Challenge]
// when [ChallengeOptions.MaxBodyBytes] is zero.
const DefaultMaxBodyBytes = 1 << 20

// Challenge returns HTTP middleware for a Streamable HTTP MCP server that
// answers a refused tools/call, resources/read or prompts/get early with
// the step-up challenge of the MCP authorization specification: 403
// Forbidden and
//
//	WWW-Authenticate: Bearer error="insufficient_scope", scope="...", resource_metadata="..."
//
// where scope holds the token's scopes and the one the request requires,
// so that the client can ask its authorization server for them and try
// again.
// The body is a JSON-RPC error response of code [CodeDenied], as
// [Enforcer.Middleware] sends, for clients that do not step up.
//
// It decides as the middleware does, with e's configuration: the caller's
// scope from [MiddlewareOptions] Scope, or else from the scope strings of
// the [auth.TokenInfo] that [auth.RequireBearerToken] put in the request's
// context, mapped by ScopeNames, and capped by a scope set on the
// request's context with [WithConnectionScope]; a refusal goes to
// OnDenied before the challenge is sent (a request refused here never
// reaches the middleware). A request to which nothing gives a scope (no
// token, no Scope function) goes on, for the middleware to explain.
//
// Place it inside [auth.RequireBearerToken], around the handler from
// [mcp.NewStreamableHTTPHandler]. It is an early answer only, never the
// only check: install e's middleware on the server too. It reads
// bodies up to MaxBodyBytes and restores them for the next handler.
// Anything it cannot read with certainty (a body too long or not JSON,
// duplicated keys, a tool the registry does not classify) goes on
// untouched, to be decided by the middleware. So does a call of a tool
// whose effect depends on its arguments (see [EffectRule]) that the
// caller's scope allows with some arguments, unless the raw arguments
// give that effect with certainty (see [EffectRule.CallEffect]): the common
// form, read strictly, of a handler that receives its argument as a plain
// string.
//
// A JSON-RPC batch goes on untouched too, and the middleware answers each
// of its calls: only the 2025-03-26 protocol had batches (2025-06-18
// removed them, and go-sdk refuses them from that version on), and the
// step-up challenge came later, in 2025-11-25, so a client that batches
// does not step up; a 403 for the whole batch would only refuse its
// allowed calls with the one that is not.
//
// [mcp.NewStreamableHTTPHandler]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/mcp#NewStreamableHTTPHandler
func (e *Enforcer) Challenge(opts *ChallengeOptions) func(http.Handler) http.Handler {
	var o ChallengeOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method != http.MethodPost || req.Body == nil || req.ContentLength > o.MaxBodyBytes {
				next.ServeHTTP(w, req)
				return
			}
			ti := auth.TokenInfoFromContext(req.Context())
			if ti == nil && e.opts.Scope == nil {
				next.ServeHTTP(w, req)
				return
			}
			body, complete := peekBody(req, o.MaxBodyBytes)
			if !complete || !mayChallenge(body) {
				next.ServeHTTP(w, req)
				return
			}
			c, err := parseCall(body)
			if err != nil {
				next.ServeHTTP(w, req)
				return
			}
			ctx := req.Context()
			d := e.decide(ctx, c.operation(), e.requestCaller(ctx, c.request(&mcp.RequestExtra{TokenInfo: ti, Header: req.Header})), argsWire)
			// Only a refusal that a wider scope would lift is answered
			// here: one with no scope at all, or of a tool that no scope
			// may call, goes on for the middleware to explain; so does a
			// call that its handler's input decides.
			if !d.scoped || d.Denied == nil || !d.Denied.Classified {
				next.ServeHTTP(w, req)
				return
			}
			e.report(ctx, d)
			var scopes []string
			if ti != nil {
				scopes = ti.Scopes
			}
			writeChallenge(w, o.ResourceMetadataURL, scopes, d.Denied, c.id)
		})
	}
}

// operation returns the operation that c is.
func (c call) operation() Operation {
	switch c.method {
	case methodReadResource:
		return Operation{Method: methodReadResource, URI: c.uri}
	case methodGetPrompt:
		return Operation{Method: methodGetPrompt, Name: c.name}
	}
	return Operation{Method: methodCallTool, Name: c.name, Arguments: c.args}
}

// request returns the go-sdk request that c is, as the middleware would
// see it without its session, for the Scope function of the options.
func (c call) request(extra *mcp.RequestExtra) mcp.Request {
	switch c.method {
	case "resources/read":
		return &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: c.uri}, Extra: extra}
	case "prompts/get":
		return &mcp.GetPromptRequest{Params: &mcp.GetPromptParams{Name: c.name}, Extra: extra}
	}
	return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: c.name, Arguments: c.args}, Extra: extra}
}

// mayChallenge reports whether body may hold a request that Challenge
// answers, to pass the others on without parsing them. A method written
// with escapes is passed on too, to the middleware.
func mayChallenge(body []byte) bool {
	return bytes.Contains(body, []byte("tools/call")) || bytes.Contains(body, []byte("resources/read")) ||
		bytes.Contains(body, []byte("prompts/get"))
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

// clip returns s, or its first max bytes and "..." if it is longer.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "..."
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// writeChallenge answers 403 with the step-up challenge for d, and a
// JSON-RPC error response to the request id.
//
// The scope parameter holds the token's own scopes and the one the
// request needs, which is all it needs: each scope string of ScopeNames
// grants its level and those below (Scope and Allows account for that
// hierarchy), so one string is every scope an operation needs, as the
// MCP authorization specification asks a single challenge to carry. The
// specification (2026-07-28, after SEP-2350) says a server need not
// repeat the scopes already granted, since a client must add the
// challenged ones to those it holds. Not every client does: go-sdk's
// (v1.8.0) adds them, but the TypeScript SDK's (1.32.2) asks for the
// challenged scopes alone, and would lose the token's others, such as
// openid or another API's. Keeping them costs nothing to a client that
// adds, and saves one that replaces.
func writeChallenge(w http.ResponseWriter, metadataURL string, scopes []string, d *DeniedError, id json.RawMessage) {
	want := make([]string, 0, len(scopes)+1)
	for _, s := range scopes {
		if checkScopeToken(s) == nil && !slices.Contains(want, s) {
			want = append(want, s)
		}
	}
	if !slices.Contains(want, d.RequiredScopeName) {
		want = append(want, d.RequiredScopeName)
	}
	params := []string{
		`error="insufficient_scope"`,
		fmt.Sprintf("scope=%q", strings.Join(want, " ")),
	}
	if metadataURL != "" {
		params = append(params, fmt.Sprintf("resource_metadata=%q", metadataURL))
	}
	var what string
	switch {
	case d.Resource != "":
		// The URI is the client's own, of any length and content: the
		// header carries it quoted in ASCII, and cut short.
		what = "to read resource " + clip(d.Resource, 200)
	case d.Prompt != "":
		what = "to get prompt " + clip(d.Prompt, 200)
	default:
		what = "to call " + d.Tool
	}
	params = append(params, "error_description="+strconv.QuoteToASCII("a wider scope is needed "+what))
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	json.NewEncoder(w).Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, d.rpcError()})
}
