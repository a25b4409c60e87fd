package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpeffect/mcpeffect"
)

// The records of the calls made with an idempotency key (SEP-3182), in
// the table idempotency_records: mcpeffect's [mcpeffect.IdempotencyStore]
// over Done's database, so that every process serving it (the replicas on
// one PostgreSQL, or a stdio server that its host restarts on one SQLite
// file) answers a retry with what the first call answered, whichever of
// them ran it.

// The default bounds of an [IdempotencyStore] (see [IdempotencyLimits]).
const (
	// DefaultIdempotencyPerOwner is the most live records one token
	// holds: with mcpeffect's retention of 24 hours, one keyed write
	// every nine seconds, all day long. A token past it has its new keys
	// refused until some expire; its retries are still answered.
	DefaultIdempotencyPerOwner = 10000
	// DefaultIdempotencyTotal is the most live records of all tokens.
	DefaultIdempotencyTotal = 1000000
	// DefaultMaxIdempotencyOutcome is the largest answer kept, in bytes:
	// Done's writes answer with one task, run or list of steps, a few
	// KiB at most. A larger one is kept as an error that says the call
	// ran (see [mcpeffect.IdempotentCall] Finish).
	DefaultMaxIdempotencyOutcome = 64 << 10
)

// IdempotencyLimits bound what an [IdempotencyStore] keeps. A zero field
// stands for its default.
type IdempotencyLimits struct {
	// PerOwner is the most live records one owner (a token) holds;
	// DefaultIdempotencyPerOwner if 0.
	PerOwner int
	// Total is the most live records in all; DefaultIdempotencyTotal if
	// 0. It is checked against a count made at most once a minute in each
	// process (every second once it is reached), so that a claim does not
	// count the whole table: between two counts, the processes on one
	// database may go past it by what they claim meanwhile.
	Total int
	// MaxOutcome is the largest answer kept, in bytes;
	// DefaultMaxIdempotencyOutcome if 0.
	MaxOutcome int
}

// sweepEvery is how often, at most, each IdempotencyStore removes the
// expired records and counts the live ones; sweepFullEvery, how often
// while the count is at the bound, so that room made by expiry is found
// soon. sweepBatch bounds the records one sweep removes, so that its
// transaction holds SQLite's one writer briefly however many expired at
// once.
const (
	sweepEvery     = time.Minute
	sweepFullEvery = time.Second
	sweepBatch     = 2000
)

// An IdempotencyStore is the [mcpeffect.IdempotencyStore] of a [Store]:
// see [Store.IdempotencyStore]. It is safe for concurrent use, and any
// number of them, in any number of processes, may share one database:
// the table is the one record of each key.
type IdempotencyStore struct {
	s     *Store
	owner func(context.Context) string
	lim   IdempotencyLimits

	mu sync.Mutex
	// nextSweep is when the next claim sweeps; full, whether the last
	// count found the total at its bound.
	nextSweep time.Time
	full      bool
	sweeping  bool
}

var _ mcpeffect.IdempotencyStore = (*IdempotencyStore)(nil)

// IdempotencyStore returns the records of the calls made with an
// idempotency key, kept in s's database, for mcpeffect's
// IdempotencyOptions. owner returns the token on whose behalf the call of
// a claim's context runs, whose records the claim counts against
// ([IdempotencyLimits] PerOwner); a claim whose context has none is
// refused. lim may be nil, for the defaults.
//
// Claim is one statement, an INSERT ... ON CONFLICT DO UPDATE ... WHERE
// the record there has expired: of two claims of one key, on any
// processes, one inserts and the other finds its record. Before it, a
// read transaction of its own finds a live record of the key (a retry is
// answered so, whatever the bounds, without a write) and counts the
// owner's. Complete and Release change the record only where it still
// holds the claim's token. Expired records are swept as claims arrive, at
// most once a minute in each process, in transactions of their own: the
// methods of an IdempotencyStore are not one transaction each, as the
// Store's are, and need not be, since the claim's statement is the one
// that decides.
//
// The records are bookkeeping, not data: they write no activity, and
// nothing but a retry reads them. The errors are the database's as
// they are ([Transient] for an outage), or wrap
// [mcpeffect.ErrIdempotencyStoreFull] or [mcpeffect.ErrIdempotencyClaimLost]
// as the interface asks.
func (s *Store) IdempotencyStore(owner func(context.Context) string, lim *IdempotencyLimits) *IdempotencyStore {
	i := &IdempotencyStore{s: s, owner: owner}
	if lim != nil {
		i.lim = *lim
	}
	if i.lim.PerOwner <= 0 {
		i.lim.PerOwner = DefaultIdempotencyPerOwner
	}
	if i.lim.Total <= 0 {
		i.lim.Total = DefaultIdempotencyTotal
	}
	if i.lim.MaxOutcome <= 0 {
		i.lim.MaxOutcome = DefaultMaxIdempotencyOutcome
	}
	return i
}

