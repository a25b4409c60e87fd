package mcpeffect

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The idempotency of the go-sdk middleware: [IdempotencyOptions] over
// go-sdk's requests. The middleware begins a call with a key when its
// decision is final; for a tool whose effect its handler's input decides,
// the wrapper of AddTool begins it once that input has decided it. Either
// way the middleware, around the rest of the chain, keeps what the call
// answered, or answers a repeat with what was kept.

// onceState is the idempotency of one call with a key, shared by the
// middleware and the wrapper of the tool's handler, on one goroutine.
type onceState struct {
	key, caller string
	call        *IdempotentCall // the call claimed its key
	replay      *CallOutcome    // the wrapper found the key's answer
	refusal     error           // the wrapper found the key refused
	// started reports that the wrapper of AddTool let the handler run.
	started bool
}

// errReplayed is what the wrapper of a tool returns in place of running
// its handler for a repeat: the middleware answers the kept outcome
// instead.
var errReplayed = &jsonrpc.Error{Code: CodeIdempotency, Message: "mcpeffect: answered from the call that first carried the idempotency key"}

// callOnce passes req, a tools/call that d allowed, on to next, at most
// once for its idempotency key (see IdempotencyOptions).
func (e *Enforcer) callOnce(ctx context.Context, d Decision, method string, req *mcp.CallToolRequest, next mcp.MethodHandler) (mcp.Result, error) {
	key, has, err := IdempotencyKeyFromMeta(req.Params.Meta)
	if err != nil {
		return nil, idempotencyRPCError(err)
	}
	if !has || req.Params.RequestState != "" || len(req.Params.InputResponses) > 0 {
		// No key, or a continuation of multi round-trip requests, which
		// SEP-3182 leaves out of its scope.
		return next(&decisionContext{ctx, d}, method, req)
	}
	st := &onceState{key: key, caller: e.idem.callerOf(ctx, req)}
	if !d.pending {
		call, replay, err := e.BeginIdempotent(ctx, d, key, st.caller)
		switch {
		case err != nil:
			return nil, idempotencyRPCError(err)
		case replay != nil:
			return replay.toolResult()
		case call == nil:
			// A read or an idempotent write: it runs again.
			return next(&decisionContext{ctx, d}, method, req)
		}
		st.call = call
	}
	d.once = st
	finished := false
	defer func() {
		if !finished {
			// The handler panicked: whatever it did stays done.
			if err := st.call.Panicked(ctx); err != nil && e.opts.Idempotency.OnStoreError != nil {
				e.opts.Idempotency.OnStoreError(ctx, err)
			}
		}
	}()
	res, err := next(&decisionContext{ctx, d}, method, req)
	finished = true
	switch {
	case st.replay != nil:
		return st.replay.toolResult()
	case st.refusal != nil:
		return nil, st.refusal
	case st.call == nil:
		return res, err
	}
	var end error
	if e.ran(st, req.Params.Name, res) {
		end = st.call.Finish(ctx, outcomeOf(res, err))
	} else {
		end = st.call.Abandon(ctx)
	}
	if end != nil && e.opts.Idempotency.OnStoreError != nil {
		e.opts.Idempotency.OnStoreError(ctx, end)
	}
	return res, err
}

// ran reports whether the call of tool that st began ran, and answered
// res: not when it asks the client for input first (a multi round-trip
// request, which is not finished), nor, for a tool added with AddTool or
// AddToolHandler, when its wrapper did not let the handler run (a
// refusal, a person who declined, arguments that the schema refused). A
// tool added with go-sdk alone has no wrapper to tell, and counts as run.
func (e *Enforcer) ran(st *onceState, tool string, res mcp.Result) bool {
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && (r.NeedsInput() || r.InputRequests != nil) {
		return false
	}
	return st.started || !e.r.lookup(tool).wrapped
}

// beginPending begins, in the wrapper of a tool, the call with a key
// whose effect its handler's input has just decided, d; it returns the
// error that stops the wrapper from running the handler, or nil.
func (e *Enforcer) beginPending(ctx context.Context, st *onceState, d Decision) error {
	if st.call != nil {
		return nil
	}
	call, replay, err := e.BeginIdempotent(ctx, d, st.key, st.caller)
	switch {
	case err != nil:
		st.refusal = idempotencyRPCError(err)
		return st.refusal
	case replay != nil:
		st.replay = replay
		return errReplayed
	}
	st.call = call
	return nil
}

// idempotencyRPCError returns the JSON-RPC error of err, an
// *IdempotencyError.
func idempotencyRPCError(err error) error {
	var ie *IdempotencyError
	if errors.As(err, &ie) {
		return ie.rpcError()
	}
	return err
}

// outcomeOf returns what a go-sdk tools/call answered, as the wire has
// it.
func outcomeOf(res mcp.Result, err error) CallOutcome {
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			if we == err {
				return CallOutcome{Error: we}
			}
			// As go-sdk sends it: the wrapped error's code, the outer
			// message.
			return CallOutcome{Error: &jsonrpc.Error{Code: we.Code, Message: err.Error()}}
		}
		return CallOutcome{Error: &jsonrpc.Error{Message: err.Error()}}
	}
	raw, merr := json.Marshal(res)
	if merr != nil {
		return CallOutcome{Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpeffect: the result cannot be encoded: " + merr.Error()}}
	}
	return CallOutcome{Result: raw}
}

// toolResult returns o as a go-sdk middleware answers it.
func (o *CallOutcome) toolResult() (mcp.Result, error) {
	if o.Error != nil {
		return nil, &jsonrpc.Error{Code: o.Error.Code, Message: o.Error.Message, Data: o.Error.Data}
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(o.Result, &res); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpeffect: the kept result of the call cannot be read: " + err.Error()}
	}
	return &res, nil
}

// carriedRequest reports whether req, an initialize or server/discover
// request, came through a carrier of the idempotency key.
func carriedRequest(req mcp.Request) bool {
	var meta mcp.Meta
	switch p := req.GetParams().(type) {
	case *mcp.InitializeParams:
		if p != nil {
			meta = p.Meta
		}
	case *mcp.DiscoverParams:
		if p != nil {
			meta = p.Meta
		}
	}
	carried, _ := meta[idempotencyCarriedMetaKey].(bool)
	return carried
}

// idempotencyAdvertised is the result of initialize or server/discover
// with capabilities.tools.idempotency, as SEP-3182 declares the
// capability: go-sdk's ToolCapabilities has no such field, so the result
// gets it as it is encoded.
type idempotencyAdvertised struct{ mcp.Result }

func (r *idempotencyAdvertised) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	return withIdempotencyCapability(raw)
}

// withIdempotencyCapability returns raw, a result with capabilities, with
// capabilities.tools.idempotency; a server without tools gets nothing.
func withIdempotencyCapability(raw []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(top["capabilities"], &caps) != nil || caps == nil {
		return raw, nil
	}
	var tools map[string]json.RawMessage
	if json.Unmarshal(caps["tools"], &tools) != nil || tools == nil {
		return raw, nil
	}
	if _, ok := tools[IdempotencyCapability]; ok {
		return raw, nil
	}
	tools[IdempotencyCapability] = json.RawMessage("{}")
	var err error
	if caps["tools"], err = json.Marshal(tools); err != nil {
		return nil, err
	}
	if top["capabilities"], err = json.Marshal(caps); err != nil {
		return nil, err
	}
	return json.Marshal(top)
}
