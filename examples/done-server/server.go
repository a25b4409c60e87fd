package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/connector"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/admit"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/schemashare"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/writelimit"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
	"github.com/mcpeffect/mcpeffect/telemetry"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/time/rate"
)

const version = "0.1.0"

// storeOptions are the options of the store that done-server serves. The
// performance document (docs/performance.md) says what each choice buys and
// costs.
func storeOptions() *store.Options {
	return &store.Options{
		// A token revoked by the command line (another process) goes on
		// working here for up to a second; one revoked with revoke_token,
		// at once. Without the cache, each call reads the database.
		AuthCache: time.Second,
	}
}

// config is what a Done server needs besides its store and its log.
type config struct {
	// baseURL is the address of this process's HTTP server, such as
	// http://127.0.0.1:8080, which serves the calendar feeds; empty when
	// it serves stdio and no HTTP.
	baseURL string
	// connectors are the sources of documents of the open-world tools;
	// the first is where save_context writes by default.
	connectors []connector.Connector
	// confirm says which calls a person must confirm before they run
	// (serve -confirm, one of [confirmModes]); nil, none.
	confirm func(mcpeffect.Effect) bool
	// confirmURL says which calls a person must confirm on the web page
	// (serve -confirm url, one of [urlConfirmModes]); nil, none.
	confirmURL func(mcpeffect.Effect) bool
	// pageApprovals makes approve_task refuse: a person approves on the
	// web page only (serve -approvals page).
	pageApprovals bool
	// writeRate and writeBurst bound the writes of each tree of tokens
	// (see [done.limitWrites]); zero stands for the defaults,
	// defaultWriteRate a second after defaultWriteBurst, and a writeRate
	// of rate.Inf limits nothing (serve -write-rate off).
	writeRate  rate.Limit
	writeBurst int
	// confirmKey signs the request states with which a client of the
	// 2026-07-28 protocol carries a person's answer (see
	// [mcpeffect.ConfirmOptions] Key): replicas that serve one store
	// need the same key, so that any of them verifies what another
	// asked. Empty, each process makes its own.
	confirmKey []byte
	// hideDenied lists to each caller only the tools, resources and
	// prompts its scope allows (serve -hide-denied). Off, the default,
	// everything is listed, so that a host can see what a wider scope
	// would allow and ask for it.
	hideDenied bool
	// stateless serves every HTTP request without a session, older
	// clients' too (see [done.streamableHandler]): for replicas on a
	// shared store, where the next request may reach another replica.
	stateless bool
	// telemetry traces and counts the operations and the decisions (see
	// observe.go); nil, nothing is.
	telemetry *telemetry.Telemetry
	// schemas holds the schemas of the tools, which every server of the
	// process shares (see [schemashare.Set]); nil, the Done makes its own.
	schemas *schemashare.Set
}

// A done is one Done server: its store, its log, and what its tools and
// handlers share. Its methods make the MCP server (newServer), the HTTP
// handler (httpHandler) and the tools (tools.go), and serve them.
type done struct {
	store  *store.Store
	logger *slog.Logger
	// baseURL is the address of the HTTP server of this process, which
	// serves the calendar feeds, or empty (see [config]).
	baseURL string
	// sources are the connectors, in the order of config.connectors.
	sources []*source
	// queue admits the tool calls that run at once (see [admit.Queue]).
	queue *admit.Queue
	// confirm is config.confirm.
	confirm func(mcpeffect.Effect) bool
	// confirmURL, pageApprovals, stateless, confirmKey and hideDenied
	// are config's.
	confirmURL    func(mcpeffect.Effect) bool
	pageApprovals bool
	stateless     bool
	confirmKey    []byte
	hideDenied    bool
	// writes bounds the rate of each tree of tokens' writes, over every
	// server of d (see [done.limitWrites]).
	writes *writelimit.Limiter
	// enforcers holds the one Enforcer of each registry of d's servers
	// (see [done.enforcer]).
	enforcers sync.Map // *mcpeffect.Registry -> *mcpeffect.Enforcer
	// telemetry is config's.
	telemetry *telemetry.Telemetry
	// schemas holds the schemas of the tools (see [config]).
	schemas *schemashare.Set
	// waits bounds the calls waiting for a person's answer on the page
	// (see [confirmWaits]).
	waits *confirmWaits
}

