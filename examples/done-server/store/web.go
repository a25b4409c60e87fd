package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
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

// A Confirmation is one tool call waiting for a person's answer on the
// web page, or answered there.
type Confirmation struct {
	ID string
	// TokenID is the caller's token, and Caller and CallerKind who it is.
	TokenID    string
	Caller     string
	CallerKind Kind
	// Person is who may answer: the caller if a person, else the person
	// who minted the caller's token (the nearest up its tree); "" for an
	// agent's token of the command line, which any person may answer for,
	// as any person oversees every agent.
	Person    string
	Tool      string
	Question  string
	Arguments string
	CreatedAt string
	ExpiresAt string
	// Answer is "accepted", "declined" or "" (not yet).
	Answer     string
	AnsweredBy string
	AnsweredAt string
	UsedAt     string
}

// Expired reports whether c can no longer be answered at now.
func (c Confirmation) Expired(now time.Time) bool {
	return c.ExpiresAt <= formatTime(now)
}

// The answers to a confirmation.
const (
	Accepted = "accepted"
	Declined = "declined"
)

// ErrConfirmationUsed is the error of [Store.UseConfirmation] for an
// answer that a call has used already.
var ErrConfirmationUsed = errors.New("the confirmation was used already")

// A NewConfirmation is a call to ask a person about.
type NewConfirmation struct {
	Tool string
	// Binding is the SHA-256 of what the answer is bound to (the tool and
	// the arguments), which the call checks when it uses the answer.
	Binding   []byte
	Question  string
	Arguments json.RawMessage
	TTL       time.Duration
}

const confirmationColumns = `c.id, c.token_id, k.name, k.kind, c.person, c.tool, c.question, c.arguments, c.created_at, c.expires_at,
	COALESCE(c.answer, ''), COALESCE(a.name, ''), COALESCE(c.answered_at, ''), COALESCE(c.used_at, '')`

const confirmationFrom = ` FROM web_confirmations c JOIN tokens k ON k.id = c.token_id LEFT JOIN tokens a ON a.id = c.answered_by`

func scanConfirmation(row scanner) (Confirmation, error) {
	var c Confirmation
	err := row.Scan(&c.ID, &c.TokenID, &c.Caller, &c.CallerKind, &c.Person, &c.Tool, &c.Question, &c.Arguments, &c.CreatedAt, &c.ExpiresAt,
		&c.Answer, &c.AnsweredBy, &c.AnsweredAt, &c.UsedAt)
	return c, err
}

func (t *tx) confirmation(id string) (Confirmation, error) {
	if err := checkID("confirmation id", id); err != nil {
		return Confirmation{}, err
	}
	c, err := scanConfirmation(t.queryRow(`SELECT `+confirmationColumns+confirmationFrom+` WHERE c.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, notFoundf("confirmation %q does not exist", id)
	}
	return c, err
}

// RequestConfirmation records the call of by described by n as waiting
// for a person's answer until n.TTL from now, and returns it. The
// activity log records the question.
func (s *Store) RequestConfirmation(ctx context.Context, by Actor, n NewConfirmation) (Confirmation, error) {
	return write(ctx, s, by, func(t *tx) (Confirmation, error) {
		if n.TTL <= 0 || len(n.Binding) == 0 {
			return Confirmation{}, invalidf("a confirmation needs a binding and a deadline")
		}
		// The nearest person up the caller's tree, itself included.
		var person string
		err := t.queryRow(`WITH RECURSIVE up(id, parent, depth) AS (
				SELECT id, created_by, 0 FROM tokens WHERE id = ?
				UNION ALL SELECT k.id, k.created_by, up.depth + 1 FROM tokens k JOIN up ON k.id = up.parent WHERE up.depth < 100)
			SELECT k.name FROM up JOIN tokens k ON k.id = up.id WHERE k.kind = 'human' ORDER BY up.depth LIMIT 1`, by.TokenID).Scan(&person)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return Confirmation{}, err
		}
		id := newID()
		if _, err := t.exec(`INSERT INTO web_confirmations (id, token_id, person, tool, binding, question, arguments, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, by.TokenID, person, n.Tool, n.Binding, n.Question, string(n.Arguments),
			t.nowText(), formatTime(t.now.Add(n.TTL))); err != nil {
			return Confirmation{}, err
		}
		if err := t.record("request_confirmation", "confirmation", id, "", map[string]any{"tool": n.Tool, "question": n.Question}); err != nil {
			return Confirmation{}, err
		}
		return t.confirmation(id)
	})
}

// GetConfirmation returns the confirmation id.
func (s *Store) GetConfirmation(ctx context.Context, id string) (Confirmation, error) {
	return read(ctx, s, Actor{}, func(t *tx) (Confirmation, error) { return t.confirmation(id) })
}

