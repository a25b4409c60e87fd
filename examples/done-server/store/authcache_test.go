package store

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
)

// TestAuthCache holds the token cache to its bound: a token revoked by
// another process on the same database (here another Store) works in this
// one for less than AuthCache, and not from then on; one revoked through
// this Store, or expired, is refused at once; and the use that NoteUse
// records is kept with the token, so that the next calls of the minute
// write nothing.
func TestAuthCache(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	var mu sync.Mutex
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	advance := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
	const ttl = time.Second
	here, _, err := openAt(t, dir, &Options{Now: clock, AuthCache: ttl})
	if err != nil {
		t.Fatal(err)
	}
	defer here.Close()
	other, _, err := openAt(t, dir, &Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	works := func(secret string) error {
		_, err := here.Authenticate(ctx, secret)
		return err
	}
	mint := func(name string, expires time.Duration) (Token, string) {
		k, secret, err := other.MintToken(ctx, NewToken{Name: name, Kind: Agent, Scope: mcpeffect.Full, TTL: expires})
		if err != nil {
			t.Fatal(err)
		}
		return k, secret
	}

	t.Run("revoked by another process", func(t *testing.T) {
		if here.Shared() {
			t.Skip("on PostgreSQL the revocation is told to every Store: TestRevokedAcrossStores")
		}
		k, secret := mint("elsewhere", 0)
		if err := works(secret); err != nil {
			t.Fatal(err)
		}
		if _, err := other.RevokeAnyToken(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		advance(ttl - time.Millisecond)
		if err := works(secret); err != nil {
			t.Errorf("within the bound: %v, want the token still taken from memory", err)
		}
		advance(time.Millisecond)
		if err := works(secret); !errors.Is(err, ErrBadToken) {
			t.Errorf("at the bound: %v, want %v", err, ErrBadToken)
		}
	})
	t.Run("revoked here", func(t *testing.T) {
		k, secret := mint("here", 0)
		if err := works(secret); err != nil {
			t.Fatal(err)
		}
		if _, err := here.RevokeToken(ctx, k.Actor(), k.ID); err != nil {
			t.Fatal(err)
		}
		if err := works(secret); !errors.Is(err, ErrBadToken) {
			t.Errorf("right after revoke_token: %v, want %v", err, ErrBadToken)
		}
	})
	t.Run("expired", func(t *testing.T) {
		_, secret := mint("brief", 10*time.Second)
		advance(10*time.Second - ttl/2)
		if err := works(secret); err != nil {
			t.Fatal(err)
		}
		advance(ttl / 2)
		if err := works(secret); !errors.Is(err, ErrBadToken) {
			t.Errorf("at its expiry, in memory: %v, want %v", err, ErrBadToken)
		}
	})
	t.Run("use noted", func(t *testing.T) {
		_, secret := mint("busy", 0)
		k, err := here.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := here.NoteUse(ctx, k); err != nil {
			t.Fatal(err)
		}
		if k, err = here.Authenticate(ctx, secret); err != nil || k.LastUsedAt == "" {
			t.Errorf("from memory after NoteUse: last used %q, %v", k.LastUsedAt, err)
		}
	})
}

// TestAuthCacheRevocationRace authenticates a token from many goroutines
// while it is revoked: no call that begins once RevokeToken has returned
// may take the token, whatever the lookups in flight keep.
func TestAuthCacheRevocationRace(t *testing.T) {
	ctx := t.Context()
	s, _, err := openAt(t, t.TempDir(), &Options{AuthCache: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for round := range 20 {
		k, secret, err := s.MintToken(ctx, NewToken{Name: "racer", Kind: Agent, Scope: mcpeffect.Full})
		if err != nil {
			t.Fatal(err)
		}
		var revoked atomic.Bool
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					after := revoked.Load()
					_, err := s.Authenticate(ctx, secret)
					if after && err == nil {
						t.Errorf("round %d: a call begun after the revocation took the token", round)
						return
					}
				}
			})
		}
		time.Sleep(time.Millisecond)
		if _, err := s.RevokeToken(ctx, k.Actor(), k.ID); err != nil {
			t.Fatal(err)
		}
		revoked.Store(true)
		time.Sleep(2 * time.Millisecond)
		close(stop)
		wg.Wait()
	}
}
