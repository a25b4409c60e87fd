package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/mcpeffect/mcpeffect"
)

// A Token is a credential of a person or an agent, without its secret,
// which Done never keeps: it stores only a hash of it.
type Token struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Kind  Kind            `json:"kind"`
	Scope mcpeffect.Scope `json:"scope"`
	// CreatedBy is the name of whoever minted the token with create_token,
	// and CreatedByToken the token they minted it with, which it never
	// outlives; both empty for a token made with the command line.
	CreatedBy      string `json:"created_by,omitempty"`
	CreatedByToken string `json:"created_by_token,omitempty"`
	CreatedAt      string `json:"created_at"`
	ExpiresAt      string `json:"expires_at,omitempty"`
	RevokedAt      string `json:"revoked_at,omitempty"`
	LastUsedAt     string `json:"last_used_at,omitempty"`
	// Owner marks the token of the data directory's owner, which Done
	// serves as over stdio when DONE_TOKEN is not set (see [Store.Owner]).
	Owner bool `json:"owner,omitempty"`
	// Root is the id of the token made with the command line that this
	// one descends from, its own for such a token: the tree of tokens that
	// share the authority of one command-line token, and its limits (see
	// [MaxLiveTokens]). Set by [Store.Authenticate] and
	// [Store.AuthenticateOwner], for the token a call runs with; empty in
	// what lists tokens.
	Root string `json:"-"`
}

// Actor returns the actor that calls made with the token run as.
func (k Token) Actor() Actor {
	return Actor{TokenID: k.ID, Name: k.Name, Kind: k.Kind}
}

// Expiry returns when the token expires, or the zero Time if it does not.
func (k Token) Expiry() time.Time {
	t, _ := time.Parse(timeFormat, k.ExpiresAt)
	return t
}

// SecretPrefix begins every secret, so that a leaked one is easy to
// recognise (by a person, or by a secret scanner).
const SecretPrefix = "done_"

// secretBytes is the entropy of a secret: 256 bits, beyond guessing.
const secretBytes = 32

const tokenColumns = `k.id, k.name, k.kind, k.scope, COALESCE(c.name, ''), COALESCE(k.created_by, ''), k.created_at,
	COALESCE(k.expires_at, ''), COALESCE(k.revoked_at, ''), COALESCE(k.last_used_at, ''), k.owner`

const tokenFrom = ` FROM tokens k LEFT JOIN tokens c ON c.id = k.created_by`

func scanToken(row scanner) (Token, error) {
	var k Token
	var scope string
	err := row.Scan(&k.ID, &k.Name, &k.Kind, &scope, &k.CreatedBy, &k.CreatedByToken, &k.CreatedAt, &k.ExpiresAt, &k.RevokedAt, &k.LastUsedAt, &k.Owner)
	if err != nil {
		return k, err
	}
	k.Scope, err = mcpeffect.ParseScope(scope)
	return k, err
}

func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// NewToken holds what a new token is.
type NewToken struct {
	Name  string
	Kind  Kind
	Scope mcpeffect.Scope
	// TTL, if not zero, is how long the token lasts.
	TTL time.Duration
}

// MintToken creates a token on the command line's authority, and returns
// it with its secret. The secret is shown this once: only its hash is
// stored.
func (s *Store) MintToken(ctx context.Context, n NewToken) (Token, string, error) {
	type minted struct {
		token  Token
		secret string
	}
	m, err := write(ctx, s, Actor{}, func(t *tx) (minted, error) {
		k, secret, err := t.mint(n, nil)
		return minted{k, secret}, err
	})
	return m.token, m.secret, err
}

