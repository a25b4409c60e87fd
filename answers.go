package mcpeffect

import (
	"context"
	"sync"
	"time"
)

// An AnswerStore records the answers to confirmations that a server has
// accepted, so that each is accepted once (see [ConfirmOptions]). The
// default, an in-process store, holds for one process: a server that runs
// in several processes behind one address gives them the same Key and a
// store they share (a table in their database, say), or an answer
// accepted by one could be replayed to another.
//
// An AnswerStore must be safe for concurrent use.
type AnswerStore interface {
	// Use records the answer nonce as used until expires, and reports
	// whether it was new: false if it was recorded before and has not
	// expired. An error refuses the answer (the call is not run), so
	// that a store that cannot record fails closed. The store may
	// forget an answer once it has expired, since an expired answer is
	// refused before Use is called.
	Use(ctx context.Context, nonce []byte, expires time.Time) (fresh bool, err error)
}

// memoryAnswers is the in-process AnswerStore.
type memoryAnswers struct {
	now       func() time.Time
	prune     time.Duration // how often expired answers are forgotten
	mu        sync.Mutex
	used      map[string]time.Time // nonce to expiry
	lastPrune time.Time
}

func newMemoryAnswers(now func() time.Time, expiry time.Duration) *memoryAnswers {
	return &memoryAnswers{now: now, prune: expiry / 4, used: map[string]time.Time{}}
}

func (m *memoryAnswers) Use(_ context.Context, nonce []byte, expires time.Time) (bool, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if exp, seen := m.used[string(nonce)]; seen && !now.After(exp) {
		return false, nil
	}
	// Forget the answers that have expired, since those are refused
	// anyway: the set holds no more than the answers of one expiry.
	if now.Sub(m.lastPrune) > m.prune {
		for n, exp := range m.used {
			if now.After(exp) {
				delete(m.used, n)
			}
		}
		m.lastPrune = now
	}
	m.used[string(nonce)] = expires
	return true, nil
}
