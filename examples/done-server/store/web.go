package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"strings"
	"time"
)

// The web page for people (package web) keeps its state here, in the
// database, so that any process serving the same data serves any page:
// the one-time links that sign a person in, the sessions they open, and
// the tool calls that wait for a person's answer on the page
// (confirmations). Each method is one transaction, and what a person
// does is in the activity log, as for the tools.

// Prefixes of the web's secrets. They differ from [SecretPrefix], so that
// a token's secret is never taken for a sign-in link or a session, nor
// one of those for a token.
const (
	LinkPrefix    = "donelink_"
	SessionPrefix = "donesess_"
)

// ErrBadLink is the error of [Store.SignIn] for a link that is unknown,
// used, expired, or whose token is no longer live. It does not say which.
var ErrBadLink = errors.New("the sign-in link is unknown, already used or expired")

// ErrBadSession is the error of [Store.WebSession] for a session that is
// unknown, ended or expired, or whose token is no longer live.
var ErrBadSession = errors.New("the session is unknown, ended or expired")

// A WebSession is a signed-in person on the web page: the token they
// signed in as (a person's, checked live on every read).
type WebSession struct {
	ID        string
	Token     Token
	CreatedAt string
	ExpiresAt string
}

// Now returns the store's current time, by which sessions, links and
// confirmations expire.
func (s *Store) Now() time.Time { return s.now() }

