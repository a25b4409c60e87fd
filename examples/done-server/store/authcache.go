package store

import (
	"sync"
	"time"
)

// Every request over HTTP carries its token, and checking it took a read
// transaction and a query on every call, a large part of the server's
// time under load (issue 14; docs/performance.md has the figures). An
// authCache remembers, for a short time, the tokens that
// [Store.Authenticate] found live, so that a client making calls in a row
// is looked up once in that time.
//
// What it must never do is let a revoked token through for longer than it
// says:
//
//   - A token revoked through this Store (revoke_token, or the command
//     line's revoke when it shares the Store) is refused from the moment
//     the call that revoked it returns: revoking clears the cache, and a
//     lookup that read the token before the revocation cannot put it back
//     (see gen).
//   - A token revoked by another process on the same database (done-server
//     token revoke, while a server runs) goes on working in this one for
//     at most ttl, then is looked up again and refused.
//   - An expired token is refused at once: its expiry travels with it.
//
// Only live tokens are kept, never a refusal: a token minted by another
// process works at once, and a stream of wrong secrets fills nothing.
type authCache struct {
	ttl time.Duration

	mu sync.Mutex
	// gen counts the revocations this Store made: a lookup keeps what it
	// read only if none committed since it began.
	gen     uint64
	entries map[string]authEntry // by the hash of the secret; ownerKey for the owner
}

type authEntry struct {
	token Token
	at    time.Time // when it was read
}

// ownerKey is the key of the owner token (see [Store.AuthenticateOwner]),
// which no hash of a secret equals: hashes are 32 bytes.
const ownerKey = "owner"

// maxAuthEntries bounds the cache: past it, it starts empty again.
const maxAuthEntries = 4096

// get returns the token kept under key if it was read less than ttl
// before now. With a ttl of 0 it keeps nothing.
func (c *authCache) get(key string, now time.Time) (Token, bool) {
	if c.ttl <= 0 {
		return Token{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || now.Before(e.at) || now.Sub(e.at) >= c.ttl {
		return Token{}, false
	}
	return e.token, true
}

// begin returns the generation that a lookup starting now reads in.
func (c *authCache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put keeps k under key, read at at, unless a revocation committed since
// gen.
func (c *authCache) put(key string, gen uint64, k Token, at time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.entries == nil || len(c.entries) >= maxAuthEntries {
		c.entries = map[string]authEntry{}
	}
	c.entries[key] = authEntry{k, at}
}

// used notes that the token id was used at used, as [Store.NoteUse] wrote
// it, so that the next calls within the minute do not write it again.
func (c *authCache) used(id, used string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, e := range c.entries {
		if e.token.ID == id && e.token.LastUsedAt < used {
			e.token.LastUsedAt = used
			c.entries[key] = e
		}
	}
}

// revoked forgets every token, once a revocation has committed.
func (c *authCache) revoked() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}