// newDone returns the Done server of st, which logs to logger.
func newDone(st *store.Store, logger *slog.Logger, cfg config) *done {
	d := &done{
		store: st, logger: logger, baseURL: cfg.baseURL, confirm: cfg.confirm,
		confirmURL: cfg.confirmURL, pageApprovals: cfg.pageApprovals,
		stateless: cfg.stateless, confirmKey: cfg.confirmKey, hideDenied: cfg.hideDenied, telemetry: cfg.telemetry,
		// Two calls a core: on a few cores, more at once only share them,
		// and a write holds the one writer of SQLite while its goroutine
		// waits for a core (see docs/performance.md).
		queue:   admit.New(2*runtime.GOMAXPROCS(0), true),
		waits:   newConfirmWaits(store.MaxOpenConfirmations, maxConfirmWaits),
		schemas: cfg.schemas,
	}
	if d.schemas == nil {
		d.schemas = schemashare.New()
	}
	d.writes = writelimit.New(cmp.Or(cfg.writeRate, defaultWriteRate), cmp.Or(cfg.writeBurst, defaultWriteBurst), func(root string) {
		logger.Warn("writes refused: past the write rate of a tree of tokens", "root_token_id", root, "rate", float64(d.writes.Rate()), "burst", d.writes.Burst())
	})
	for _, c := range cfg.connectors {
		d.sources = append(d.sources, &source{Connector: c})
	}
	return d
}

// newServer returns the MCP server of Done, and the registry that
// classifies its tools. Receiving middleware wraps every request, from the
// outside in: recoverPanics turns a panic of anything below it into an
// internal error for that one request; noteToken puts the caller's token
// where the log of a refusal finds it; noteIdempotency notes a call made
// with an idempotency key for its record (idempotency.go); the
// registry's middleware refuses the tools that the caller's scope does
// not allow (and logs it), and runs a call with a key once; then
// identify finds the caller's token for the handler; limitWrites refuses
// a write past its token's rate; and the queue makes the call wait its
// turn (see [admit.Queue]). With d.confirm or d.confirmURL, the tools'
// wrappers then ask the person before the calls it names (see confirm.go
// and confirm_url.go). A request that Done sends the client meanwhile
// (an elicitation, which waits for a person) gives back the call's turn
// while it waits (see [done.whileAsking]).
func (d *done) newServer() (*mcp.Server, *mcpeffect.Registry) {
	server, registry := d.newToolServer()
	server.AddReceivingMiddleware(d.middleware(d.enforcer(registry).Middleware())...)
	server.AddSendingMiddleware(d.whileAsking)
	return server, registry
}

// enforcer returns the check of registry, configured in this one place
// and made once, for the middleware and the HTTP challenge alike: one
// value, so that the two are one decision.
func (d *done) enforcer(registry *mcpeffect.Registry) *mcpeffect.Enforcer {
	if e, ok := d.enforcers.Load(registry); ok {
		return e.(*mcpeffect.Enforcer)
	}
	e, _ := d.enforcers.LoadOrStore(registry, registry.Enforcer(&mcpeffect.MiddlewareOptions{
		ScopeNames: scopeNames,
		OnDenied:   d.logDenial,
		Confirm:    d.confirmOptions(),
		HideDenied: d.hideDenied,
		OnDecision: d.onDecision(),
		// Retries that run once, over Done's database (idempotency.go).
		Idempotency: d.idempotencyOptions(),
	}))
	return e.(*mcpeffect.Enforcer)
}

// middleware returns the receiving middleware of [done.newServer], with
// check, the registry's middleware, in its place.
func (d *done) middleware(check mcp.Middleware) []mcp.Middleware {
	return d.traced([]mcp.Middleware{d.recoverPanics, noteToken, d.noteIdempotency, check, d.identify, d.limitWrites, d.queue.Middleware(openWorld)})
}

// openWorld reports whether req is a call of an open-world tool, which
// the queue lets through without a turn: it waits on a source outside
// Done (a disk, a network), not on the cores or the writer, and a slow
// source must not hold the turns of every other call. Its effect is the
// call's own, as the decision that admitted it computed it.
func openWorld(ctx context.Context, _ mcp.Request) bool {
	d, ok := mcpeffect.DecisionFromContext(ctx)
	return ok && d.Effect&mcpeffect.OpenWorld != 0
}