// newWebSecret returns a new secret with prefix, of 256 bits.
func newWebSecret(prefix string) string {
	b := make([]byte, secretBytes)
	rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// PersonToken returns the live token that a person named name signs in
// to the web page as: the owner's if it has that name, or else their
// live human token of the widest scope, the newest of those. A person
// without a live token is refused: the page acts with the authority of
// a token, as a tool call does.
func (s *Store) PersonToken(ctx context.Context, name string) (Token, error) {
	return read(ctx, s, Actor{}, func(t *tx) (Token, error) {
		name, err := normalizeName("name", name)
		if err != nil {
			return Token{}, err
		}
		tokens, err := collect(t, scanToken, `SELECT `+tokenColumns+tokenFrom+`
			WHERE k.name = ? AND k.kind = 'human' AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?)
			ORDER BY k.owner DESC, k.id DESC`, name, t.nowText())
		if err != nil {
			return Token{}, err
		}
		var best Token
		for _, k := range tokens {
			ok, err := t.tokenLive(k.ID)
			if err != nil {
				return Token{}, err
			}
			if ok && (best.ID == "" || !best.Owner && k.Scope > best.Scope) {
				best = k
			}
		}
		if best.ID == "" {
			return Token{}, notFoundf("no person named %s has a live token: mint one with token create -kind human", quote(name))
		}
		return best, nil
	})
}

// CreateSignInLink makes a one-time link that signs in as the person of
// the token tokenID (a live human token) for ttl, and returns its secret,
// shown this once: only its hash is kept. It is the command line's to
// call (done-server login), which holds the database; the activity log
// records it under the person's name.
func (s *Store) CreateSignInLink(ctx context.Context, tokenID string, ttl time.Duration) (secret string, expires time.Time, err error) {
	if ttl <= 0 {
		return "", time.Time{}, invalidf("a sign-in link must expire")
	}
	type made struct {
		secret  string
		expires time.Time
	}
	m, err := write(ctx, s, Actor{}, func(t *tx) (made, error) {
		k, err := t.personToken(tokenID)
		if err != nil {
			return made{}, err
		}
		t.by = k.Actor()
		secret := newWebSecret(LinkPrefix)
		expires := t.now.Add(ttl)
		id := newID()
		if _, err := t.exec(`INSERT INTO web_signin_links (id, secret_hash, token_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			id, hashSecret(secret), k.ID, t.nowText(), formatTime(expires)); err != nil {
			return made{}, err
		}
		return made{secret, expires}, t.record("create_signin_link", "signin_link", id, "", map[string]any{"expires_at": formatTime(expires), "by": "command line"})
	})
	return m.secret, m.expires, err
}

// personToken returns the token id if it is a live person's.
func (t *tx) personToken(id string) (Token, error) {
	if err := checkID("token id", id); err != nil {
		return Token{}, err
	}
	k, err := t.token(id)
	if err != nil {
		return Token{}, err
	}
	if k.Kind != Human {
		return Token{}, forbiddenf("token %q is %s's, an agent's: only a person signs in to the web page", k.ID, quote(k.Name))
	}
	ok, err := t.tokenLive(k.ID)
	if err != nil {
		return Token{}, err
	}
	if !ok {
		return Token{}, ErrBadToken
	}
	return k, nil
}

// SignIn uses the one-time link whose secret is link, and opens a session
// for ttl as the person it was made for; it returns the session and its
// secret, for the cookie. The link is used up, whatever follows: a link
// replayed is refused with [ErrBadLink], as are one expired and one
// whose token is no longer live.
func (s *Store) SignIn(ctx context.Context, link string, ttl time.Duration) (WebSession, string, error) {
	if !strings.HasPrefix(link, LinkPrefix) || len(link) > 100 {
		return WebSession{}, "", ErrBadLink
	}
	type opened struct {
		session WebSession
		secret  string
	}
	o, err := write(ctx, s, Actor{}, func(t *tx) (opened, error) {
		var id, tokenID, expiresAt, usedAt string
		err := t.queryRow(`SELECT id, token_id, expires_at, COALESCE(used_at, '') FROM web_signin_links WHERE secret_hash = ?`,
			hashSecret(link)).Scan(&id, &tokenID, &expiresAt, &usedAt)
		if errors.Is(err, sql.ErrNoRows) || err == nil && (usedAt != "" || expiresAt <= t.nowText()) {
			return opened{}, ErrBadLink
		}
		if err != nil {
			return opened{}, err
		}
		// Conditional, so that two uses at once cannot both succeed, on
		// a database that would let them both read the link unused.
		res, err := t.exec(`UPDATE web_signin_links SET used_at = ? WHERE id = ? AND used_at IS NULL`, t.nowText(), id)
		if err != nil {
			return opened{}, err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return opened{}, ErrBadLink
		}
		k, err := t.personToken(tokenID)
		if errors.Is(err, ErrBadToken) {
			return opened{}, ErrBadLink
		}
		if err != nil {
			return opened{}, err
		}
		t.by = k.Actor()
		secret := newWebSecret(SessionPrefix)
		ws := WebSession{ID: newID(), Token: k, CreatedAt: t.nowText(), ExpiresAt: formatTime(t.now.Add(ttl))}
		if _, err := t.exec(`INSERT INTO web_sessions (id, secret_hash, token_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			ws.ID, hashSecret(secret), k.ID, ws.CreatedAt, ws.ExpiresAt); err != nil {
			return opened{}, err
		}
		if err := t.record("sign_in", "web_session", ws.ID, "", map[string]any{"link": id, "expires_at": ws.ExpiresAt}); err != nil {
			return opened{}, err
		}
		return opened{ws, secret}, nil
	})
	// A refusal rolls back: a link whose token is no longer live stays
	// unused, and is refused again at each try.
	return o.session, o.secret, err
}

// WebSession returns the live session whose secret is secret, with its
// token, or [ErrBadSession]. It only reads.
func (s *Store) WebSession(ctx context.Context, secret string) (WebSession, error) {
	if !strings.HasPrefix(secret, SessionPrefix) || len(secret) > 100 {
		return WebSession{}, ErrBadSession
	}
	return read(ctx, s, Actor{}, func(t *tx) (WebSession, error) {
		var ws WebSession
		var tokenID, endedAt string
		err := t.queryRow(`SELECT id, token_id, created_at, expires_at, COALESCE(ended_at, '') FROM web_sessions WHERE secret_hash = ?`,
			hashSecret(secret)).Scan(&ws.ID, &tokenID, &ws.CreatedAt, &ws.ExpiresAt, &endedAt)
		if errors.Is(err, sql.ErrNoRows) || err == nil && (endedAt != "" || ws.ExpiresAt <= t.nowText()) {
			return WebSession{}, ErrBadSession
		}
		if err != nil {
			return WebSession{}, err
		}
		k, err := t.personToken(tokenID)
		if errors.Is(err, ErrBadToken) {
			return WebSession{}, ErrBadSession
		}
		if err != nil {
			return WebSession{}, err
		}
		if k.Root, err = t.origins(k.ID); err != nil {
			return WebSession{}, ErrBadSession
		}
		ws.Token = k
		return ws, nil
	})
}

// SignOut ends the session id of the person by. Ending an ended session
// changes nothing.
func (s *Store) SignOut(ctx context.Context, by Actor, id string) error {
	_, err := write(ctx, s, by, func(t *tx) (struct{}, error) {
		res, err := t.exec(`UPDATE web_sessions SET ended_at = ? WHERE id = ? AND token_id = ? AND ended_at IS NULL`, t.nowText(), id, by.TokenID)
		if err != nil {
			return struct{}{}, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return struct{}{}, nil
		}
		return struct{}{}, t.record("sign_out", "web_session", id, "", nil)
	})
	return err
}