// CreateToken mints a token on the authority of the caller's token, and
// returns it with its secret. The new token never outlives the caller's:
// it expires at the latest when the caller's does (at once given no TTL),
// and revoking the caller's revokes it (see [Store.RevokeToken]). Its scope can be no wider than what the
// caller may do: the scope of the caller's token, capped by within, the
// scope of the call (less than the token's on a capped connection), so
// that a capped connection cannot mint its way out of the cap; the zero
// within mints nothing. An agent may mint tokens only for itself; a person
// may mint them for themself or for any agent, never for another person.
// A tree of tokens holds at most [MaxLiveTokens] live ones: past that,
// the call is refused until some are revoked.
func (s *Store) CreateToken(ctx context.Context, by Actor, within mcpeffect.Scope, n NewToken) (Token, string, error) {
	type minted struct {
		token  Token
		secret string
	}
	m, err := write(ctx, s, by, func(t *tx) (minted, error) {
		caller, err := t.token(by.TokenID)
		if err != nil {
			return minted{}, err
		}
		switch limit := min(caller.Scope, within); {
		case n.Scope <= limit:
		case limit < caller.Scope:
			return minted{}, forbiddenf("scope %s is wider than what this connection may do (%s; your token's is %s): a token can mint only scopes up to its caller's", n.Scope, limit, caller.Scope)
		default:
			return minted{}, forbiddenf("scope %s is wider than your token's (%s): a token can mint only scopes up to its own", n.Scope, caller.Scope)
		}
		self := n.Kind == by.Kind && n.Name == by.Name
		if !self && !(by.Kind == Human && n.Kind == Agent) {
			return minted{}, forbiddenf("you may mint tokens for yourself (%s)%s, not for %s %s",
				quote(by.Name), map[Kind]string{Human: " or for an agent", Agent: ""}[by.Kind], n.Kind, quote(n.Name))
		}
		if err := t.checkTokenRoom(caller.ID); err != nil {
			return minted{}, err
		}
		k, secret, err := t.mint(n, &caller)
		if err != nil {
			return minted{}, err
		}
		return minted{k, secret}, t.record("create_token", "token", k.ID, "", map[string]any{"name": k.Name, "kind": k.Kind, "scope": k.Scope, "expires_at": k.ExpiresAt})
	})
	return m.token, m.secret, err
}

// MaxLiveTokens is the most live tokens (neither revoked nor expired)
// that descend from one token the command line minted, that token
// included. create_token mints from the caller's token, which may mint
// for itself or, a person's, for any agent, under any new name: a bound
// per name would not bound a caller, one per tree does, whoever in the
// tree mints. A person with a token for each host and a few for each of
// their agents stays far below 100; a loop that mints without end stops
// there, and the tree's tokens are what list_tokens shows and
// revoke_token ends.
const MaxLiveTokens = 100

// liveTreeCount counts the live tokens of the tree of the token ?1 at the
// time ?2: up to its root, then down through live tokens (by the index
// tokens_created_by).
const liveTreeCount = `WITH RECURSIVE up(id, parent) AS (
		SELECT id, created_by FROM tokens WHERE id = ?1
		UNION ALL SELECT k.id, k.created_by FROM tokens k JOIN up ON k.id = up.parent),
	down(id) AS (
		SELECT id FROM up WHERE parent IS NULL
		UNION SELECT k.id FROM tokens k JOIN down ON k.created_by = down.id
		WHERE k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?2))
	SELECT count(*) FROM down`

// checkTokenRoom refuses a new token minted by the token id if the tree
// it belongs to (see [MaxLiveTokens]) holds as many live tokens as it
// may. The walk down goes through live tokens only: what a revoked or
// expired token minted is revoked or expired with it.
func (t *tx) checkTokenRoom(id string) error {
	var n int
	err := t.queryRow(liveTreeCount, id, t.nowText()).Scan(&n)
	if err != nil {
		return err
	}
	if n >= MaxLiveTokens {
		return conflictf("your token and those minted from the same command-line token already make %d live tokens, the most Done allows: "+
			"revoke those no longer in use (list_tokens, then revoke_token), or ask the person who gave you your token to, then mint again", n)
	}
	return nil
}

