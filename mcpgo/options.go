package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testhook"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure the enforcement of [ServerOptions] and [Handler],
// once for both: give the same Options to each. A nil *Options is the
// zero value.
type Options struct {
	// MiddlewareOptions are the configuration of the one decision, as for
	// a go-sdk server (see [mcpeffect.MiddlewareOptions]). On mcp-go:
	//
	//   - Scope is called with the request's context and a nil request;
	//     if nil, the scope comes from the scope strings of the request's
	//     bearer token, the [auth.TokenInfo] that go-sdk's
	//     [auth.RequireBearerToken] puts in the HTTP request's context
	//     (which mcp-go's Streamable HTTP server hands on to every
	//     handler). The HTTP challenge of [Handler] calls it with the HTTP
	//     request's context, before mcp-go adds its own: a Scope that
	//     reads what an [server.HTTPContextFunc] adds sees it only in the
	//     handlers.
	//   - HideDenied filters the lists with mcp-go's hooks; a call of a
	//     tool that a list hides is refused as any other, naming the scope
	//     it needs, not answered "tool not found" as mcp-go's own tool
	//     filter would.
	//   - Confirm asks through mcp-go's form elicitation (see the package
	//     documentation for what that cannot promise).
	mcpeffect.MiddlewareOptions

	// Challenge, if non-nil, makes [Handler] answer a refused request
	// early, over HTTP, with the step-up challenge of the MCP
	// authorization specification (see [mcpeffect.Enforcer.Challenge]).
	Challenge *mcpeffect.ChallengeOptions
}

// enforcer returns the one decision that o configures for r.
func (o *Options) enforcer(r *mcpeffect.Registry) *mcpeffect.Enforcer {
	if o == nil {
		return r.Enforcer(nil)
	}
	return r.Enforcer(&o.MiddlewareOptions)
}

// The operations that the enforcer decides, as mcp-go names them.
const (
	methodCallTool     = string(mcp.MethodToolsCall)
	methodReadResource = string(mcp.MethodResourcesRead)
	methodGetPrompt    = string(mcp.MethodPromptsGet)
	methodComplete     = string(mcp.MethodCompletionComplete)
	methodSubscribe    = string(mcp.MethodResourcesSubscribe)
	methodListen       = string(mcp.MethodSubscriptionsListen)
)

// An adapter is the enforcement of one [ServerOptions].
type adapter struct {
	r     *mcpeffect.Registry
	enf   *mcpeffect.Enforcer
	scope func(context.Context, sdk.Request) mcpeffect.Scope
	hide  bool
	// runUnasked reports that a call which needs confirmation runs when
	// the client cannot ask a person (ConfirmOptions.RunIfClientCannotAsk).
	runUnasked bool
	// idem is the idempotency of the options; nil without it.
	idem *mcpeffect.IdempotencyOptions
	// hooks holds the Hooks that ServerOptions installed on each server
	// built with it, to tell when a later option replaced them.
	hooks sync.Map // *server.MCPServer to *server.Hooks
}

// caller returns who makes the request whose handler has ctx.
func (a *adapter) caller(ctx context.Context) mcpeffect.Caller {
	if a.scope != nil {
		return mcpeffect.Caller{Scope: a.scope(ctx, nil), Scoped: true}
	}
	if ti := auth.TokenInfoFromContext(ctx); ti != nil {
		return a.enf.TokenCaller(ti.Scopes)
	}
	return mcpeffect.Caller{}
}

// admitted reports whether the decision on ctx, which the middleware of
// ServerOptions put there, admitted the operation of method on what (a
// tool's or a prompt's name, a resource's URI).
func admitted(ctx context.Context, method, what string) bool {
	d, ok := mcpeffect.DecisionFromContext(ctx)
	if !ok || d.Operation.Method != method {
		return false
	}
	if method == methodReadResource {
		return d.Operation.URI == what
	}
	return d.Operation.Name == what
}

