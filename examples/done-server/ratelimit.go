package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
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
// second, which the one writer connection of SQLite serves in a few
// percent of its time (a write takes about a millisecond), so that one
// tree cannot take the writer from every other. The rate is the tree's,
// not each token's: a token may mint others (up to [store.MaxLiveTokens]
// in its tree), and a rate for each would multiply by as many. Reads are
// not limited: they do not queue behind one writer, and the admission
// queue (done.admit) shares the cores among them.
const (
	defaultWriteRate  rate.Limit = 20
	defaultWriteBurst int        = 60
)

// serveWriteRate is the write rate of a tree of tokens that serve sets
// (see [config] writeRate): zero, the default. Only a test sets it, from
// TestMain, for the done-server processes of the load test, which
// measure Done and not the limit; no flag or variable of the command
// changes it.
var serveWriteRate rate.Limit

// writeLimiter bounds the tool calls that write (whose effect is not Read)
// of each tree of tokens: rate a second, kept up, after a burst of burst.
// It is safe for concurrent use.
//
// It keeps one [rate.Limiter] a tree that wrote lately, under the id of
// its root token. A limiter left alone for burst/rate is full again, the
// same as a new one, so it is dropped: the map is swept once a sweepEvery,
// and out of turn when it has grown to twice what the last sweep left
// (maxIdleEntries at least), so that sweeps cost O(1) a write however many
// tokens write at once. It holds at most twice the tokens that wrote in
// the last few seconds, or maxIdleEntries.
type writeLimiter struct {
	logger *slog.Logger
	rate   rate.Limit
	burst  int
	// full is how long a limiter takes to fill up again from empty.
	full time.Duration

	mu        sync.Mutex
	tokens    map[string]*tokenRate
	lastSweep time.Time
	sweepAt   int // the size of tokens that sweeps it out of turn
}

// tokenRate is the write rate of one tree of tokens.
type tokenRate struct {
	lim  *rate.Limiter
	last time.Time // of its last write, allowed or refused
	// refusing is true from its first refused write to its next allowed
	// one: the log has one line for each run of refusals, not one a call.
	refusing bool
}

const (
	sweepEvery = time.Minute
	// maxIdleEntries is how many limiters the map may hold before it is
	// swept out of turn.
	maxIdleEntries = 10000
)

// newWriteLimiter returns a limiter of rate writes a second after burst,
// per token; rate.Inf limits nothing, and a zero rate or burst stands for
// the default.
func newWriteLimiter(logger *slog.Logger, r rate.Limit, burst int) *writeLimiter {
	if r == 0 {
		r = defaultWriteRate
	}
	if burst <= 0 {
		burst = defaultWriteBurst
	}
	full := time.Duration(0)
	if r != rate.Inf {
		full = time.Duration(float64(burst) / float64(r) * float64(time.Second))
	}
	return &writeLimiter{logger: logger, rate: r, burst: burst, full: full, tokens: map[string]*tokenRate{}}
}

// middleware returns receiving middleware that answers a write past its
// token's tree's rate with a tool error that says when to try again, before the
// tool runs; registry tells the writes. One writeLimiter serves every
// server of a process, so that a token's rate is one over stdio and HTTP.
// It comes after [done.identify], which finds the token. A tool error
// rather than a JSON-RPC error keeps the protocol as it is: the call was
// understood and refused, as a refused argument is, and the model reads
// why.
func (l *writeLimiter) middleware(registry *mcpeffect.Registry) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return l.limit(registry, next)
	}
}

func (l *writeLimiter) limit(registry *mcpeffect.Registry, next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" || l.rate == rate.Inf {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
		if !ok || p == nil {
			return next(ctx, method, req)
		}
		// An unknown tool is go-sdk's to refuse, and a read is free.
		if e, ok := registry.Effect(p.Name); !ok || e&mcpeffect.Read != 0 {
			return next(ctx, method, req)
		}
		k := callerToken(ctx)
		tree := cmp.Or(k.Root, k.ID)
		if wait := l.reserve(tree, time.Now()); wait > 0 {
			msg := fmt.Sprintf("done: tool %q refused: this token, with those minted from the same command-line token, writes faster than Done allows (%g writes a second after a burst of %d): "+
				"try again in %v; reads are not limited", p.Name, float64(l.rate), l.burst, wait.Round(time.Millisecond))
			return toolErrorResult(msg), nil
		}
		return next(ctx, method, req)
	}
}

// reserve takes one write from the allowance of the tree of root token id
// at now, and
// returns 0, or how long until it could be taken if it cannot be now.
func (l *writeLimiter) reserve(id string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= sweepEvery || len(l.tokens) >= max(l.sweepAt, maxIdleEntries) {
		l.sweep(now)
	}
	t := l.tokens[id]
	if t == nil {
		t = &tokenRate{lim: rate.NewLimiter(l.rate, l.burst)}
		l.tokens[id] = t
	}
	t.last = now
	r := t.lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if wait == 0 {
		t.refusing = false
		return 0
	}
	// Refused: the write is not taken, so that a client that retries
	// too soon does not push its next allowed write further away.
	r.CancelAt(now)
	if !t.refusing {
		t.refusing = true
		l.logger.Warn("writes refused: past the write rate of a tree of tokens", "root_token_id", id, "rate", float64(l.rate), "burst", l.burst)
	}
	return wait
}

// sweep drops the limiters full again at now: those of tokens that have
// not written for the time a limiter takes to fill up.
func (l *writeLimiter) sweep(now time.Time) {
	l.lastSweep = now
	for id, t := range l.tokens {
		if now.Sub(t.last) >= l.full {
			delete(l.tokens, id)
		}
	}
	l.sweepAt = 2 * len(l.tokens)
}