// whileAsking is sending middleware for a request that Done sends a
// client on behalf of a call, an elicitation, which waits for a person:
// the call gives back its turn of the queue while it waits (see
// [admit.Aside]), and one that sends the person to the page counts among
// the calls waiting for the page (see [confirmWaits]).
func (d *done) whileAsking(next mcp.MethodHandler) mcp.MethodHandler {
	aside := admit.SendAside(next)
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.ElicitRequest); ok && r.Params != nil && r.Params.Mode == "url" {
			leave, busy := d.waits.enter(callerToken(ctx))
			if busy != "" {
				return nil, errors.New(busy)
			}
			defer leave()
		}
		return aside(ctx, method, req)
	}
}

// recoverPanics is receiving middleware that recovers a panic in any
// method handler below it, tool handlers included: go-sdk calls them on
// the goroutine of the request, inside this middleware, and a panic
// there would end the whole process, every connection with it (a tool
// call that the queue runs on a worker has its panic carried back to
// that goroutine: see [admit.Panic]). The request is answered with an internal error that says nothing of the
// panic (its value may hold anything: a path, a secret, the caller's own
// input), and the panic is logged with its stack under an incident id,
// which the answer gives, so that the two can be matched.
//
// A panic unwinds through the deferred rollback of a store transaction,
// so a write in progress is undone; a connector's write, outside the
// database, may have happened.
func (d *done) recoverPanics(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			incident := rand.Text()[:10]
			stack := debug.Stack()
			if p, ok := v.(*admit.Panic); ok {
				// A panic on a worker: its own value, and the stack where
				// it happened.
				v, stack = p.Value, p.Stack
			}
			attrs := []any{"method", method, "incident", incident, "panic", fmt.Sprint(v), "stack", string(stack)}
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
				attrs = append(attrs, "tool", p.Name)
			}
			d.logger.ErrorContext(ctx, "panic in a handler", attrs...)
			res, err = nil, &jsonrpc.Error{
				Code:    jsonrpc.CodeInternalError,
				Message: "done: internal error in " + method + "; the server log has the details, under incident " + incident,
			}
		}()
		return next(ctx, method, req)
	}
}

// logTokenKey is the key of the caller's token in a context, for logs.
type logTokenKey struct{}

// logDenial logs a refused call whole, as the [mcpeffect.DeniedError]
// logs itself (what was refused, the scope it needs and the one the
// caller has), with the caller's token when ctx holds it: from
// [noteToken] or [done.serveStdio] in the MCP server, from the bearer
// token's [auth.TokenInfo] in the HTTP challenge, which refuses calls
// before they reach the server.
func (d *done) logDenial(ctx context.Context, denied *mcpeffect.DeniedError) {
	attrs := []any{"denied", denied}
	k, ok := ctx.Value(logTokenKey{}).(store.Token)
	if !ok {
		k, ok = tokenFromInfo(auth.TokenInfoFromContext(ctx))
	}
	if ok {
		attrs = append(attrs, "token_id", k.ID, "token_name", k.Name, "kind", k.Kind)
	}
	d.logger.InfoContext(ctx, "call refused", attrs...)
}

// noteToken is receiving middleware that puts the token of the caller of
// a request over HTTP in the request's context, for the log of a refused
// call (the registry's middleware refuses before [done.identify] runs). A
// stdio connection has it from [done.serveStdio] already.
func noteToken(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if extra := req.GetExtra(); extra != nil {
			if k, ok := tokenFromInfo(extra.TokenInfo); ok {
				ctx = context.WithValue(ctx, logTokenKey{}, k)
			}
		}
		return next(ctx, method, req)
	}
}

// newToolServer returns the MCP server of Done with its tools and no
// middleware: [done.newServer] adds the layers that guard it.
func (d *done) newToolServer() (*mcp.Server, *mcpeffect.Registry) {
	server := mcp.NewServer(&mcp.Implementation{Name: "done", Title: "Done", Version: version}, &mcp.ServerOptions{
		Instructions: "Done keeps tasks for people and agents. Closing a task that is not auto-close asks a human to approve it. " +
			"Deleting moves things to the Trash, from where restore_from_trash brings them back.",
		Logger:      d.logger,
		SchemaCache: d.schemas.Resolved,
	})
	registry := mcpeffect.NewRegistry()
	d.addTools(server, registry)
	d.addResources(server, registry)
	return server, registry
}

// Paths of the HTTP server.
const (
	mcpPath      = "/mcp"
	metadataPath = "/.well-known/oauth-protected-resource"
	// feedPath + secret + ".ics" is a calendar feed.
	feedPath = "/calendar/"
)