// ServerOptions returns the options that make an mcp-go server built with
// them enforce r: pass them to [server.NewMCPServer], after any
// [server.WithHooks] and before any other middleware, so that no other
// middleware sees a call that is refused. They install:
//
//   - tool handler middleware that decides every tools/call before the
//     tool's handler runs, by the one decision of mcpeffect
//     ([mcpeffect.Enforcer.Decide]): a tool that r does not classify is
//     refused for every scope (fail closed), so is a tool added with
//     mcp-go's AddTool alone; a tool whose effect depends on its
//     arguments is decided by the arguments its handler receives;
//   - resource and prompt handler middleware that does the same on
//     resources/read and prompts/get, where read-only is needed unless
//     [AddResource], [AddResourceTemplate] or [AddPrompt] declared more,
//     so that the zero Scope reads nothing;
//   - hooks that refuse a task-augmented tools/call the same way, since
//     mcp-go runs a task tool's handler without the middleware; that
//     refuse resources/subscribe (and each resource of
//     subscriptions/listen) to a caller who may not read the resource, and
//     completion/complete to one who may not get the prompt or read the
//     resource template it completes; and, with HideDenied, that filter
//     the lists.
//
// A refusal names the tool (resource, prompt) and the scope it needs,
// as [mcpeffect.DeniedError] does; served with [Listen], [ServeStdio] or
// [Handler], it reaches the client as the go-sdk integration sends it,
// code [mcpeffect.CodeDenied] with the DeniedError as data.
//
// If a later [server.WithHooks] replaces the hooks, every call is refused
// with an error that says so, since the lists would go unfiltered and
// task tools unchecked. ServerOptions panics where
// [mcpeffect.Registry.Enforcer] does (invalid ScopeNames, a Confirm Key
// too short).
func ServerOptions(r *mcpeffect.Registry, opts *Options) []server.ServerOption {
	a := &adapter{r: r, enf: opts.enforcer(r)}
	if opts != nil {
		a.scope, a.hide = opts.Scope, opts.HideDenied
		a.runUnasked = opts.Confirm != nil && opts.Confirm.RunIfClientCannotAsk
		a.idem = opts.Idempotency
	}
	return []server.ServerOption{
		a.installHooks,
		server.WithToolHandlerMiddleware(a.tools),
		server.WithResourceHandlerMiddleware(a.resources),
		server.WithPromptHandlerMiddleware(a.prompts),
	}
}

// installHooks adds the adapter's hooks to those of s.
func (a *adapter) installHooks(s *server.MCPServer) {
	h := s.GetHooks()
	if h == nil {
		h = &server.Hooks{}
		server.WithHooks(h)(s)
	}
	a.hooks.Store(s, h)
	h.AddOnRequestInitialization(a.early)
	// Every refusal carries the envelope of SEP-2643: the extension is
	// advertised beside the server's own, on both protocols.
	h.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if res != nil {
			advertise(&res.Capabilities)
		}
	})
	h.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		if res != nil {
			advertise(&res.Capabilities)
		}
	})
	// A tool whose undo is declared lists it in its _meta, as on go-sdk.
	h.AddAfterListTools(func(_ context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if res != nil {
			a.publishRecoveries(res)
		}
	})
	if !a.hide {
		return
	}
	h.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		// mcpeffecttest.CheckClient lists the server's tools as they
		// are, on a connection it makes itself.
		if res == nil || testhook.UnfilteredList(ctx) {
			return
		}
		c := a.caller(ctx)
		res.Tools = keep(res.Tools, func(t mcp.Tool) bool {
			return a.enf.Listed(ctx, mcpeffect.Operation{Method: methodCallTool, Name: t.Name}, c)
		})
	})
	h.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		if res == nil {
			return
		}
		c := a.caller(ctx)
		res.Resources = keep(res.Resources, func(r mcp.Resource) bool {
			return a.enf.Listed(ctx, mcpeffect.Operation{Method: methodReadResource, URI: r.URI}, c)
		})
	})
	h.AddAfterListResourceTemplates(func(ctx context.Context, _ any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
		if res == nil {
			return
		}
		c := a.caller(ctx)
		res.ResourceTemplates = keep(res.ResourceTemplates, func(t mcp.ResourceTemplate) bool {
			return t.URITemplate != nil &&
				a.enf.Listed(ctx, mcpeffect.Operation{Method: methodReadResource, URI: t.URITemplate.Raw(), Template: true}, c)
		})
	})
	h.AddAfterListPrompts(func(ctx context.Context, _ any, _ *mcp.ListPromptsRequest, res *mcp.ListPromptsResult) {
		if res == nil {
			return
		}
		c := a.caller(ctx)
		res.Prompts = keep(res.Prompts, func(p mcp.Prompt) bool {
			return a.enf.Listed(ctx, mcpeffect.Operation{Method: methodGetPrompt, Name: p.Name}, c)
		})
	})
}

// advertise adds the extension of SEP-2643 to caps, those of one result,
// in a map of their own: the server's is shared by every session.
func advertise(caps *mcp.ServerCapabilities) {
	ext := maps.Clone(caps.Extensions)
	if ext == nil {
		ext = map[string]any{}
	}
	ext[mcpeffect.AuthorizationDenialsExtension] = map[string]any{}
	caps.Extensions = ext
}

