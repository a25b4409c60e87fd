package main

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// The write rate of one tree of tokens (a token made with the command line
// and all that descend from it, see [store.Token.Root]), by default: 20
// writes a second kept up, after a burst of 60. A person clicks far below
// that, and an agent at work makes a few writes a second (a step, a
// comment, an event of its run); a burst of 60 lets a plan of many steps
// be written at once. A loop that writes without end is slowed to 20 a
// second, so that one tree cannot take the one writer of SQLite from
// every other. The rate is the tree's, not each token's: a token may mint
// others (up to [store.MaxLiveTokens] in its tree), and a rate for each
// would multiply by as many. Reads are not limited: they do not queue
// behind one writer, and the admission queue shares the cores among them.
// serve -write-rate sets another rate, or none.
const (
	defaultWriteRate  rate.Limit = 20
	defaultWriteBurst int        = 60
)

// limitWrites is receiving middleware that answers a write past the rate
// of its token's tree (see [writelimit.Limiter]) with a tool error that
// says when to try again, before the tool runs. A write is a call whose
// effect, as the decision that admitted it computed it, is not Read. One
// limiter serves every server of d, so that a token's rate is one over
// stdio and HTTP. It comes after [done.identify], which finds the token.
// A tool error rather than a JSON-RPC error keeps the protocol as it is:
// the call was understood and refused, as a refused argument is, and the
// model reads why.
func (d *done) limitWrites(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		dec, ok := mcpeffect.DecisionFromContext(ctx)
		if method != "tools/call" || !ok || dec.Effect&mcpeffect.Read != 0 {
			return next(ctx, method, req)
		}
		k := callerToken(ctx)
		if wait := d.writes.Reserve(cmp.Or(k.Root, k.ID), time.Now()); wait > 0 {
			return toolErrorResult(fmt.Sprintf("done: tool %q refused: this token, with those minted from the same command-line token, writes faster than Done allows (%g writes a second after a burst of %d): "+
				"try again in %v; reads are not limited", dec.Operation.Name, float64(d.writes.Rate()), d.writes.Burst(), wait.Round(time.Millisecond))), nil
		}
		return next(ctx, method, req)
	}
}

// toolErrorResult is a tool call's result that reports msg as its error: how
// go-sdk answers arguments the schema refuses, and Done a call past one
// of its bounds.
func toolErrorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
