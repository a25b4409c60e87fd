package mcpeffect

import (
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"
)

// An IdempotencyStore keeps the records of the calls made with an
// idempotency key (see [IdempotencyOptions]): which key was claimed, for
// which call, and what the call answered once it had run. The default
// keeps them in the process ([NewMemoryIdempotencyStore]); a server that
// runs in several processes behind one address (replicas, or a stdio
// server restarted by its client) gives them a store they share, such as
// a table of their database, since a retry may reach any of them.
//
// A store never interprets what it keeps: the key and the fingerprint are
// digests of fixed size (the key's, of the caller and the key it sent:
// neither is stored as sent, however long or strange), the outcome is
// bytes. A table holding them needs a primary key of 32 bytes, the
// fingerprint (32 bytes), the claim's token (16 bytes), a flag for done,
// the outcome and the expiry; its Claim is one statement that inserts the
// record unless a live one is there (in SQL, an INSERT ... ON CONFLICT DO
// UPDATE ... WHERE the old record expired, or a transaction that reads
// and writes), and Complete and Release touch the record only where it
// still holds the claim's token.
//
// An IdempotencyStore must be safe for concurrent use, and Claim must be
// atomic: of two claims of one key at the same time, one wins and the
// other sees its record.
type IdempotencyStore interface {
	// Claim records that the call c describes is in progress under
	// c.Key, until c.Expires, unless a record of c.Key is there whose
	// Expires is after c.Now: then it returns that record and false, and
	// changes nothing. An expired record is replaced as if it were not
	// there. An error refuses the call: the call is not run.
	Claim(ctx context.Context, c IdempotencyClaim) (existing IdempotencyRecord, claimed bool, err error)
	// Complete stores outcome in the record that c claimed, and marks it
	// done; its expiry stays the claim's. If the record no longer holds
	// c's token (it expired and was claimed again, or was released), it
	// changes nothing and returns [ErrIdempotencyClaimLost]. The store
	// may refuse an outcome too large for it with
	// [ErrIdempotencyStoreFull]; the record must then stay as it was, in
	// progress, and a smaller outcome fit (one of a few hundred bytes,
	// saying that the call ran and its result could not be kept).
	Complete(ctx context.Context, c IdempotencyClaim, outcome []byte) error
	// Release removes the record that c claimed, if it still holds c's
	// token: the call did not run (it was refused, or asked the client
	// for input first), so that the key may be used again.
	Release(ctx context.Context, c IdempotencyClaim) error
}

// An IdempotencyClaim is one call's claim of an idempotency key, given to
// each method of an [IdempotencyStore].
type IdempotencyClaim struct {
	// Key is the SHA-256 of the caller and of the key it sent.
	Key [sha256.Size]byte
	// Fingerprint is the SHA-256 of the call: the tool and its
	// arguments, compared as parsed JSON values, as SEP-3182 requires.
	Fingerprint [sha256.Size]byte
	// Token is random, the claim's own: a record holds the token of the
	// claim that made it.
	Token [16]byte
	// Now is the time of the claim, and Expires the end of the record's
	// retention.
	Now, Expires time.Time
}

// An IdempotencyRecord is what an [IdempotencyStore] holds of a key.
type IdempotencyRecord struct {
	// Fingerprint is that of the call that claimed the key.
	Fingerprint [sha256.Size]byte
	// Done reports that the call has run and Outcome holds what it
	// answered; false while it runs.
	Done    bool
	Outcome []byte
	// Expires is the end of the record's retention.
	Expires time.Time
}

var (
	// ErrIdempotencyStoreFull is the error of an [IdempotencyStore] that
	// holds as much as it may: a call under a new key is then refused,
	// not run (see [NewMemoryIdempotencyStore]).
	ErrIdempotencyStoreFull = errors.New("mcpeffect: the idempotency store is full")
	// ErrIdempotencyClaimLost is the error of Complete and Release for a
	// record that no longer holds the claim.
	ErrIdempotencyClaimLost = errors.New("mcpeffect: the idempotency key is no longer held by this call")
)

// The default bounds of [NewMemoryIdempotencyStore].
const (
	DefaultIdempotencyEntries = 10000
	DefaultIdempotencyBytes   = 64 << 20
)

// The bytes a MemoryIdempotencyStore counts for a record beside its
// outcome (the map's entry, the list's, the record), and those it
// reserves for the outcome at the claim, so that an outcome saying that a
// result could not be kept always fits where the claim did.
const (
	memoryRecordOverhead = 256
	memoryOutcomeReserve = 2048
)