// keep returns a new slice of the items that ok keeps, in their order,
// never nil: a list is a required array.
func keep[T any](items []T, ok func(T) bool) []T {
	out := make([]T, 0, len(items))
	for _, it := range items {
		if ok(it) {
			out = append(out, it)
		}
	}
	return out
}

// hooksReplaced returns the error that refuses every request of a server
// whose hooks are no longer those that ServerOptions installed, or nil.
func (a *adapter) hooksReplaced(ctx context.Context) error {
	s := server.ServerFromContext(ctx)
	if s == nil {
		return nil
	}
	h, ok := a.hooks.Load(s)
	if ok && s.GetHooks() == h {
		return nil
	}
	return errHooksReplaced
}

var errHooksReplaced = &hooksError{}

type hooksError struct{}

func (*hooksError) Error() string {
	return "mcpgo: the server's hooks are not those that mcpgo.ServerOptions installed (a later server.WithHooks replaced them), " +
		"so its lists would go unfiltered and its task tools unchecked: every request is refused; pass server.WithHooks before mcpgo.ServerOptions"
}

// tools is the tool handler middleware of ServerOptions.
func (a *adapter) tools(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := a.hooksReplaced(ctx); err != nil {
			return nil, err
		}
		d := a.enf.Decide(ctx, a.callOf(req), a.caller(ctx))
		if d.Denied != nil {
			return nil, refuse(ctx, d.Denied)
		}
		call, kept, err := a.beginOnce(ctx, req, d)
		if kept != nil || err != nil {
			return kept, err
		}
		if d.Confirm {
			if res, err := a.confirm(ctx, req, d); res != nil || err != nil {
				// The handler did not run: the key may be sent again.
				a.storeError(ctx, call.Abandon(ctx))
				return res, err
			}
		}
		finished := false
		defer func() {
			if !finished {
				// The handler panicked: whatever it did stays done.
				a.storeError(ctx, call.Panicked(ctx))
			}
		}()
		res, err := next(mcpeffect.WithDecision(ctx, d), req)
		finished = true
		a.finishOnce(ctx, call, res, err)
		return res, err
	}
}

// callOf returns the operation of a tools/call. The arguments of a tool
// whose effect depends on them are those its handler receives, in JSON:
// mcp-go hands a handler the arguments decoded (GetArguments, and
// BindArguments, which encodes them again to decode them into a struct),
// so the rule reads what the handler will act on.
func (a *adapter) callOf(req mcp.CallToolRequest) mcpeffect.Operation {
	op := mcpeffect.Operation{Method: methodCallTool, Name: req.Params.Name}
	if _, ok := a.r.Rule(op.Name); ok {
		op.Arguments = argumentsJSON(req)
	}
	return op
}

// argumentsJSON returns the arguments of req in JSON, {} for none. What
// cannot be encoded is null, which a rule counts as the worst case.
func argumentsJSON(req mcp.CallToolRequest) json.RawMessage {
	if req.Params.Arguments == nil {
		return json.RawMessage("{}")
	}
	raw, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return json.RawMessage("null")
	}
	return raw
}