// httpHandler serves server at /mcp, behind bearer tokens, the OAuth
// protected resource metadata (RFC 9728) that a client reads to learn
// which scopes exist, and the calendar feeds, at d's base URL.
//
// A request to /mcp goes through these layers: its deadlines are set for
// streams (see [streamDeadlines]); the bearer token is checked (401
// without a valid one, 503 while the database cannot say: see
// [done.bearer]); a tool call that the token's scope does not allow
// is answered early with the step-up challenge (403 and the scope it
// needs, so that a client can ask for it); a request that would open a
// session past a limit is refused (see [sessionLimiter]); then the MCP
// server, whose middleware makes the check that counts.
func (d *done) httpHandler(server *mcp.Server, registry *mcpeffect.Registry) http.Handler {
	return d.limitedHTTPHandler(server, registry, defaultHTTPLimits)
}

// limitedHTTPHandler is [done.httpHandler] with the limits lim.
func (d *done) limitedHTTPHandler(server *mcp.Server, registry *mcpeffect.Registry, lim httpLimits) http.Handler {
	e := d.enforcer(registry)
	challenge := e.Challenge(&mcpeffect.ChallengeOptions{ResourceMetadataURL: d.baseURL + metadataPath})
	// The idempotency key's carrier, beside the challenge (idempotency.go).
	return d.handlerWith(server, lim, func(h http.Handler) http.Handler { return e.IdempotencyHandler(challenge(h)) })
}

// handlerWith is [done.limitedHTTPHandler] with challenge, the step-up
// challenge, in its place: nil for none.
func (d *done) handlerWith(server *mcp.Server, lim httpLimits, challenge func(http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(metadataPath, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               d.baseURL + mcpPath,
		ScopesSupported:        scopeNames.Strings(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Done",
	}))
	mux.Handle("GET "+feedPath+"{file}", d.feedHandler())
	// The page for people, behind its own sessions (not bearer tokens).
	mux.Handle(web.Prefix+"/", web.New(d.store, d.logger, nil))
	mux.Handle(web.Prefix, http.RedirectHandler(web.Prefix+"/", http.StatusSeeOther))
	h := d.streamableHandler(server, lim)
	if challenge != nil {
		h = challenge(h)
	}
	mux.Handle(mcpPath, streamDeadlines(lim.write, d.bearer()(h)))
	return recoverHTTP(d.logger, mux)
}

// recoverHTTP returns next, with a panic in it (in the bearer token's
// check, say) answered 500 and logged with its stack under an incident
// id, as [done.recoverPanics] does for MCP requests. net/http would recover
// it too, but drop the connection without an answer and log it outside
// the server's logger. A panic after the answer has begun aborts it: its
// status is sent already. http.ErrAbortHandler, a deliberate abort, goes
// on up.
func recoverHTTP(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			switch {
			case v == nil:
				return
			case v == http.ErrAbortHandler:
				panic(v)
			}
			incident := rand.Text()[:10]
			logger.ErrorContext(r.Context(), "panic in an HTTP handler", "method", r.Method, "path", r.URL.Path,
				"incident", incident, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if sw.wrote {
				panic(http.ErrAbortHandler)
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "internal error; the server log has the details, under incident %s\n", incident)
		}()
		next.ServeHTTP(sw, r)
	})
}

// statusWriter is a ResponseWriter that records whether the answer has
// begun. Unwrap lets http.ResponseController reach the writer beneath,
// to flush a stream.
type statusWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// streamableHandler serves server over Streamable HTTP.
//
// The 2026-07-28 protocol has no sessions: each request stands alone, and
// names its protocol version in the Mcp-Protocol-Version header, which
// go-sdk requires of it. Such a request goes to a stateless handler, since
// go-sdk's stateful one refuses it (-32022, protocol version not
// supported). Older clients open a session with initialize; a stateful
// handler keeps theirs, bounded by a [sessionLimiter] and closed when idle
// for lim.sessionIdle, so that the server can send them requests of its
// own (the elicitation that asks a person to confirm a call).
//
// With d.stateless (replicas on a shared store, behind a load balancer
// that may send each request to another), every request is served
// statelessly, older clients' too: no replica holds a session that
// another would need. An older client then cannot be sent a request: a
// call that needs a person's confirmation is refused with an error that
// says so (see confirm.go), and everything else works as it does with a
// session.
//
// The SDK's protection against DNS rebinding (a request to a loopback
// address whose Host is another name is refused) is on by default in
// both handlers, and stays on.
func (d *done) streamableHandler(server *mcp.Server, lim httpLimits) http.Handler {
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Logger:    d.logger,
		Stateless: true,
		// A 2026-07-28 call is its POST: once the client has gone, no
		// one can read its answer, and a call that waits (for a person's
		// answer on the page) must stop waiting, and give back its place.
		PropagateRequestCancellation: true,
	})
	if d.stateless {
		return stateless
	}
	stateful := newSessionLimiter(server, lim).wrap(d.sessionHandler(server, lim.sessionIdle))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sessionless(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// sessionHandler serves server over Streamable HTTP with sessions, closing
// a session idle for sessionIdle.
func (d *done) sessionHandler(server *mcp.Server, sessionIdle time.Duration) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Logger:         d.logger,
		SessionTimeout: sessionIdle,
	})
}

