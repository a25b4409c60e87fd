// Package writelimit bounds the rate of the writes of each of many keys
// (in Done, each tree of tokens), with one token bucket a key that wrote
// lately. It is there for Done's load, a single writer of SQLite shared
// by every caller: see the README beside this file.
package writelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// A Limiter bounds the writes of each key: rate a second, kept up, after
// a burst of burst. It is safe for concurrent use.
//
// It keeps one [rate.Limiter] a key that wrote lately. A limiter left
// alone for burst/rate is full again, the same as a new one, so it is
// dropped: the map is swept once a sweepEvery, and out of turn when it
// has grown to twice what the last sweep left (maxIdleEntries at least),
// so that sweeps cost O(1) a write however many keys write at once. It
// holds at most twice the keys that wrote within the time a limiter
// takes to fill up, or maxIdleEntries.
type Limiter struct {
	rate    rate.Limit
	burst   int
	refused func(key string)
	// full is how long a limiter takes to fill up again from empty.
	full time.Duration

	mu        sync.Mutex
	keys      map[string]*keyRate
	lastSweep time.Time
	sweepAt   int // the size of keys that sweeps it out of turn
}

// keyRate is the write rate of one key.
type keyRate struct {
	lim  *rate.Limiter
	last time.Time // of its last write, allowed or refused
	// refusing is true from its first refused write to its next allowed
	// one (see New's refused).
	refusing bool
}

const (
	sweepEvery = time.Minute
	// maxIdleEntries is how many limiters the map may hold before it is
	// swept out of turn.
	maxIdleEntries = 10000
)

// New returns a limiter of r writes a second after burst, for each key;
// r of rate.Inf limits nothing. It calls refused, if not nil, with the
// first write of a key it refuses after one it allowed, for a log of one
// line for each run of refusals. It panics on a rate or a burst below 1.
func New(r rate.Limit, burst int, refused func(key string)) *Limiter {
	if r <= 0 || burst < 1 {
		panic("writelimit: a rate and a burst of at least one are needed")
	}
	full := time.Duration(0)
	if r != rate.Inf {
		full = time.Duration(float64(burst) / float64(r) * float64(time.Second))
	}
	return &Limiter{rate: r, burst: burst, refused: refused, full: full, keys: map[string]*keyRate{}}
}

// Rate returns l's rate, and Burst its burst.
func (l *Limiter) Rate() rate.Limit { return l.rate }

// Burst returns l's burst.
func (l *Limiter) Burst() int { return l.burst }

// Reserve takes one write from the allowance of key at now, and returns
// 0, or how long until it could be taken if it cannot be now. A write
// refused is not taken, so that a client that tries again too soon does
// not push its next allowed write further away.
func (l *Limiter) Reserve(key string, now time.Time) time.Duration {
	if l.rate == rate.Inf {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= sweepEvery || len(l.keys) >= max(l.sweepAt, maxIdleEntries) {
		l.sweep(now)
	}
	k := l.keys[key]
	if k == nil {
		k = &keyRate{lim: rate.NewLimiter(l.rate, l.burst)}
		l.keys[key] = k
	}
	k.last = now
	r := k.lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if wait == 0 {
		k.refusing = false
		return 0
	}
	r.CancelAt(now)
	if !k.refusing {
		k.refusing = true
		if l.refused != nil {
			l.refused(key)
		}
	}
	return wait
}

// sweep drops the limiters full again at now: those of keys that have
// not written for the time a limiter takes to fill up.
func (l *Limiter) sweep(now time.Time) {
	l.lastSweep = now
	for key, k := range l.keys {
		if now.Sub(k.last) >= l.full {
			delete(l.keys, key)
		}
	}
	l.sweepAt = 2 * len(l.keys)
}