// early decides, before mcp-go handles it, each request that no handler
// middleware of mcp-go sees: a task-augmented tools/call, since mcp-go
// runs the handler of a tool added with AddTaskTool without the tool
// handler middleware, and the refusal of one that it runs with the
// middleware would come only with the task's result; resources/subscribe,
// the 2026-07-28 subscriptions/listen and completion/complete, which
// [mcpeffect.Enforcer.Decide] decides by what they tell.
func (a *adapter) early(ctx context.Context, id any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok || plainlyNotEarly(raw) {
		return nil
	}
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	// A message mcp-go cannot decode either is refused by mcp-go.
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	if m.Method == string(mcp.MethodToolsList) {
		// With params or without.
		return a.checkRecoveries(ctx)
	}
	if len(m.Params) == 0 || string(m.Params) == "null" {
		return nil
	}
	// The params of each method are decoded alone, into the fields that
	// mcp-go reads, so that no other field can make the decoding fail and
	// the request pass unchecked; params that still cannot be decoded are
	// refused, not let through.
	var ops []mcpeffect.Operation
	switch m.Method {
	case string(mcp.MethodToolsCall):
		var p struct {
			Task json.RawMessage `json:"task"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return errUnreadable
		}
		if a.idem != nil {
			if err := uncarried(m.Params); err != nil {
				return err
			}
		}
		if len(p.Task) == 0 || string(p.Task) == "null" {
			return nil
		}
		return a.taskCall(ctx, raw)
	case string(mcp.MethodInitialize), string(mcp.MethodServerDiscover):
		// Listen and Handler carry the draft's key, and declare that
		// they do in the result, which mcp-go's types cannot hold.
		if rs, _ := ctx.Value(refusalsKey{}).(*refusals); rs != nil && a.idem != nil {
			rs.expectDeclare(id)
		}
		return nil
	case string(mcp.MethodResourcesSubscribe):
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return errUnreadable
		}
		ops = append(ops, mcpeffect.Operation{Method: methodSubscribe, URI: p.URI})
	case string(mcp.MethodSubscriptionsListen):
		var p struct {
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return errUnreadable
		}
		ops = append(ops, mcpeffect.Operation{Method: methodListen, URIs: p.Notifications.ResourceSubscriptions})
	case string(mcp.MethodCompletionComplete):
		var p struct {
			Ref struct {
				Type string `json:"type"`
				Name string `json:"name"`
				URI  string `json:"uri"`
			} `json:"ref"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return errUnreadable
		}
		switch p.Ref.Type {
		case "ref/prompt":
			ops = append(ops, mcpeffect.Operation{Method: methodComplete, Name: p.Ref.Name})
		case "ref/resource":
			ops = append(ops, mcpeffect.Operation{Method: methodComplete, URI: p.Ref.URI})
		}
	}
	if len(ops) == 0 {
		return nil
	}
	if err := a.hooksReplaced(ctx); err != nil {
		return err
	}
	c := a.caller(ctx)
	for _, op := range ops {
		if d := a.enf.Decide(ctx, op, c); d.Denied != nil {
			return refuse(ctx, d.Denied)
		}
	}
	return nil
}

// The methods that early decides, as they are written in a message.
var earlyMethods = []string{
	string(mcp.MethodToolsCall), string(mcp.MethodResourcesSubscribe),
	string(mcp.MethodSubscriptionsListen), string(mcp.MethodCompletionComplete),
	// Not decided, but seen: a listing's recoveries are checked, and the
	// answer to server/discover declares the idempotency capability (as
	// the answer to initialize does: see initializeMethod).
	string(mcp.MethodToolsList), string(mcp.MethodServerDiscover),
}

// plainlyNotEarly reports whether raw, a message that mcp-go decoded
// (the hook runs after it did), is certainly none that early decides,
// without decoding it: the path of every call, which should cost little,
// and little more for larger arguments. It looks for what could make the
// message one of early's, with the searches of package bytes:
//
//   - a backslash: an escape may spell a method or a key; and the long s
//     and the Kelvin sign, which encoding/json (mcp-go's decoder, which
//     matches keys regardless of case) takes for an s and a k: anything
//     else outside ASCII cannot spell a method or the key of a task;
//   - then, since every method early decides has a slash, and a slash is
//     found in JSON only inside a string, each string around a slash: if
//     none is one of early's methods, the message is none of them;
//   - and for a tools/call, a string that could be the key of its task:
//     "task" in any case, between quotes, which with no escapes are
//     exactly where strings start and end.
//
// Anything else is decoded.
func plainlyNotEarly(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') >= 0 || bytes.Contains(raw, longS) || bytes.Contains(raw, kelvin) || bytes.Contains(raw, initializeMethod) {
		return false
	}
	method := -1
	for from := 0; ; {
		i := bytes.IndexByte(raw[from:], '/')
		if i < 0 {
			break
		}
		slash := from + i
		start := bytes.LastIndexByte(raw[:slash], '"') + 1
		end := bytes.IndexByte(raw[slash:], '"')
		if start == 0 || end < 0 {
			return false // a slash outside a string: not JSON
		}
		end += slash
		for m, name := range earlyMethods {
			if string(raw[start:end]) == name {
				if method >= 0 && method != m {
					return false // two: let the decoding say which
				}
				method = m
			}
		}
		from = end + 1
	}
	switch {
	case method < 0:
		return true
	case earlyMethods[method] == string(mcp.MethodToolsCall):
		// A task, or the draft's idempotency key, which mcp-go would drop
		// where no carrier moved it (see uncarried).
		return !hasTaskKey(raw) && !bytes.Contains(raw, idempotencyKeyMember)
	}
	return false
}

