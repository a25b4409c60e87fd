package mcpgo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Idempotency on mcp-go ([mcpeffect.IdempotencyOptions], SEP-3182): mcp-go
// decodes a tools/call into a struct without idempotencyKey, as go-sdk
// does, so [Listen], [ServeStdio] and [Handler] carry the draft's field
// into the params' _meta before mcp-go reads the request
// ([mcpeffect.CarryIdempotencyKeys]), and declare
// capabilities.tools.idempotency in the results of initialize and
// server/discover, which mcp-go's types cannot carry either. The tool
// handler middleware then runs each call with a key once, by the same
// [mcpeffect.Enforcer.BeginIdempotent] as the go-sdk middleware.

// beginOnce begins the call req, that d allowed, with its idempotency
// key, if any: it returns the call to finish, or what to answer instead
// of running the handler (a kept answer, or a refusal).
func (a *adapter) beginOnce(ctx context.Context, req mcp.CallToolRequest, d mcpeffect.Decision) (*mcpeffect.IdempotentCall, *mcp.CallToolResult, error) {
	if a.idem == nil {
		return nil, nil, nil
	}
	var meta map[string]any
	if req.Params.Meta != nil {
		meta = req.Params.Meta.AdditionalFields
	}
	key, has, err := mcpeffect.IdempotencyKeyFromMeta(meta)
	switch {
	case err != nil:
		return nil, nil, refuseIdempotency(ctx, err)
	case !has || req.Params.RequestState != "" || len(req.Params.InputResponses) > 0:
		// No key, or a continuation of multi round-trip requests,
		// outside the draft's scope.
		return nil, nil, nil
	}
	d.Operation.Arguments = req.Params.RawArguments
	if d.Operation.Arguments == nil {
		d.Operation.Arguments = argumentsJSON(req)
	}
	call, kept, err := a.enf.BeginIdempotent(ctx, d, key, a.idemCaller(ctx, req))
	switch {
	case err != nil:
		return nil, nil, refuseIdempotency(ctx, err)
	case kept != nil:
		res, err := replay(ctx, kept)
		return nil, res, err
	}
	return call, nil, nil
}

// replay returns the kept answer o as the middleware answers it.
func replay(ctx context.Context, o *mcpeffect.CallOutcome) (*mcp.CallToolResult, error) {
	if o.Error != nil {
		r := &refusal{wire: rpcError{Code: int(o.Error.Code), Message: o.Error.Message, Data: o.Error.Data}}
		record(ctx, r)
		return nil, r
	}
	raw := json.RawMessage(o.Result)
	res, err := mcp.ParseCallToolResult(&raw)
	if err != nil {
		return nil, fmt.Errorf("mcpgo: the kept result of the call cannot be read: %v", err)
	}
	return res, nil
}

// refuseIdempotency returns the error that refuses a call for its key,
// err, an *mcpeffect.IdempotencyError, recorded as refuse records a
// refusal.
func refuseIdempotency(ctx context.Context, err error) error {
	var ie *mcpeffect.IdempotencyError
	if !errors.As(err, &ie) {
		return err
	}
	code, msg, data := ie.JSONRPCError()
	r := &refusal{wire: rpcError{Code: int(code), Message: msg, Data: data}, cause: ie}
	record(ctx, r)
	return r
}

// finishOnce keeps what the call answered, res or err, for the repeats of
// its key; a result that asks for input first keeps nothing.
func (a *adapter) finishOnce(ctx context.Context, call *mcpeffect.IdempotentCall, res *mcp.CallToolResult, err error) {
	if call == nil {
		return
	}
	var end error
	switch {
	case err == nil && res != nil && res.ResultType == mcp.ResultTypeInputRequired:
		end = call.Abandon(ctx)
	case err != nil:
		var r *refusal
		wire := rpcError{Code: mcp.INTERNAL_ERROR, Message: err.Error()} // as mcp-go sends a handler's error
		if errors.As(err, &r) {
			wire = r.wire
		}
		end = call.Finish(ctx, mcpeffect.CallOutcome{Error: wire.jsonrpc()})
	default:
		raw, merr := json.Marshal(res)
		if merr != nil {
			raw, _ = json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("mcpgo: the result cannot be encoded: " + merr.Error())}, IsError: true})
		}
		end = call.Finish(ctx, mcpeffect.CallOutcome{Result: raw})
	}
	a.storeError(ctx, end)
}

func (a *adapter) storeError(ctx context.Context, err error) {
	if err != nil && a.idem.OnStoreError != nil {
		a.idem.OnStoreError(ctx, err)
	}
}

// idemCaller returns who makes req, as the go-sdk middleware identifies
// callers for their keys: the Caller of the options (called with a nil
// request), the bearer token ([mcpeffect.TokenIdempotencyCaller]), the
// connection over stdio served by Listen, or else the session.
func (a *adapter) idemCaller(ctx context.Context, req mcp.CallToolRequest) string {
	if a.idem.Caller != nil {
		return a.idem.Caller(ctx, nil)
	}
	if c := mcpeffect.TokenIdempotencyCaller(auth.TokenInfoFromContext(ctx), req.Header.Get("Authorization")); c != "" {
		return c
	}
	if rs, _ := ctx.Value(refusalsKey{}).(*refusals); rs != nil && rs.connection != "" {
		return "session:" + rs.connection
	}
	if s := server.ClientSessionFromContext(ctx); s != nil && s.SessionID() != "" {
		return "session:" + s.SessionID()
	}
	return "session:none"
}

// uncarried returns the error that refuses a tools/call whose params,
// raw, still hold the draft's idempotencyKey: no carrier moved it, so
// mcp-go would drop it and run the call as many times as it is sent.
func uncarried(params json.RawMessage) error {
	if !bytes.Contains(params, []byte(mcpeffect.IdempotencyKeyParam)) && !bytes.Contains(params, []byte(`\u`)) {
		return nil
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	if _, ok := p[mcpeffect.IdempotencyKeyParam]; !ok {
		return nil
	}
	return errUncarried
}

var errUncarried = errors.New("mcpgo: the call's params.idempotencyKey cannot reach the check (the server is not served with mcpgo.Listen, ServeStdio or Handler, which carry it), " +
	"so the call would run as many times as it is sent: refused; serve the server with them, or send the key in _meta under " + mcpeffect.IdempotencyKeyMetaKey)