// Claim implements [mcpeffect.IdempotencyStore].
func (i *IdempotencyStore) Claim(ctx context.Context, c mcpeffect.IdempotencyClaim) (mcpeffect.IdempotencyRecord, bool, error) {
	owner := i.owner(ctx)
	if owner == "" {
		return mcpeffect.IdempotencyRecord{}, false, invalidf("a call with an idempotency key must be made with a token: this one has none")
	}
	if err := checkStorable("the owner of an idempotency record", owner); err != nil {
		return mcpeffect.IdempotencyRecord{}, false, err
	}
	if !c.Expires.After(c.Now) {
		return mcpeffect.IdempotencyRecord{}, false, invalidf("an idempotency record must expire after it is made (now %s, expires %s)", formatTime(c.Now), formatTime(c.Expires))
	}
	full, err := i.sweepIfDue(ctx, c.Now)
	if err != nil {
		return mcpeffect.IdempotencyRecord{}, false, err
	}
	now := formatTime(c.Now)
	// A live record is answered first, without a write: the retry of a
	// key is never refused for the bounds, which only new keys meet. The
	// owner's records are counted beside it, outside the transaction of
	// the claim, so that two claims of one token at once do not abort one
	// another on PostgreSQL: the bound may be passed by as many claims as
	// the token makes at the same moment.
	type found struct {
		rec   mcpeffect.IdempotencyRecord
		live  bool
		count int
	}
	f, err := read(ctx, i.s, Actor{}, func(t *tx) (found, error) {
		rec, live, err := t.idempotencyRecord(c.Key[:], now)
		if err != nil || live {
			return found{rec: rec, live: live}, err
		}
		var n int
		err = t.queryRow(`SELECT count(*) FROM (SELECT 1 FROM idempotency_records WHERE owner = ? AND expires_at > ? LIMIT +?) AS live`,
			owner, now, i.lim.PerOwner).Scan(&n)
		return found{count: n}, err
	})
	switch {
	case err != nil:
		return mcpeffect.IdempotencyRecord{}, false, err
	case f.live:
		return f.rec, false, nil
	case full:
		return mcpeffect.IdempotencyRecord{}, false, fmt.Errorf("%w: it holds %d records or more, the most Done keeps, until some expire", mcpeffect.ErrIdempotencyStoreFull, i.lim.Total)
	case f.count >= i.lim.PerOwner:
		return mcpeffect.IdempotencyRecord{}, false, fmt.Errorf("%w: this token holds %d records of calls made with a key, the most Done keeps for one token, until some expire (a record lasts as long as a retry is answered from it)",
			mcpeffect.ErrIdempotencyStoreFull, f.count)
	}
	type claimed struct {
		rec mcpeffect.IdempotencyRecord
		ok  bool
	}
	got, err := write(ctx, i.s, Actor{}, func(t *tx) (claimed, error) {
		res, err := t.exec(`INSERT INTO idempotency_records (digest, owner, fingerprint, token, written, done, outcome, expires_at) VALUES (?, ?, ?, ?, 0, 0, NULL, ?)
			ON CONFLICT (digest) DO UPDATE SET owner = excluded.owner, fingerprint = excluded.fingerprint, token = excluded.token,
				written = 0, done = 0, outcome = NULL, expires_at = excluded.expires_at
			WHERE idempotency_records.expires_at <= ?`,
			c.Key[:], owner, c.Fingerprint[:], c.Token[:], formatTime(c.Expires), now)
		if err != nil {
			return claimed{}, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return claimed{ok: true}, err
		}
		// Another claim of the key came between the read and the insert,
		// and its record is live: it is the answer. (On PostgreSQL, one
		// committed after this transaction began makes the insert abort
		// as not serializable, and write runs it again.)
		rec, _, err := t.idempotencyRecord(c.Key[:], now)
		return claimed{rec, false}, err
	})
	return got.rec, got.ok, err
}

