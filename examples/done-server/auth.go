package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scopeNames are the OAuth scope strings of Done's tokens: the defaults,
// "tools:read", "tools:write" and "tools:destructive".
var scopeNames mcpeffect.ScopeNames

// tokenInfoKey is the key of the caller's [store.Token] in
// [auth.TokenInfo.Extra].
const tokenInfoKey = "done.token"

// verify is the [auth.TokenVerifier] of the bearer tokens of HTTP
// requests: it checks each against the store, on every request, so that a
// token revoked with revoke_token stops working at once, and one revoked
// by another process within the store's AuthCache (see [storeOptions]).
func (d *done) verify(ctx context.Context, secret string, _ *http.Request) (*auth.TokenInfo, error) {
	k, err := d.authenticate(ctx, stdioCredential{secret: secret})
	if errors.Is(err, store.ErrBadToken) {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	if store.Transient(err) {
		d.logger.WarnContext(ctx, "verifying a token", "err", err)
		return nil, errUnavailable
	}
	if err != nil {
		// RequireBearerToken writes the error in the answer: keep the
		// details in the log.
		d.logger.ErrorContext(ctx, "verifying a token", "err", err)
		return nil, errors.New("internal error")
	}
	return &auth.TokenInfo{
		Scopes:     []string{scopeNames.Name(k.Scope)},
		Expiration: k.Expiry(),
		// go-sdk binds a session to its UserID: another token cannot
		// take over a session it did not start.
		UserID: k.ID,
		Extra:  map[string]any{tokenInfoKey: k},
	}, nil
}

// errUnavailable is what [done.verify] returns when the store cannot say
// whether a token is live, for now: [done.bearer] answers it 503.
var errUnavailable = errors.New(unavailableMessage)

// unavailableMessage is the body of an HTTP answer refused because the
// database is unavailable for now, on every path of done-server's HTTP.
const unavailableMessage = "the database of Done is unavailable for now: try again in a few seconds"

// writeUnavailable answers an HTTP request that the database could not
// serve for now ([store.Transient]): 503 Service Unavailable, with
// Retry-After, so that a client or a load balancer knows to try again,
// and soon, rather than a 500, which says the server is broken.
func writeUnavailable(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Retry-After", web.RetryAfter)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintln(w, unavailableMessage)
}

// bearer returns the HTTP middleware that lets through only requests with
// a live token, answering the others 401 with the address of the metadata,
// and 503 (see [writeUnavailable]) when the store cannot say for now.
//
// go-sdk's [auth.RequireBearerToken] does the checks, and puts the token
// where its handlers find it, but answers 500 for any error of the
// verifier but an invalid token. So the token is verified first, here:
// an outage is answered 503, and otherwise the result goes in the
// request's context, where the verifier given to RequireBearerToken
// takes it, so that each request is looked up once.
func (d *done) bearer() func(http.Handler) http.Handler {
	require := auth.RequireBearerToken(func(ctx context.Context, secret string, r *http.Request) (*auth.TokenInfo, error) {
		if v, ok := ctx.Value(verifiedKey{}).(verified); ok && v.secret == secret {
			return v.info, v.err
		}
		return d.verify(ctx, secret, r)
	}, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: d.baseURL + metadataPath,
		// Tokens made without an expiry last until revoked.
		AllowMissingExpiration: true,
	})
	return func(next http.Handler) http.Handler {
		checked := require(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The header as RequireBearerToken reads it; whatever it
			// would read otherwise, it verifies itself.
			fields := strings.Fields(r.Header.Get("Authorization"))
			if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
				checked.ServeHTTP(w, r)
				return
			}
			info, err := d.verify(r.Context(), fields[1], r)
			if errors.Is(err, errUnavailable) {
				writeUnavailable(w)
				return
			}
			ctx := context.WithValue(r.Context(), verifiedKey{}, verified{fields[1], info, err})
			checked.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// verified is what [done.bearer] found of a request's bearer token.
type verified struct {
	secret string
	info   *auth.TokenInfo
	err    error
}

type verifiedKey struct{}

// A stdioCredential is how the calls of a stdio connection authenticate:
// with the secret of DONE_TOKEN, or, without one, as the owner of the data
// directory (see [store.Store.Owner]). A request over HTTP authenticates
// with the secret of its bearer token.
type stdioCredential struct {
	secret string
	owner  bool
}

type stdioCredentialKey struct{}

// withStdioCredential returns a copy of ctx carrying the credential of a
// stdio connection, for [done.identify] to check on every request.
func withStdioCredential(ctx context.Context, c stdioCredential) context.Context {
	return context.WithValue(ctx, stdioCredentialKey{}, c)
}

type callerKey struct{}

// identify is receiving middleware that finds the token behind each
// tools/call and puts it in the request's context for the handler (see
// [caller]). Over HTTP, [done.verify] has just checked the token; over stdio,
// identify checks the connection's token again on every call, so that
// revoking it takes effect on the next call there too.
func (d *done) identify(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/call", "resources/read", "prompts/get":
		default:
			// Nothing else touches the data, and over HTTP the bearer
			// token was checked before the request got here.
			return next(ctx, method, req)
		}
		k, err := d.tokenOf(ctx, req)
		if err != nil {
			return nil, err
		}
		return next(context.WithValue(ctx, callerKey{}, k), method, req)
	}
}

// tokenFromInfo returns the token that [done.verify] put in ti, the
// [auth.TokenInfo] of a request over HTTP, if ti holds one.
func tokenFromInfo(ti *auth.TokenInfo) (store.Token, bool) {
	if ti == nil {
		return store.Token{}, false
	}
	k, ok := ti.Extra[tokenInfoKey].(store.Token)
	return k, ok
}

// tokenOf returns the live token behind req.
func (d *done) tokenOf(ctx context.Context, req mcp.Request) (store.Token, error) {
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		if k, ok := tokenFromInfo(extra.TokenInfo); ok {
			return k, nil
		}
		return store.Token{}, errUnauthenticated
	}
	c, ok := ctx.Value(stdioCredentialKey{}).(stdioCredential)
	if !ok {
		return store.Token{}, errUnauthenticated
	}
	k, err := d.authenticate(ctx, c)
	if errors.Is(err, store.ErrBadToken) {
		return k, errUnauthenticated
	}
	// The database down says so, as a tool call's error would.
	return k, d.check(ctx, err)
}

// authenticate returns the live token of the credential c, with its use
// noted (see [store.Store.NoteUse]), or [store.ErrBadToken].
func (d *done) authenticate(ctx context.Context, c stdioCredential) (store.Token, error) {
	var k store.Token
	var err error
	if c.owner {
		k, err = d.store.AuthenticateOwner(ctx)
	} else {
		k, err = d.store.Authenticate(ctx, c.secret)
	}
	if err != nil {
		return store.Token{}, err
	}
	return d.store.NoteUse(ctx, k)
}

var errUnauthenticated = &jsonrpc.Error{
	Code:    jsonrpc.CodeInvalidRequest,
	Message: "done: the token is unknown, revoked or expired",
}

// callerToken returns the token of the caller of the request ctx belongs
// to. [done.identify] sees to it that every request has one.
func callerToken(ctx context.Context) store.Token {
	k, _ := ctx.Value(callerKey{}).(store.Token)
	return k
}

// caller returns who the request ctx belongs to runs for. What it may do
// is [mcpeffect.CallerScopeFromContext]: its token's scope, capped by the
// connection's.
func caller(ctx context.Context) store.Actor {
	return callerToken(ctx).Actor()
}