// mint makes a token, minted by parent if it is not nil: the command line
// mints without one. Its name is normalised, and refused if it could pass
// for another (see the rules in names.go).
func (t *tx) mint(n NewToken, parent *Token) (Token, string, error) {
	var err error
	if n.Name, err = normalizeName("name", n.Name); err != nil {
		return Token{}, "", err
	}
	if _, err := ParseKind(string(n.Kind)); err != nil {
		return Token{}, "", err
	}
	if n.Scope < mcpeffect.ReadOnly || n.Scope > mcpeffect.Full {
		return Token{}, "", invalidf("scope %s is not valid: want read-only, non-destructive or full", n.Scope)
	}
	if n.TTL < 0 {
		return Token{}, "", invalidf("a token cannot expire in the past")
	}
	// A name is one person or one agent, so that assignees and authors,
	// which are names, are never ambiguous.
	var other Kind
	err = t.queryRow(`SELECT kind FROM tokens WHERE name = ? AND kind <> ? LIMIT 1`, n.Name, string(n.Kind)).Scan(&other)
	switch {
	case err == nil:
		return Token{}, "", conflictf("the name %s belongs to %s %s: pick another name", quote(n.Name), article(other), other)
	case !errors.Is(err, sql.ErrNoRows):
		return Token{}, "", err
	}
	if err := t.checkNameFree("name", n.Name); err != nil {
		return Token{}, "", err
	}

	raw := make([]byte, secretBytes)
	rand.Read(raw) // never fails; see crypto/rand.Read
	secret := SecretPrefix + base64.RawURLEncoding.EncodeToString(raw)
	var expiry time.Time
	if n.TTL > 0 {
		expiry = t.now.Add(n.TTL)
	}
	createdBy := ""
	if parent != nil {
		createdBy = parent.ID
		if p := parent.Expiry(); !p.IsZero() && (expiry.IsZero() || p.Before(expiry)) {
			expiry = p
		}
	}
	var expires any
	if !expiry.IsZero() {
		expires = formatTime(expiry)
	}
	id := newID()
	_, err = t.exec(`INSERT INTO tokens (id, secret_hash, name, kind, scope, created_at, created_by, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		id, hashSecret(secret), n.Name, string(n.Kind), n.Scope.String(), t.nowText(), nullable(createdBy), expires)
	if err != nil {
		return Token{}, "", err
	}
	k, err := t.token(id)
	return k, secret, err
}

func article(k Kind) string {
	if k == Agent {
		return "an"
	}
	return "a"
}

func (t *tx) token(id string) (Token, error) {
	k, err := scanToken(t.queryRow(`SELECT `+tokenColumns+tokenFrom+` WHERE k.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return k, notFoundf("token %q does not exist", id)
	}
	return k, err
}

// ErrBadToken is the error of [Store.Authenticate] for a secret that is
// unknown, revoked or expired. It does not say which: a caller holding a
// bad secret learns nothing from the answer.
var ErrBadToken = errors.New("the token is unknown, revoked or expired")

// lastUseGranularity is how precisely a token's last use is recorded.
// Writing it on every request would turn each read into a write; to the
// minute is enough to tell a live token from a forgotten one.
const lastUseGranularity = time.Minute

// Authenticate returns the live token whose secret is secret, or
// [ErrBadToken]. It only reads: [Store.NoteUse] records the use. With
// [Options.AuthCache], it may answer from memory (see authcache.go).
func (s *Store) Authenticate(ctx context.Context, secret string) (Token, error) {
	if !strings.HasPrefix(secret, SecretPrefix) {
		return Token{}, ErrBadToken
	}
	hash := hashSecret(secret)
	return s.authenticate(ctx, string(hash), func(t *tx) (Token, error) {
		var stored []byte
		k, err := scanToken(scanExtra(t.queryRow(`SELECT `+tokenColumns+`, k.secret_hash`+tokenFrom+` WHERE k.secret_hash = ?`, hash), &stored))
		if errors.Is(err, sql.ErrNoRows) {
			return k, ErrBadToken
		}
		if err != nil {
			return k, err
		}
		// The lookup by hash already matched; comparing again in constant
		// time keeps that property should the lookup ever change (to a
		// prefix index, say).
		if subtle.ConstantTimeCompare(stored, hash) != 1 {
			return k, ErrBadToken
		}
		k.Root, err = t.origins(k.ID)
		return k, err
	})
}

// authenticate returns the token kept under key in the cache if there is
// one, and otherwise the token that lookup reads, keeping it if it is
// live.
func (s *Store) authenticate(ctx context.Context, key string, lookup func(*tx) (Token, error)) (Token, error) {
	now := s.now()
	if k, ok := s.auth.get(key, now); ok {
		return s.live(k)
	}
	gen := s.auth.begin()
	k, err := read(ctx, s, Actor{}, lookup)
	if err == nil {
		k, err = s.live(k)
	}
	if err != nil {
		return Token{}, err
	}
	s.auth.put(key, gen, k, now)
	return k, nil
}