var (
	longS                = []byte("\u017f") // ſ, which folds to s
	kelvin               = []byte("\u212a") // K, which folds to k
	idempotencyKeyMember = []byte(`"` + mcpeffect.IdempotencyKeyParam + `"`)
	// initializeMethod, the one method early sees without a slash, is
	// looked for as a string of its own.
	initializeMethod = []byte(`"` + string(mcp.MethodInitialize) + `"`)
)

// hasTaskKey reports whether raw, JSON without escapes, holds the string
// "task" in any case of ASCII: a k, in either case, between "tas" and a
// quote, and a quote before them.
func hasTaskKey(raw []byte) bool {
	for _, k := range [...]byte{'k', 'K'} {
		for from := 0; ; {
			i := bytes.IndexByte(raw[from:], k)
			if i < 0 {
				break
			}
			at := from + i
			if at >= 4 && at+1 < len(raw) && raw[at+1] == '"' && raw[at-4] == '"' && bytes.EqualFold(raw[at-3:at], tas) {
				return true
			}
			from = at + 1
		}
	}
	return false
}

var tas = []byte("tas")

// errUnreadable refuses a request whose params the check cannot read:
// what it cannot read, it cannot let through.
var errUnreadable = errors.New("mcpgo: the request's params cannot be read, so the scope it needs cannot be decided: refused")

// taskCall decides a task-augmented tools/call, raw, before mcp-go
// creates its task.
func (a *adapter) taskCall(ctx context.Context, raw json.RawMessage) error {
	if err := a.hooksReplaced(ctx); err != nil {
		return err
	}
	req := mcp.CallToolRequest{}
	if json.Unmarshal(raw, &req) != nil {
		return errUnreadable
	}
	d := a.enf.Decide(ctx, a.callOf(req), a.caller(ctx))
	if d.Denied != nil {
		return refuse(ctx, d.Denied)
	}
	if a.idem != nil && req.Params.Meta != nil {
		if _, has := req.Params.Meta.AdditionalFields[mcpeffect.IdempotencyKeyMetaKey]; has {
			// The task runs after the call is answered, without the
			// middleware: its key could not be kept.
			return refuseIdempotency(ctx, &mcpeffect.IdempotencyError{Type: mcpeffect.IdempotencyUnavailable,
				Detail: "a task-augmented call cannot be run once by its key: send it without a task, or without a key"})
		}
	}
	if d.Confirm {
		// A task runs after its call has been answered: there is no
		// call left in which to ask. Refuse rather than run unasked.
		a.enf.Answered(ctx, d, "unsupported")
		return notConfirmed(ctx, &mcpeffect.NotConfirmedError{Tool: req.Params.Name, Effect: d.Effect, Answer: "unsupported",
			Detail: "a task-augmented call cannot be confirmed"})
	}
	return nil
}

// resources is the resource handler middleware of ServerOptions.
func (a *adapter) resources(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		if err := a.hooksReplaced(ctx); err != nil {
			return nil, err
		}
		d := a.enf.Decide(ctx, mcpeffect.Operation{Method: methodReadResource, URI: req.Params.URI}, a.caller(ctx))
		if d.Denied != nil {
			return nil, refuse(ctx, d.Denied)
		}
		return next(mcpeffect.WithDecision(ctx, d), req)
	}
}

// prompts is the prompt handler middleware of ServerOptions.
func (a *adapter) prompts(next server.PromptHandlerFunc) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if err := a.hooksReplaced(ctx); err != nil {
			return nil, err
		}
		d := a.enf.Decide(ctx, mcpeffect.Operation{Method: methodGetPrompt, Name: req.Params.Name}, a.caller(ctx))
		if d.Denied != nil {
			return nil, refuse(ctx, d.Denied)
		}
		return next(mcpeffect.WithDecision(ctx, d), req)
	}
}

// refuse returns the error that refuses a request with d, recorded for
// the transport's wrapper to send with its code and data.
func refuse(ctx context.Context, d *mcpeffect.DeniedError) error {
	code, msg, data := d.JSONRPCError()
	r := &refusal{wire: rpcError{Code: int(code), Message: msg, Data: data}, cause: d}
	record(ctx, r)
	return r
}

// notConfirmed returns the error of a call that did not run for want of
// confirmation, recorded as refuse records a refusal.
func notConfirmed(ctx context.Context, n *mcpeffect.NotConfirmedError) error {
	code, msg, data := n.JSONRPCError()
	r := &refusal{wire: rpcError{Code: int(code), Message: msg, Data: data}, cause: n}
	record(ctx, r)
	return r
}
