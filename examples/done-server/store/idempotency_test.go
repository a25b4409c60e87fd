package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
)

// claimOwnerKey is the key of the owner of the claims in the contexts of these
// tests.
type claimOwnerKey struct{}

func withOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, claimOwnerKey{}, owner)
}

func ownerOf(ctx context.Context) string {
	o, _ := ctx.Value(claimOwnerKey{}).(string)
	return o
}

// newClaim returns a claim of the key named name, for the call named
// call, at now, for a day.
func newClaim(name, call string, now time.Time) mcpeffect.IdempotencyClaim {
	c := mcpeffect.IdempotencyClaim{Key: sha256.Sum256([]byte(name)), Fingerprint: sha256.Sum256([]byte(call)), Now: now, Expires: now.Add(24 * time.Hour)}
	rand.Read(c.Token[:])
	return c
}

// idempotencyRows returns the number of records in the table, expired
// ones included.
func idempotencyRows(t *testing.T, s *Store) int {
	t.Helper()
	n, err := read(t.Context(), s, Actor{}, func(t *tx) (int, error) {
		var n int
		return n, t.queryRow(`SELECT count(*) FROM idempotency_records`).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIdempotencyStore holds the store to mcpeffect's IdempotencyStore:
// the first claim of a key wins and the next ones see its record, in
// progress, then done with the answer kept byte for byte; Complete and
// Release need the claim's token; an expired record is claimed again as
// if it were not there, and the claim it replaced has lost it; a released
// key is free at once.
func TestIdempotencyStore(t *testing.T) {
	s, _, err := openAt(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := withOwner(t.Context(), "token-a")
	i := s.IdempotencyStore(ownerOf, nil)
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

	first := newClaim("k1", "create_task {title: a}", now)
	if _, ok, err := i.Claim(ctx, first); !ok || err != nil {
		t.Fatalf("first claim: claimed %t, %v", ok, err)
	}
	again := newClaim("k1", "create_task {title: b}", now.Add(time.Second))
	rec, ok, err := i.Claim(ctx, again)
	if ok || err != nil || rec.Done || rec.Fingerprint != first.Fingerprint || !rec.Expires.Equal(first.Expires) {
		t.Fatalf("second claim: claimed %t, %+v, %v; want the first's record, in progress", ok, rec, err)
	}
	if err := i.Complete(ctx, again, []byte("x")); !errors.Is(err, mcpeffect.ErrIdempotencyClaimLost) {
		t.Errorf("Complete without the claim's token: %v, want ErrIdempotencyClaimLost", err)
	}
	if err := i.Release(ctx, again); !errors.Is(err, mcpeffect.ErrIdempotencyClaimLost) {
		t.Errorf("Release without the claim's token: %v, want ErrIdempotencyClaimLost", err)
	}
	// An answer is bytes: NUL, invalid UTF-8 and all.
	answer := append([]byte(`{"result":{}}`), 0, 0xff, 0xfe, '\n')
	if err := i.Complete(ctx, first, answer); err != nil {
		t.Fatal(err)
	}
	rec, ok, err = i.Claim(ctx, again)
	if ok || err != nil || !rec.Done || !bytes.Equal(rec.Outcome, answer) {
		t.Fatalf("claim after Complete: claimed %t, %+v, %v; want the answer %q", ok, rec, err, answer)
	}

	// Expired: claimed again, and the old claim has lost it.
	later := newClaim("k1", "create_task {title: c}", first.Expires)
	if _, ok, err := i.Claim(ctx, later); !ok || err != nil {
		t.Fatalf("claim at expiry: claimed %t, %v", ok, err)
	}
	if err := i.Complete(ctx, first, answer); !errors.Is(err, mcpeffect.ErrIdempotencyClaimLost) {
		t.Errorf("Complete of the expired claim: %v, want ErrIdempotencyClaimLost", err)
	}
	rec, _, err = i.Claim(ctx, newClaim("k1", "other", first.Expires.Add(time.Second)))
	if err != nil || rec.Done || rec.Fingerprint != later.Fingerprint {
		t.Errorf("the new claim's record: %+v, %v", rec, err)
	}

	// Released: free at once, for anything.
	if err := i.Release(ctx, later); err != nil {
		t.Fatal(err)
	}
	if err := i.Release(ctx, later); !errors.Is(err, mcpeffect.ErrIdempotencyClaimLost) {
		t.Errorf("Release twice: %v, want ErrIdempotencyClaimLost", err)
	}
	if _, ok, err := i.Claim(ctx, newClaim("k1", "anything", later.Now)); !ok || err != nil {
		t.Errorf("claim after Release: claimed %t, %v", ok, err)
	}
	// An empty answer is an answer: done, not in progress.
	empty := newClaim("k2", "c", now)
	if _, ok, err := i.Claim(ctx, empty); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := i.Complete(ctx, empty, nil); err != nil {
		t.Fatal(err)
	}
	if rec, _, err := i.Claim(ctx, empty); err != nil || !rec.Done || len(rec.Outcome) != 0 {
		t.Errorf("after an empty answer: %+v, %v", rec, err)
	}
}

// TestIdempotencyStoreRefuses: a claim without an owner, or with one the
// database cannot keep, and one that would expire as it is made, are
// refused and keep nothing; an answer past MaxOutcome is refused with
// ErrIdempotencyStoreFull and the record stays in progress, where a small
// answer then fits.
func TestIdempotencyStoreRefuses(t *testing.T) {
	s, _, err := openAt(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	i := s.IdempotencyStore(ownerOf, &IdempotencyLimits{MaxOutcome: 1000})
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		ctx   context.Context
		claim mcpeffect.IdempotencyClaim
	}{
		{"no owner", t.Context(), newClaim("k", "c", now)},
		{"an owner with NUL", withOwner(t.Context(), "a\x00b"), newClaim("k", "c", now)},
		{"an owner that is not UTF-8", withOwner(t.Context(), "a\xffb"), newClaim("k", "c", now)},
		{"expired at once", withOwner(t.Context(), "o"), func() mcpeffect.IdempotencyClaim {
			c := newClaim("k", "c", now)
			c.Expires = now
			return c
		}()},
	} {
		if _, ok, err := i.Claim(c.ctx, c.claim); ok || err == nil {
			t.Errorf("%s: claimed %t, %v; want a refusal", c.name, ok, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	if n := idempotencyRows(t, s); n != 0 {
		t.Errorf("%d records kept by refused claims", n)
	}

	ctx := withOwner(t.Context(), "o")
	c := newClaim("big", "c", now)
	if _, ok, err := i.Claim(ctx, c); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := i.Complete(ctx, c, bytes.Repeat([]byte("a"), 1001)); !errors.Is(err, mcpeffect.ErrIdempotencyStoreFull) {
		t.Errorf("an answer of 1001 bytes: %v, want ErrIdempotencyStoreFull", err)
	}
	if rec, _, err := i.Claim(ctx, c); err != nil || rec.Done {
		t.Errorf("after the refused answer: %+v, %v; want it in progress", rec, err)
	}
	if err := i.Complete(ctx, c, bytes.Repeat([]byte("a"), 1000)); err != nil {
		t.Errorf("an answer of 1000 bytes: %v", err)
	}
}

// TestIdempotencyStoreBounds: a token holds at most PerOwner live records
// and all tokens Total; past either, a new key is refused with
// ErrIdempotencyStoreFull, while a retry of a key held is answered; the
// sweep removes the expired records, which makes room again.
func TestIdempotencyStoreBounds(t *testing.T) {
	s, _, err := openAt(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	i := s.IdempotencyStore(ownerOf, &IdempotencyLimits{PerOwner: 3, Total: 5})
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	alice, bob, carol := withOwner(t.Context(), "alice"), withOwner(t.Context(), "bob"), withOwner(t.Context(), "carol")
	claim := func(ctx context.Context, name string, at time.Time) (bool, error) {
		_, ok, err := i.Claim(ctx, newClaim(name, "c", at))
		return ok, err
	}
	for n := range 3 {
		if ok, err := claim(alice, fmt.Sprint("a", n), now); !ok || err != nil {
			t.Fatalf("alice's key %d: %t, %v", n, ok, err)
		}
	}
	if ok, err := claim(alice, "a3", now); ok || !errors.Is(err, mcpeffect.ErrIdempotencyStoreFull) {
		t.Errorf("alice's fourth key: %t, %v; want ErrIdempotencyStoreFull", ok, err)
	} else {
		t.Logf("alice's fourth key: %v", err)
	}
	if rec, ok, err := i.Claim(alice, newClaim("a0", "c", now)); ok || err != nil || rec.Fingerprint != sha256.Sum256([]byte("c")) {
		t.Errorf("alice's retry at her bound: %t, %+v, %v; want her record", ok, rec, err)
	}
	for n := range 2 {
		if ok, err := claim(bob, fmt.Sprint("b", n), now); !ok || err != nil {
			t.Fatalf("bob's key %d: %t, %v", n, ok, err)
		}
	}
	// Five records: the next count, a minute on, finds the bound.
	next := now.Add(sweepEvery)
	if ok, err := claim(carol, "c0", next); ok || !errors.Is(err, mcpeffect.ErrIdempotencyStoreFull) {
		t.Errorf("carol's key, the total at its bound: %t, %v; want ErrIdempotencyStoreFull", ok, err)
	} else {
		t.Logf("carol's key: %v", err)
	}
	if _, ok, err := i.Claim(bob, newClaim("b1", "c", next)); ok || err != nil {
		t.Errorf("bob's retry at the total bound: %t, %v", ok, err)
	}
	// A day on, all five expired: the sweep, due every second while the
	// bound is reached, removes them.
	day := now.Add(24 * time.Hour)
	if ok, err := claim(carol, "c0", day); !ok || err != nil {
		t.Errorf("carol's key once the others expired: %t, %v", ok, err)
	}
	if n := idempotencyRows(t, s); n != 1 {
		t.Errorf("%d records after the sweep, want carol's alone", n)
	}
	if ok, err := claim(alice, "a3", day); !ok || err != nil {
		t.Errorf("alice's key once hers expired: %t, %v", ok, err)
	}
}

// TestIdempotencyStoreSweep removes the expired records a batch at a
// time, and counts the live ones.
func TestIdempotencyStoreSweep(t *testing.T) {
	s, _, err := openAt(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := withOwner(t.Context(), "o")
	i := s.IdempotencyStore(ownerOf, nil)
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	for n := range 10 {
		c := newClaim(fmt.Sprint(n), "c", now.Add(time.Duration(n)*time.Minute))
		c.Expires = c.Now.Add(time.Hour)
		if _, ok, err := i.Claim(ctx, c); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	live, err := i.Sweep(ctx, now.Add(time.Hour+4*time.Minute+30*time.Second))
	if err != nil || live != 5 {
		t.Errorf("Sweep: %d live, %v; want 5", live, err)
	}
	if n := idempotencyRows(t, s); n != 5 {
		t.Errorf("%d records after the sweep, want 5", n)
	}
}

// TestIdempotencyStoreConcurrentClaims claims each key from many
// goroutines on two Stores of one database at once, as replicas would:
// one claim of each key wins, and every other sees the winner's record.
func TestIdempotencyStoreConcurrentClaims(t *testing.T) {
	dir := t.TempDir()
	var stores [2]*IdempotencyStore
	for n := range stores {
		s, _, err := openAt(t, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[n] = s.IdempotencyStore(ownerOf, nil)
	}
	ctx := withOwner(t.Context(), "o")
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	const keys, claimants = 10, 8
	for k := range keys {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []mcpeffect.IdempotencyClaim
			seen    []mcpeffect.IdempotencyRecord
			start   = make(chan struct{})
		)
		for n := range claimants {
			wg.Go(func() {
				c := newClaim(fmt.Sprint("key ", k), fmt.Sprint("claimant ", n), now)
				<-start
				rec, ok, err := stores[n%2].Claim(ctx, c)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Errorf("key %d, claimant %d: %v", k, n, err)
				case ok:
					winners = append(winners, c)
				default:
					seen = append(seen, rec)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("key %d: %d claims won, want 1", k, len(winners))
		}
		for _, rec := range seen {
			if rec.Fingerprint != winners[0].Fingerprint {
				t.Errorf("key %d: a loser saw a record of another call than the winner's", k)
			}
		}
	}
	if n := idempotencyRows(t, stores[0].s); n != keys {
		t.Errorf("%d records, want %d", n, keys)
	}
}

// TestIdempotentWrite: a write committed in the context of a claimed call
// marks its record, in the write's own transaction, so that
// ReleaseUnwritten keeps it; a write that was refused, and so rolled
// back, marks nothing, and the record is released.
func TestIdempotentWrite(t *testing.T) {
	s, k, _ := openWithToken(t, nil)
	ctx := withOwner(t.Context(), k.ID)
	i := s.IdempotencyStore(ownerOf, nil)
	now := time.Now()

	wrote := newClaim("wrote", "create_task", now)
	if _, ok, err := i.Claim(ctx, wrote); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := s.CreateTask(WithIdempotentWrite(ctx, wrote), k.Actor(), NewTask{Title: "once"}); err != nil {
		t.Fatal(err)
	}
	if released, err := i.ReleaseUnwritten(ctx, wrote); released || err != nil {
		t.Errorf("ReleaseUnwritten after a committed write: released %t, %v; want the record kept", released, err)
	}
	if rec, ok, err := i.Claim(ctx, wrote); ok || err != nil || rec.Done {
		t.Errorf("the written record: claimed %t, %+v, %v; want it there, in progress", ok, rec, err)
	}

	refused := newClaim("refused", "create_task", now)
	if _, ok, err := i.Claim(ctx, refused); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := s.CreateTask(WithIdempotentWrite(ctx, refused), k.Actor(), NewTask{Title: ""}); err == nil {
		t.Fatal("a task without a title was made")
	}
	if released, err := i.ReleaseUnwritten(ctx, refused); !released || err != nil {
		t.Errorf("ReleaseUnwritten after a refused write: released %t, %v; want it released", released, err)
	}
	if released, err := i.ReleaseUnwritten(ctx, refused); released || !errors.Is(err, mcpeffect.ErrIdempotencyClaimLost) {
		t.Errorf("ReleaseUnwritten twice: released %t, %v; want ErrIdempotencyClaimLost", released, err)
	}
}