// idempotencyRecord reads the record of digest, and reports whether it
// is live at now.
func (t *tx) idempotencyRecord(digest []byte, now string) (mcpeffect.IdempotencyRecord, bool, error) {
	var rec mcpeffect.IdempotencyRecord
	var fp, outcome []byte
	var done bool
	var expires string
	err := t.queryRow(`SELECT fingerprint, done, outcome, expires_at FROM idempotency_records WHERE digest = ?`, digest).
		Scan(&fp, &done, &outcome, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return rec, false, nil
	case err != nil:
		return rec, false, err
	}
	if len(fp) != len(rec.Fingerprint) {
		return rec, false, fmt.Errorf("store: the idempotency record holds a fingerprint of %d bytes", len(fp))
	}
	at, err := time.Parse(timeFormat, expires)
	if err != nil {
		return rec, false, fmt.Errorf("store: the idempotency record's expiry: %w", err)
	}
	copy(rec.Fingerprint[:], fp)
	rec.Done, rec.Outcome, rec.Expires = done, outcome, at
	return rec, expires > now, nil
}

// Complete implements [mcpeffect.IdempotencyStore].
func (i *IdempotencyStore) Complete(ctx context.Context, c mcpeffect.IdempotencyClaim, outcome []byte) error {
	if len(outcome) > i.lim.MaxOutcome {
		return fmt.Errorf("%w: an answer of %d bytes is more than the %d Done keeps", mcpeffect.ErrIdempotencyStoreFull, len(outcome), i.lim.MaxOutcome)
	}
	if outcome == nil {
		outcome = []byte{} // done, with an empty answer: not NULL
	}
	_, err := write(ctx, i.s, Actor{}, func(t *tx) (struct{}, error) {
		res, err := t.exec(`UPDATE idempotency_records SET done = 1, outcome = ? WHERE digest = ? AND token = ?`, outcome, c.Key[:], c.Token[:])
		return struct{}{}, held(res, err)
	})
	return err
}

// Release implements [mcpeffect.IdempotencyStore].
func (i *IdempotencyStore) Release(ctx context.Context, c mcpeffect.IdempotencyClaim) error {
	_, err := write(ctx, i.s, Actor{}, func(t *tx) (struct{}, error) {
		res, err := t.exec(`DELETE FROM idempotency_records WHERE digest = ? AND token = ?`, c.Key[:], c.Token[:])
		return struct{}{}, held(res, err)
	})
	return err
}

// ReleaseUnwritten releases the record that c claimed, as Release does,
// unless a write of its call was committed (see [WithIdempotentWrite]),
// and reports whether it did. A call whose database went away in the
// middle answers that nothing was changed; where its record says a write
// was committed all the same (the commit reached the database, its
// acknowledgement did not), the record is kept, and the call is not run
// again. It returns [mcpeffect.ErrIdempotencyClaimLost] if the record no
// longer holds c's token.
func (i *IdempotencyStore) ReleaseUnwritten(ctx context.Context, c mcpeffect.IdempotencyClaim) (released bool, err error) {
	return write(ctx, i.s, Actor{}, func(t *tx) (bool, error) {
		res, err := t.exec(`DELETE FROM idempotency_records WHERE digest = ? AND token = ? AND written = 0`, c.Key[:], c.Token[:])
		if err != nil {
			return false, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return n == 1, err
		}
		held, err := t.exists(`SELECT 1 FROM idempotency_records WHERE digest = ? AND token = ?`, c.Key[:], c.Token[:])
		if err == nil && !held {
			err = mcpeffect.ErrIdempotencyClaimLost
		}
		return false, err
	})
}