// A MemoryIdempotencyStore is the in-process [IdempotencyStore], the
// default of [IdempotencyOptions]: it holds for one process, and is
// bounded in entries and in bytes. Past either bound, a claim of a new key
// fails with [ErrIdempotencyStoreFull] until records expire: a live
// record is never dropped to make room, since that would let its call run
// twice. A record counts its outcome's bytes and a fixed overhead, and at
// least 2 KiB for the outcome from its claim on.
//
// Its records live for the retention of the claim that made them (see
// [IdempotencyOptions] Retention); expired ones are dropped as claims
// arrive.
type MemoryIdempotencyStore struct {
	maxEntries int
	maxBytes   int64

	mu      sync.Mutex
	records map[[sha256.Size]byte]*memoryRecord
	order   list.List // of *memoryRecord, in the order of their claims
	bytes   int64
	// scanned is when every record was last looked at for expiry, so
	// that a full store refused claim after claim looks at them at most
	// once a second.
	scanned time.Time
}

type memoryRecord struct {
	key   [sha256.Size]byte
	token [16]byte
	rec   IdempotencyRecord
	size  int64
	elem  *list.Element
}

// NewMemoryIdempotencyStore returns an in-process store of at most
// maxEntries records and maxBytes bytes; zero or less means
// [DefaultIdempotencyEntries] and [DefaultIdempotencyBytes].
func NewMemoryIdempotencyStore(maxEntries int, maxBytes int64) *MemoryIdempotencyStore {
	if maxEntries <= 0 {
		maxEntries = DefaultIdempotencyEntries
	}
	if maxBytes <= 0 {
		maxBytes = DefaultIdempotencyBytes
	}
	return &MemoryIdempotencyStore{maxEntries: maxEntries, maxBytes: maxBytes, records: map[[sha256.Size]byte]*memoryRecord{}}
}

// Len returns the number of records held, expired ones included until
// they are dropped.
func (m *MemoryIdempotencyStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.records)
}

// Claim implements [IdempotencyStore].
func (m *MemoryIdempotencyStore) Claim(_ context.Context, c IdempotencyClaim) (IdempotencyRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropExpired(c.Now, false)
	if r, ok := m.records[c.Key]; ok {
		if r.rec.Expires.After(c.Now) {
			return r.rec, false, nil
		}
		m.remove(r)
	}
	size := int64(memoryRecordOverhead + memoryOutcomeReserve)
	if len(m.records) >= m.maxEntries || m.bytes+size > m.maxBytes {
		// The records in claim order are in expiry order only for one
		// retention and a clock that does not go back: look at them all
		// before refusing, once a second at most.
		if d := c.Now.Sub(m.scanned); d >= time.Second || d < 0 {
			m.dropExpired(c.Now, true)
			m.scanned = c.Now
		}
		if len(m.records) >= m.maxEntries || m.bytes+size > m.maxBytes {
			return IdempotencyRecord{}, false, fmt.Errorf("%w: it holds %d records in %d bytes (at most %d, %d bytes) until some expire",
				ErrIdempotencyStoreFull, len(m.records), m.bytes, m.maxEntries, m.maxBytes)
		}
	}
	r := &memoryRecord{key: c.Key, token: c.Token, rec: IdempotencyRecord{Fingerprint: c.Fingerprint, Expires: c.Expires}, size: size}
	r.elem = m.order.PushBack(r)
	m.records[c.Key] = r
	m.bytes += size
	return IdempotencyRecord{}, true, nil
}

// Complete implements [IdempotencyStore].
func (m *MemoryIdempotencyStore) Complete(_ context.Context, c IdempotencyClaim, outcome []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[c.Key]
	if !ok || r.token != c.Token {
		return ErrIdempotencyClaimLost
	}
	size := int64(memoryRecordOverhead + max(len(outcome), memoryOutcomeReserve))
	if m.bytes-r.size+size > m.maxBytes {
		return fmt.Errorf("%w: an outcome of %d bytes does not fit in %d bytes, %d of them held", ErrIdempotencyStoreFull, len(outcome), m.maxBytes, m.bytes)
	}
	m.bytes += size - r.size
	r.size = size
	r.rec.Done = true
	r.rec.Outcome = append([]byte(nil), outcome...)
	return nil
}

// Release implements [IdempotencyStore].
func (m *MemoryIdempotencyStore) Release(_ context.Context, c IdempotencyClaim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[c.Key]
	if !ok || r.token != c.Token {
		return ErrIdempotencyClaimLost
	}
	m.remove(r)
	return nil
}

// dropExpired drops the records expired at now: from the oldest claim on
// until one that is not, or, with all, every one. m.mu is held.
func (m *MemoryIdempotencyStore) dropExpired(now time.Time, all bool) {
	for e := m.order.Front(); e != nil; {
		next := e.Next()
		r := e.Value.(*memoryRecord)
		if r.rec.Expires.After(now) {
			if !all {
				return
			}
		} else {
			m.remove(r)
		}
		e = next
	}
}

func (m *MemoryIdempotencyStore) remove(r *memoryRecord) {
	m.order.Remove(r.elem)
	delete(m.records, r.key)
	m.bytes -= r.size
}
