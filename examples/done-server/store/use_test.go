package store

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
)

// TestAuthenticationOnlyReads holds Authenticate, AuthenticateOwner and
// Feed to one read transaction each: the database is byte for byte the
// same after them. The use of a token and the fetch of a feed are
// recorded by NoteUse and NoteFetch, each in a write transaction of its
// own.
func TestAuthenticationOnlyReads(t *testing.T) {
	now := time.Date(2025, 6, 2, 9, 0, 30, 0, time.UTC)
	s, k, secret := openWithToken(t, &Options{Now: func() time.Time { return now }})
	ctx := t.Context()
	if _, _, err := s.Owner(ctx, "olivia"); err != nil {
		t.Fatal(err)
	}
	_, feedSecret, err := s.CreateCalendarLink(ctx, k.Actor(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	dump := func() string {
		var b bytes.Buffer
		if err := s.Dump(ctx, &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, c := range []struct {
		name string
		call func(context.Context) error
	}{
		{"Authenticate", func(ctx context.Context) error { _, err := s.Authenticate(ctx, secret); return err }},
		{"AuthenticateOwner", func(ctx context.Context) error { _, err := s.AuthenticateOwner(ctx); return err }},
		{"Feed", func(ctx context.Context) error { _, err := s.Feed(ctx, feedSecret); return err }},
	} {
		before := dump()
		if err := c.call(ctx); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if dump() != before {
			t.Errorf("%s changed the database", c.name)
		}
	}
}

// TestNoteUse records the use of a token to the minute: once a minute,
// never back in time.
func TestNoteUse(t *testing.T) {
	now := time.Date(2025, 6, 2, 9, 0, 30, 0, time.UTC)
	s, _, secret := openWithToken(t, &Options{Now: func() time.Time { return now }})
	ctx := t.Context()
	lastUsed := func() string {
		k, err := s.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		return k.LastUsedAt
	}
	for _, c := range []struct {
		name string
		at   time.Time
		want string
	}{
		{"first use", now, "2025-06-02T09:00:00.000Z"},
		{"the same minute", now.Add(20 * time.Second), "2025-06-02T09:00:00.000Z"},
		{"the next minute", now.Add(time.Minute), "2025-06-02T09:01:00.000Z"},
		{"an earlier time, as a late writer has", now, "2025-06-02T09:01:00.000Z"},
	} {
		now = c.at
		k, err := s.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		// A token read before another use was noted: the write must not
		// move last_used_at back.
		k.LastUsedAt = ""
		if _, err := s.NoteUse(ctx, k); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := lastUsed(); got != c.want {
			t.Errorf("%s: last_used_at %q, want %q", c.name, got, c.want)
		}
	}
}

// openWithToken opens a new store with opts, with a token of a person with
// full scope, and returns it with its secret.
func openWithToken(t testing.TB, opts *Options) (*Store, Token, string) {
	t.Helper()
	s, _, err := openAt(t, t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	k, secret, err := s.MintToken(t.Context(), NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	return s, k, secret
}

// TestTokenRoot: the token a call runs with knows the root of its tree,
// the command-line token it descends from, at any depth, as the write
// rate needs; a command-line token, the owner's included, is its own.
func TestTokenRoot(t *testing.T) {
	ctx := t.Context()
	s, root, rootSecret := openWithToken(t, nil)
	agent, agentSecret, err := s.CreateToken(ctx, root.Actor(), mcpeffect.Full, NewToken{Name: "scribe", Kind: Agent, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	_, grandSecret, err := s.CreateToken(ctx, agent.Actor(), mcpeffect.Full, NewToken{Name: "scribe", Kind: Agent, Scope: mcpeffect.NonDestructive})
	if err != nil {
		t.Fatal(err)
	}
	other, otherSecret, err := s.MintToken(ctx, NewToken{Name: "bob", Kind: Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := s.Owner(ctx, "olga")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, secret, want string
	}{
		{"a command-line token", rootSecret, root.ID},
		{"a token it minted", agentSecret, root.ID},
		{"a token that one minted", grandSecret, root.ID},
		{"another command-line token", otherSecret, other.ID},
	} {
		k, err := s.Authenticate(ctx, c.secret)
		if err != nil || k.Root != c.want {
			t.Errorf("%s: root %q, %v; want %q", c.name, k.Root, err, c.want)
		}
	}
	if k, err := s.AuthenticateOwner(ctx); err != nil || k.Root != owner.ID {
		t.Errorf("the owner: root %q, %v; want its own id %q", k.Root, err, owner.ID)
	}
}