// WithIdempotentWrite returns a copy of ctx, the context of the handler
// of a call that claimed c: each write transaction that the Store
// commits with it marks c's record as written, in that transaction, so
// that the mark and the write are committed together or not at all
// (see [IdempotencyStore.ReleaseUnwritten]).
func WithIdempotentWrite(ctx context.Context, c mcpeffect.IdempotencyClaim) context.Context {
	return context.WithValue(ctx, idempotentWriteKey{}, idempotentWrite{digest: c.Key, token: c.Token})
}

type idempotentWriteKey struct{}

type idempotentWrite struct {
	digest [32]byte
	token  [16]byte
}

// markIdempotentWrite marks, in t, the record of the call whose handler
// t writes for (see WithIdempotentWrite) as written: write calls it
// before each commit.
func (t *tx) markIdempotentWrite() error {
	w, ok := t.ctx.Value(idempotentWriteKey{}).(idempotentWrite)
	if !ok {
		return nil
	}
	_, err := t.exec(`UPDATE idempotency_records SET written = 1 WHERE digest = ? AND token = ? AND written = 0`, w.digest[:], w.token[:])
	return err
}

// held returns the error of a statement that changes the record a claim
// holds: mcpeffect.ErrIdempotencyClaimLost if it changed none.
func held(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	switch {
	case err != nil:
		return err
	case n == 0:
		return mcpeffect.ErrIdempotencyClaimLost
	}
	return nil
}

// sweepIfDue sweeps the expired records and counts the live ones, if the
// last sweep of i is old enough at now, and reports whether the total is
// at its bound. One claim at a time sweeps; the others go on with what
// the last count found. A sweep that fails is tried again at the next
// claim, and fails that one too: the database it could not reach would
// have failed the claim anyway.
func (i *IdempotencyStore) sweepIfDue(ctx context.Context, now time.Time) (bool, error) {
	i.mu.Lock()
	if i.sweeping || now.Before(i.nextSweep) && !i.nextSweep.After(now.Add(sweepEvery)) {
		// Not due, or another claim sweeps: a clock set back is due at
		// once.
		full := i.full
		i.mu.Unlock()
		return full, nil
	}
	i.sweeping = true
	i.mu.Unlock()
	live, err := i.Sweep(ctx, now)
	i.mu.Lock()
	defer i.mu.Unlock()
	i.sweeping = false
	if err != nil {
		return i.full, err
	}
	i.full = live >= i.lim.Total
	i.nextSweep = now.Add(sweepEvery)
	if i.full {
		i.nextSweep = now.Add(sweepFullEvery)
	}
	return i.full, nil
}

// Sweep removes records that expired at now, at most a batch of them,
// and returns how many live records are left, of every owner: what the
// total bound is checked against. Claims sweep when it is due; tests and
// a command may call it too.
func (i *IdempotencyStore) Sweep(ctx context.Context, now time.Time) (live int, err error) {
	at := formatTime(now)
	if _, err := write(ctx, i.s, Actor{}, func(t *tx) (struct{}, error) {
		_, err := t.exec(`DELETE FROM idempotency_records WHERE digest IN
			(SELECT digest FROM idempotency_records WHERE expires_at <= ? ORDER BY expires_at LIMIT +?)`, at, sweepBatch)
		return struct{}{}, err
	}); err != nil {
		return 0, err
	}
	// Counted in a read of its own: on PostgreSQL, a SERIALIZABLE read of
	// every record would make claims made meanwhile abort.
	return read(ctx, i.s, Actor{}, func(t *tx) (int, error) {
		var n int
		err := t.queryRow(`SELECT count(*) FROM idempotency_records WHERE expires_at > ?`, at).Scan(&n)
		return n, err
	})
}