// mayAnswer returns why the person by may not answer c, or nil.
func mayAnswer(c Confirmation, by Actor) error {
	if by.Kind != Human {
		return forbiddenf("only a person may answer a confirmation")
	}
	if c.Person != "" && c.Person != by.Name {
		return forbiddenf("this call waits for %s's answer, not yours", quote(c.Person))
	}
	return nil
}

// AnswerConfirmation records the answer of the person by to the
// confirmation id: accepted if accept, declined otherwise. It is refused
// if the confirmation is not by's to answer (see [Confirmation].Person),
// is answered already, or has expired.
func (s *Store) AnswerConfirmation(ctx context.Context, by Actor, id string, accept bool) (Confirmation, error) {
	return write(ctx, s, by, func(t *tx) (Confirmation, error) {
		c, err := t.confirmation(id)
		if err != nil {
			return Confirmation{}, err
		}
		if err := mayAnswer(c, by); err != nil {
			return Confirmation{}, err
		}
		if c.Answer != "" {
			return Confirmation{}, conflictf("this call was %s already, by %s at %s", c.Answer, quote(c.AnsweredBy), c.AnsweredAt)
		}
		if c.UsedAt != "" {
			return Confirmation{}, conflictf("this call is over: it was refused at %s, unanswered", c.UsedAt)
		}
		if c.Expired(t.now) {
			return Confirmation{}, conflictf("this call waited until %s for an answer, and was refused", c.ExpiresAt)
		}
		answer, action := Declined, "decline_call"
		if accept {
			answer, action = Accepted, "confirm_call"
		}
		res, err := t.exec(`UPDATE web_confirmations SET answer = ?, answered_by = ?, answered_at = ? WHERE id = ? AND answer IS NULL`,
			answer, by.TokenID, t.nowText(), id)
		if err != nil {
			return Confirmation{}, err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return Confirmation{}, conflictf("this call was answered already")
		}
		if err := t.record(action, "confirmation", id, "", map[string]any{"tool": c.Tool, "caller": c.Caller}); err != nil {
			return Confirmation{}, err
		}
		return t.confirmation(id)
	})
}

// UseConfirmation marks the answered confirmation id as used by the call
// it was made for, once: the token caller, with the binding the call has
// now. It returns the confirmation, or [ErrConfirmationUsed] if a call
// used it already.
func (s *Store) UseConfirmation(ctx context.Context, caller Actor, id string, binding []byte) (Confirmation, error) {
	return write(ctx, s, caller, func(t *tx) (Confirmation, error) {
		c, err := t.confirmation(id)
		if err != nil {
			return Confirmation{}, err
		}
		var stored []byte
		if err := t.queryRow(`SELECT binding FROM web_confirmations WHERE id = ?`, id).Scan(&stored); err != nil {
			return Confirmation{}, err
		}
		if c.TokenID != caller.TokenID || string(stored) != string(binding) {
			return Confirmation{}, forbiddenf("confirmation %q is not this call's", id)
		}
		if c.Answer == "" {
			return Confirmation{}, conflictf("confirmation %q has no answer yet", id)
		}
		res, err := t.exec(`UPDATE web_confirmations SET used_at = ? WHERE id = ? AND used_at IS NULL`, t.nowText(), id)
		if err != nil {
			return Confirmation{}, err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return Confirmation{}, ErrConfirmationUsed
		}
		return t.confirmation(id)
	})
}

// WithdrawConfirmation ends the confirmation id of the call of caller
// that will not use it: the host would not open the page, the client
// went away, the deadline passed. It can no longer be answered. Ending
// one that is used or withdrawn changes nothing.
func (s *Store) WithdrawConfirmation(ctx context.Context, caller Actor, id string) error {
	_, err := write(ctx, s, caller, func(t *tx) (struct{}, error) {
		res, err := t.exec(`UPDATE web_confirmations SET used_at = ? WHERE id = ? AND token_id = ? AND used_at IS NULL`, t.nowText(), id, caller.TokenID)
		if err != nil {
			return struct{}{}, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return struct{}{}, nil
		}
		return struct{}{}, t.record("withdraw_confirmation", "confirmation", id, "", nil)
	})
	return err
}

// PendingConfirmations returns the confirmations the person by may
// answer, not answered and not expired, oldest first, at most
// [MaxLimit].
func (s *Store) PendingConfirmations(ctx context.Context, by Actor) ([]Confirmation, error) {
	return read(ctx, s, by, func(t *tx) ([]Confirmation, error) {
		if by.Kind != Human {
			return []Confirmation{}, nil
		}
		return collect(t, scanConfirmation, `SELECT `+confirmationColumns+confirmationFrom+`
			WHERE c.person IN (?, '') AND c.answer IS NULL AND c.used_at IS NULL AND c.expires_at > ? ORDER BY c.id LIMIT 200`, by.Name, t.nowText())
	})
}