// origins returns the root of the tree of the token id (see
// [Token.Root]), and [ErrBadToken] if a token that it descends from
// (whatever minted it, and so on) is revoked or expired. Revoking a token
// revokes what it minted, and a minted token expires with its parent, so
// this holds already; checking the chain on every use keeps it so
// whatever wrote the rows. The walk stops at a token met twice, should
// rows ever make a cycle, which then counts as its own root.
func (t *tx) origins(id string) (root string, err error) {
	var dead bool
	err = t.queryRow(`WITH RECURSIVE up(id, parent) AS (
			SELECT id, created_by FROM tokens WHERE id = ?1
			UNION SELECT k.id, k.created_by FROM tokens k JOIN up ON k.id = up.parent)
		SELECT COALESCE((SELECT id FROM up WHERE parent IS NULL), ?1),
			EXISTS (SELECT 1 FROM up JOIN tokens k ON k.id = up.id
				WHERE up.id <> ?1 AND (k.revoked_at IS NOT NULL OR k.expires_at <= ?2))`, id, t.nowText()).Scan(&root, &dead)
	if err == nil && dead {
		err = ErrBadToken
	}
	return root, err
}

// tokenLive reports whether the token id is live: neither it nor any token
// it descends from is revoked or expired.
func (t *tx) tokenLive(id string) (bool, error) {
	ok, err := t.exists(`SELECT 1 FROM tokens WHERE id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`, id, t.nowText())
	if err != nil || !ok {
		return false, err
	}
	switch _, err := t.origins(id); {
	case errors.Is(err, ErrBadToken):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// live returns k if it is live now, and [ErrBadToken] if it is revoked or
// expired.
func (s *Store) live(k Token) (Token, error) {
	if k.RevokedAt != "" || !k.Expiry().IsZero() && !s.now().Before(k.Expiry()) {
		return Token{}, ErrBadToken
	}
	return k, nil
}

// NoteUse records that the token k, as [Store.Authenticate] returned it,
// was used now, to the minute (see lastUseGranularity), and returns k with
// its LastUsedAt. It writes, in a transaction of its own, only when the
// minute has changed since k.LastUsedAt, so that the reads of a token
// used all the time stay reads; the write takes no earlier time than the
// one stored, whatever order concurrent calls commit in.
func (s *Store) NoteUse(ctx context.Context, k Token) (Token, error) {
	used := formatTime(s.now().Truncate(lastUseGranularity))
	if k.LastUsedAt >= used {
		return k, nil
	}
	_, err := write(ctx, s, k.Actor(), func(t *tx) (struct{}, error) {
		_, err := t.exec(`UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`, used, k.ID, used)
		return struct{}{}, err
	})
	if err != nil {
		return Token{}, err
	}
	s.auth.used(k.ID, used)
	k.LastUsedAt = used
	return k, nil
}

// Owner returns the token of the owner of the data directory: the one
// Done serves as over stdio when no DONE_TOKEN is set, because whoever
// can start the process on the directory already holds the database.
// The first call makes it, for a person called name with full scope, and
// reports created; its secret is thrown away at once, so that the token
// can be used only by the process itself, which finds it by its mark.
//
// A revoked owner token is returned as it is, and never replaced: revoking
// it is how the owner turns that way of serving off for good.
func (s *Store) Owner(ctx context.Context, name string) (k Token, created bool, err error) {
	type owner struct {
		token   Token
		created bool
	}
	o, err := write(ctx, s, Actor{}, func(t *tx) (owner, error) {
		k, err := t.owner()
		if err == nil || !errors.Is(err, sql.ErrNoRows) {
			return owner{k, false}, err
		}
		k, _, err = t.mint(NewToken{Name: name, Kind: Human, Scope: mcpeffect.Full}, nil)
		if err != nil {
			return owner{}, err
		}
		if _, err := t.exec(`UPDATE tokens SET owner = 1 WHERE id = ?`, k.ID); err != nil {
			return owner{}, err
		}
		k.Owner = true
		return owner{k, true}, nil
	})
	return o.token, o.created, err
}

func (t *tx) owner() (Token, error) {
	return scanToken(t.queryRow(`SELECT ` + tokenColumns + tokenFrom + ` WHERE k.owner = 1`))
}

// AuthenticateOwner returns the owner token (see [Store.Owner]) if it
// exists and is live, and [ErrBadToken] otherwise. As [Store.Authenticate],
// it only reads, and may answer from memory.
func (s *Store) AuthenticateOwner(ctx context.Context) (Token, error) {
	return s.authenticate(ctx, ownerKey, func(t *tx) (Token, error) {
		k, err := t.owner()
		if errors.Is(err, sql.ErrNoRows) {
			return k, ErrBadToken
		}
		if err != nil {
			return k, err
		}
		k.Root, err = t.origins(k.ID)
		return k, err
	})
}

// The tokens a caller oversees: its own (those with its name) and, for a
// person, every agent's. A token mints only for its own name or, a
// person's, for agents, so this holds everything a caller's tokens minted,
// at any depth; and every person can see and stop what any agent was
// given or made, as they can pause any agent or decide its requests.
const overseenTokens = `(k.name = ?1 OR (?2 = 'human' AND k.kind = 'agent'))`

// ListTokens returns the tokens the caller oversees, oldest first, one
// page at a time: its own and, for a person, every agent's, with who
// minted each. Secrets are never kept, so they are never shown.
func (s *Store) ListTokens(ctx context.Context, by Actor, p Page) (List[Token], error) {
	return read(ctx, s, by, func(t *tx) (List[Token], error) {
		if err := checkOptionalID("cursor", p.Cursor); err != nil {
			return List[Token]{}, err
		}
		return pageOf(t, p, scanToken, func(k Token) string { return k.ID }, `SELECT `+tokenColumns+tokenFrom+`
			WHERE `+overseenTokens+` AND k.id > ?3 ORDER BY k.id LIMIT +?4`, by.Name, string(by.Kind), p.Cursor)
	})
}

// RevokeToken revokes for good a token the caller oversees (see
// [Store.ListTokens]), and with it everything that grants access and
// descends from it: the tokens it minted, at any depth, and the calendar
// links any of them made. Calls made with them fail from the next one on.
// Revoking a revoked token changes nothing.
func (s *Store) RevokeToken(ctx context.Context, by Actor, id string) (Token, error) {
	// Once the write is over, committed or not (forgetting costs only
	// lookups), no token read before it is answered from memory.
	defer s.auth.revoked()
	return write(ctx, s, by, func(t *tx) (Token, error) {
		if err := checkID("token_id", id); err != nil {
			return Token{}, err
		}
		ok, err := t.exists(`SELECT 1 FROM tokens k WHERE k.id = ?3 AND `+overseenTokens, by.Name, string(by.Kind), id)
		if err != nil {
			return Token{}, err
		}
		if !ok {
			// The same answer as for a token that does not exist: the
			// caller learns nothing about the tokens of others.
			return Token{}, notFoundf("token %q does not exist", id)
		}
		k, err := t.token(id)
		if err != nil || k.RevokedAt != "" {
			return k, err
		}
		tokens, links, err := t.revoke(id)
		if err != nil {
			return Token{}, err
		}
		details := map[string]any{"name": k.Name}
		if len(tokens) > 1 {
			details["minted_tokens_revoked"] = tokens[1:]
		}
		if len(links) > 0 {
			details["calendar_links_revoked"] = links
		}
		if err := t.record("revoke_token", "token", id, "", details); err != nil {
			return Token{}, err
		}
		return t.token(id)
	})
}

// The statements of [tx.revoke], on the tree of the token ?1: that token
// and every token it minted, at any depth. Each step down the tree, and
// to the links of a token, goes by index (tokens_created_by,
// calendar_links_created_by), as TestGrantTreesReadByIndex checks.
const (
	grantTree = `WITH RECURSIVE tree(id) AS (
		SELECT id FROM tokens WHERE id = ?1 UNION SELECT k.id FROM tokens k JOIN tree ON k.created_by = tree.id)`
	treeTokens = grantTree + ` SELECT k.id FROM tree JOIN tokens k ON k.id = tree.id
		WHERE k.revoked_at IS NULL ORDER BY k.id = ?1 DESC, k.id`
	treeLinks = grantTree + ` SELECT l.id FROM calendar_links l
		WHERE l.created_by IN (SELECT id FROM tree) AND l.revoked_at IS NULL ORDER BY l.id`
	revokeTreeTokens = grantTree + ` UPDATE tokens SET revoked_at = ?2 WHERE id IN (SELECT id FROM tree) AND revoked_at IS NULL`
	revokeTreeLinks  = grantTree + ` UPDATE calendar_links SET revoked_at = ?2 WHERE created_by IN (SELECT id FROM tree) AND revoked_at IS NULL`
)

// A Revocation is what revoking a token would take with it (see
// [Store.RevokeToken]): the token, and how many live tokens minted from
// it, at any depth, and live calendar links of any of them, its own
// included, would end with it.
type Revocation struct {
	Token  Token
	Tokens int
	Links  int
}

// Revocation returns what revoking the token id, one that by oversees
// (see [Store.ListTokens]), would revoke, and changes nothing: the web
// page shows it to the person before they revoke. A token by does not
// oversee is answered as one that does not exist.
func (s *Store) Revocation(ctx context.Context, by Actor, id string) (Revocation, error) {
	return read(ctx, s, by, func(t *tx) (Revocation, error) {
		if err := checkID("token_id", id); err != nil {
			return Revocation{}, err
		}
		k, err := scanToken(t.queryRow(`SELECT `+tokenColumns+tokenFrom+` WHERE k.id = ?3 AND `+overseenTokens, by.Name, string(by.Kind), id))
		if errors.Is(err, sql.ErrNoRows) {
			return Revocation{}, notFoundf("token %q does not exist", id)
		}
		if err != nil || k.RevokedAt != "" {
			return Revocation{Token: k}, err
		}
		scanID := func(row scanner) (string, error) {
			var id string
			return id, row.Scan(&id)
		}
		tokens, err := collect(t, scanID, treeTokens, id)
		if err != nil {
			return Revocation{}, err
		}
		links, err := collect(t, scanID, treeLinks, id)
		if err != nil {
			return Revocation{}, err
		}
		return Revocation{Token: k, Tokens: max(len(tokens)-1, 0), Links: len(links)}, nil
	})
}

// revoke revokes the live token id with every live token it minted, at
// any depth, and every live calendar link those tokens made: whatever
// grants access by the token's authority ends with it. It returns the
// ids of the tokens revoked, id first, and of the links.
func (t *tx) revoke(id string) (tokens, links []string, err error) {
	scanID := func(row scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}
	if tokens, err = collect(t, scanID, treeTokens, id); err != nil {
		return nil, nil, err
	}
	if links, err = collect(t, scanID, treeLinks, id); err != nil {
		return nil, nil, err
	}
	now := t.nowText()
	if _, err := t.exec(revokeTreeTokens, id, now); err != nil {
		return nil, nil, err
	}
	if _, err := t.exec(revokeTreeLinks, id, now); err != nil {
		return nil, nil, err
	}
	if err := t.notifyRevoked(); err != nil {
		return nil, nil, err
	}
	return tokens, links, nil
}

// AllTokens returns every token, for the command line, which holds the
// database itself and so has authority over all of them.
func (s *Store) AllTokens(ctx context.Context) ([]Token, error) {
	return read(ctx, s, Actor{}, func(t *tx) ([]Token, error) {
		return collect(t, scanToken, `SELECT `+tokenColumns+tokenFrom+` ORDER BY k.id`)
	})
}

// RevokeAnyToken revokes any token, on the command line's authority: the
// way out when a token leaks and no other token may revoke it. As with
// [Store.RevokeToken], what the token minted and the calendar links they
// made are revoked with it. Revoking a revoked token changes nothing.
func (s *Store) RevokeAnyToken(ctx context.Context, id string) (Token, error) {
	defer s.auth.revoked() // as in RevokeToken
	return write(ctx, s, Actor{}, func(t *tx) (Token, error) {
		if err := checkID("token id", id); err != nil {
			return Token{}, err
		}
		k, err := t.token(id)
		if err != nil || k.RevokedAt != "" {
			return k, err
		}
		if _, _, err := t.revoke(id); err != nil {
			return Token{}, err
		}
		return t.token(id)
	})
}