// firstSessionlessProtocol is the first MCP protocol version without
// sessions. Versions are dates, which compare as strings.
const firstSessionlessProtocol = "2026-07-28"

// sessionless reports whether r is a request of a protocol without
// sessions, by the version its Mcp-Protocol-Version header names.
func sessionless(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= firstSessionlessProtocol
}

// serveHTTP serves Done over HTTP on addr until ctx is done, with the
// address it listens on as d's base URL, which listening gets once it
// listens, if not nil.
func (d *done) serveHTTP(ctx context.Context, addr string, listening func(base string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// Clients compare the resource in the metadata with the URL they use:
	// name the host as the person did, with the port actually bound (for
	// -http 127.0.0.1:0), and localhost when listening on every address.
	tcp := ln.Addr().(*net.TCPAddr)
	host, _, _ := net.SplitHostPort(addr)
	switch {
	case host == "localhost":
	case tcp.IP.IsUnspecified():
		host = "localhost"
	default:
		host = tcp.IP.String()
	}
	d.baseURL = "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port))
	server, registry := d.newServer()
	srv := &http.Server{
		Handler: d.httpHandler(server, registry),
		// What net/http logs itself (a client's malformed request, say)
		// goes to the same log as the rest.
		ErrorLog: slog.NewLogLogger(d.logger.Handler(), slog.LevelWarn),
	}
	defaultHTTPLimits.configure(srv)
	d.logger.Info("serving MCP over HTTP", "url", d.baseURL+mcpPath)
	if listening != nil {
		listening(d.baseURL)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// serveStdio serves Done over stdin and stdout for the token k, until the
// client goes away (stdin ends) or ctx is done (SIGINT, SIGTERM), both of
// which are a normal end: nil. cred is how each call authenticates again,
// so that revoking k takes effect on the next call; the connection may
// call at most maxScope, whatever k allows.
func (d *done) serveStdio(ctx context.Context, k store.Token, cred stdioCredential, maxScope mcpeffect.Scope) error {
	// Not server.Run, which takes a signal for a failure: it logs an
	// error and returns one.
	session, err := d.connectStdio(ctx, k, cred, maxScope, &mcp.StdioTransport{})
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- session.Wait() }()
	select {
	case err = <-ended:
	case <-ctx.Done():
		session.Close()
		<-ended
		return nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		// What a person types into the terminal ends the connection as a
		// message that is not JSON-RPC.
		return fmt.Errorf("the connection on stdin ended: %w (Done speaks MCP to a host that starts it; it is not typed into)", err)
	}
	return nil
}

// connectStdio connects a new MCP server of d to the one client at the
// other end of t, as [done.serveStdio] does over stdin and stdout: for the
// token k, authenticated again with cred on every call, and capped at
// maxScope.
func (d *done) connectStdio(ctx context.Context, k store.Token, cred stdioCredential, maxScope mcpeffect.Scope, t mcp.Transport) (*mcp.ServerSession, error) {
	scope := min(k.Scope, maxScope)
	d.logger.Info("serving MCP over stdio", "token", k.Name, "kind", k.Kind, "owner", k.Owner, "scope", scope)
	d.baseURL = "" // this process serves no HTTP
	server, registry := d.newServer()
	// A stdio connection has no bearer token on each request: its scope is
	// set once, for the whole connection, and so is the token its logs
	// name.
	ctx = mcpeffect.WithConnectionScope(withStdioCredential(ctx, cred), scope)
	ctx = context.WithValue(ctx, logTokenKey{}, k)
	return server.Connect(ctx, d.enforcer(registry).IdempotencyTransport(t), nil)
}
