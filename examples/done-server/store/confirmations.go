package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpeffect/mcpeffect"
)

// A confirmation is one tool call that waits for a person's answer on the
// web page (serve -confirm url): bound to its caller's token, its tool
// and its arguments, answered once, before its deadline, by a person who
// may make the call, and used once, before that deadline too, by the call
// it was made for. What it keeps is bounded: the arguments the tool's
// schema accepted, at most [MaxConfirmationArguments] bytes of them, a
// question of at most [MaxQuestion] characters, and at most
// [MaxOpenConfirmations] open at once for a tree of tokens. A call
// waiting for the answer reads the answer alone ([Store.AwaitConfirmation]),
// woken by the answer where this Store, or on PostgreSQL another, wrote
// it.

// Bounds of what confirmations keep.
const (
	// MaxConfirmationArguments is the most bytes of arguments a
	// confirmation keeps, written compactly: more than the largest that
	// any of Done's tools accepts (save_context's text, 256 KiB), and
	// little enough for the page to show them whole.
	MaxConfirmationArguments = 320 << 10
	// MaxQuestion is the longest question put to the person, in
	// characters.
	MaxQuestion = 500
	// MaxOpenConfirmations is how many confirmations the tokens that
	// descend from one token of the command line, it included, may have
	// open at once between them: not answered and used, withdrawn or
	// expired. A bound for each token would be multiplied by the tokens
	// a caller can mint, as for the write rate.
	MaxOpenConfirmations = 16
	// confirmationKeep is how long a confirmation is kept past its
	// deadline: the page still says what became of it; a new one clears
	// away those older.
	confirmationKeep = 24 * time.Hour
	// confirmPoll is how often [Store.AwaitConfirmation] reads the answer
	// when nothing woke it: an answer written by another process on
	// SQLite, or on PostgreSQL while the notifications are not listened
	// to, is seen within it.
	confirmPoll = time.Second
)

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
	// as any person oversees every agent. Whoever answers must also hold
	// a scope that permits Effect (see [Confirmation.Needs]).
	Person string
	Tool   string
	// Effect is the effect of the call, as the decision that asked for
	// the confirmation computed it.
	Effect   mcpeffect.Effect
	Question string
	// Arguments are the call's arguments as its tool's schema accepted
	// them, in compact JSON; [Store.PendingConfirmations] leaves them
	// out.
	Arguments string
	CreatedAt string
	ExpiresAt string
	// Answer is "accepted", "declined" or "" (not yet).
	Answer     string
	AnsweredBy string
	AnsweredAt string
	UsedAt     string
}

// Expired reports whether c can no longer be answered, nor its answer
// used, at now.
func (c Confirmation) Expired(now time.Time) bool {
	return c.ExpiresAt <= formatTime(now)
}

// Needs returns the least scope that a person needs to answer c: the one
// its call needs.
func (c Confirmation) Needs() mcpeffect.Scope { return c.Effect.Required() }

// The answers to a confirmation.
const (
	Accepted = "accepted"
	Declined = "declined"
)

// ErrConfirmationUsed is the error of [Store.UseConfirmation] for an
// answer that a call has used already.
var ErrConfirmationUsed = errors.New("the confirmation was used already")

// ErrConfirmationExpired is the error, wrapped, of [Store.UseConfirmation]
// for a confirmation past its deadline: its answer, whatever it is, can
// no longer be used.
var ErrConfirmationExpired = errors.New("the confirmation has expired")

// A NewConfirmation is a call to ask a person about.
type NewConfirmation struct {
	Tool string
	// Effect is the call's effect: the person who answers must hold a
	// scope that permits it.
	Effect mcpeffect.Effect
	// Binding is the SHA-256 of what the answer is bound to (the tool and
	// the arguments), which the call checks when it uses the answer.
	Binding  []byte
	Question string
	// Arguments are the arguments the tool's schema accepted, as one
	// JSON object of at most MaxConfirmationArguments bytes.
	Arguments json.RawMessage
	TTL       time.Duration
}

const confirmationColumns = `c.id, c.token_id, k.name, k.kind, c.person, c.tool, c.effect, c.question, COALESCE(g.arguments, ''), c.created_at, c.expires_at,
	COALESCE(c.answer, ''), COALESCE(a.name, ''), COALESCE(c.answered_at, ''), COALESCE(c.used_at, '')`

const confirmationFrom = ` FROM web_confirmations c JOIN tokens k ON k.id = c.token_id LEFT JOIN tokens a ON a.id = c.answered_by
	LEFT JOIN web_confirmation_arguments g ON g.id = c.id`

// pendingColumns are confirmationColumns without the arguments, which a
// list does not show: it reads pendingFrom, without their table.
const pendingColumns = `c.id, c.token_id, k.name, k.kind, c.person, c.tool, c.effect, c.question, '', c.created_at, c.expires_at,
	COALESCE(c.answer, ''), COALESCE(a.name, ''), COALESCE(c.answered_at, ''), COALESCE(c.used_at, '')`

const pendingFrom = ` FROM web_confirmations c JOIN tokens k ON k.id = c.token_id LEFT JOIN tokens a ON a.id = c.answered_by`

func scanConfirmation(row scanner) (Confirmation, error) {
	var c Confirmation
	var effect string
	err := row.Scan(&c.ID, &c.TokenID, &c.Caller, &c.CallerKind, &c.Person, &c.Tool, &effect, &c.Question, &c.Arguments, &c.CreatedAt, &c.ExpiresAt,
		&c.Answer, &c.AnsweredBy, &c.AnsweredAt, &c.UsedAt)
	c.Effect = storedEffect(effect)
	return c, err
}

// worstEffect is what a confirmation made before Done kept the call's
// effect counts as: a call only a full token may answer.
const worstEffect = mcpeffect.Write | mcpeffect.Destructive | mcpeffect.OpenWorld

// storedEffect reads the effect column: the worst case for one that is
// empty or unreadable.
func storedEffect(text string) mcpeffect.Effect {
	e, err := mcpeffect.ParseEffect(text)
	if err != nil {
		return worstEffect
	}
	return e
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

// A ConfirmationState is what a call that waits for its confirmation
// reads of it: whose it is, its answer, and whether it is over. It is a
// few bytes, whatever the call's arguments.
type ConfirmationState struct {
	ID         string
	TokenID    string
	Answer     string
	AnsweredBy string
	UsedAt     string
	ExpiresAt  string
}

// Expired reports whether c can no longer be answered, nor its answer
// used, at now.
func (c ConfirmationState) Expired(now time.Time) bool {
	return c.ExpiresAt <= formatTime(now)
}

func (t *tx) confirmationState(id string) (ConfirmationState, error) {
	if err := checkID("confirmation id", id); err != nil {
		return ConfirmationState{}, err
	}
	c := ConfirmationState{ID: id}
	err := t.queryRow(`SELECT c.token_id, COALESCE(c.answer, ''), COALESCE(a.name, ''), COALESCE(c.used_at, ''), c.expires_at
		FROM web_confirmations c LEFT JOIN tokens a ON a.id = c.answered_by WHERE c.id = ?`, id).
		Scan(&c.TokenID, &c.Answer, &c.AnsweredBy, &c.UsedAt, &c.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, notFoundf("confirmation %q does not exist", id)
	}
	return c, err
}

// RequestConfirmation records the call of by described by n as waiting
// for a person's answer until n.TTL from now, and returns it. It is
// refused when n's arguments are not one JSON object of at most
// [MaxConfirmationArguments] bytes, when its question is longer than
// [MaxQuestion], and when by's tree of tokens has
// [MaxOpenConfirmations] open already: the refusal says to try again
// once one is answered. It clears away the confirmations over for more
// than a day. The activity log records the question.
func (s *Store) RequestConfirmation(ctx context.Context, by Actor, n NewConfirmation) (Confirmation, error) {
	if n.TTL <= 0 || len(n.Binding) == 0 {
		return Confirmation{}, invalidf("a confirmation needs a binding and a deadline")
	}
	if !n.Effect.Valid() {
		return Confirmation{}, invalidf("a confirmation needs the call's effect")
	}
	if err := checkName("tool", n.Tool); err != nil {
		return Confirmation{}, err
	}
	if err := checkText("question", n.Question, MaxQuestion); err != nil {
		return Confirmation{}, err
	}
	if len(n.Arguments) > MaxConfirmationArguments {
		return Confirmation{}, invalidf("the arguments of a call confirmed on the page may take at most %d KiB written compactly; these take %d KiB: "+
			"make the call with less, or without -confirm url", MaxConfirmationArguments>>10, (len(n.Arguments)+1023)>>10)
	}
	var object map[string]json.RawMessage
	if json.Unmarshal(n.Arguments, &object) != nil || object == nil || !utf8.Valid(n.Arguments) {
		return Confirmation{}, invalidf("the arguments of a confirmation are one JSON object")
	}
	return write(ctx, s, by, func(t *tx) (Confirmation, error) {
		root, err := t.origins(by.TokenID)
		if err != nil {
			return Confirmation{}, err
		}
		if _, err := t.exec(`DELETE FROM web_confirmations WHERE expires_at <= ?`, formatTime(t.now.Add(-confirmationKeep))); err != nil {
			return Confirmation{}, err
		}
		var open int
		if err := t.queryRow(`SELECT count(*) FROM web_confirmations WHERE root = ? AND used_at IS NULL AND expires_at > ?`,
			root, t.nowText()).Scan(&open); err != nil {
			return Confirmation{}, err
		}
		if open >= MaxOpenConfirmations {
			return Confirmation{}, conflictf("this token, with those minted from the same command-line token, has %d calls waiting for a person's answer on the page, "+
				"the most Done keeps at once: try again once the person has answered one, or it has expired (each waits at most %v)", open, n.TTL)
		}
		// The nearest person up the caller's tree, itself included.
		var person string
		err = t.queryRow(`WITH RECURSIVE up(id, parent, depth) AS (
				SELECT id, created_by, 0 FROM tokens WHERE id = ?
				UNION ALL SELECT k.id, k.created_by, up.depth + 1 FROM tokens k JOIN up ON k.id = up.parent WHERE up.depth < 100)
			SELECT k.name FROM up JOIN tokens k ON k.id = up.id WHERE k.kind = 'human' ORDER BY up.depth LIMIT 1`, by.TokenID).Scan(&person)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return Confirmation{}, err
		}
		id := newID()
		if _, err := t.exec(`INSERT INTO web_confirmations (id, token_id, root, person, tool, effect, binding, question, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, by.TokenID, root, person, n.Tool, n.Effect.String(), n.Binding, n.Question,
			t.nowText(), formatTime(t.now.Add(n.TTL))); err != nil {
			return Confirmation{}, err
		}
		if _, err := t.exec(`INSERT INTO web_confirmation_arguments (id, arguments) VALUES (?, ?)`, id, string(n.Arguments)); err != nil {
			return Confirmation{}, err
		}
		if err := t.record("request_confirmation", "confirmation", id, "", map[string]any{"tool": n.Tool, "question": n.Question}); err != nil {
			return Confirmation{}, err
		}
		return t.confirmation(id)
	})
}

// GetConfirmation returns the confirmation id, its arguments included.
func (s *Store) GetConfirmation(ctx context.Context, id string) (Confirmation, error) {
	return read(ctx, s, Actor{}, func(t *tx) (Confirmation, error) { return t.confirmation(id) })
}

// GetConfirmationState returns the state of the confirmation id: its
// answer, not its arguments.
func (s *Store) GetConfirmationState(ctx context.Context, id string) (ConfirmationState, error) {
	return read(ctx, s, Actor{}, func(t *tx) (ConfirmationState, error) { return t.confirmationState(id) })
}

// AwaitConfirmation waits until the confirmation id is answered, is over
// (used or withdrawn) or has expired, or ctx is done, and returns its
// state. It reads the answer alone: when this Store writes it (or, on
// PostgreSQL, another Store that this one hears, see [Options.AuthCache]),
// at once; otherwise at the next read, within a second.
func (s *Store) AwaitConfirmation(ctx context.Context, id string) (ConfirmationState, error) {
	// Watching before the first read: an answer written between the two
	// still wakes it.
	woken, stop := s.confirmWaits.watch(id)
	defer stop()
	tick := time.NewTicker(confirmPoll)
	defer tick.Stop()
	for {
		c, err := s.GetConfirmationState(ctx, id)
		if err != nil || c.Answer != "" || c.UsedAt != "" || c.Expired(s.now()) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-woken:
		case <-tick.C:
		}
	}
}

// MayAnswer returns why the person of the token k may not answer c, or
// nil: a person, the one c waits for, whose token's scope permits the
// call, as every other change of the page needs. [Store.AnswerConfirmation]
// checks it; a page shows it before it offers the answer.
func MayAnswer(c Confirmation, k Token) error {
	if k.Kind != Human {
		return forbiddenf("only a person may answer a confirmation")
	}
	if c.Person != "" && c.Person != k.Name {
		return forbiddenf("this call waits for %s's answer, not yours", quote(c.Person))
	}
	if !k.Scope.Allows(c.Effect) {
		return forbiddenf("this call (%s) needs a %s token, and so does answering it: yours is %s", c.Effect, c.Needs(), k.Scope)
	}
	return nil
}

// AnswerConfirmation records the answer of the person by to the
// confirmation id: accepted if accept, declined otherwise. It is refused
// if the confirmation is not by's to answer (see [Confirmation].Person),
// if by's token's scope does not permit the call (the scope that every
// change on the page needs, a decline included), if it is answered
// already, or if it has expired.
func (s *Store) AnswerConfirmation(ctx context.Context, by Actor, id string, accept bool) (Confirmation, error) {
	c, err := write(ctx, s, by, func(t *tx) (Confirmation, error) {
		c, err := t.confirmation(id)
		if err != nil {
			return Confirmation{}, err
		}
		k, err := t.token(by.TokenID)
		if err != nil {
			return Confirmation{}, err
		}
		if err := MayAnswer(c, k); err != nil {
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
		if err := t.notifyConfirmation(id); err != nil {
			return Confirmation{}, err
		}
		return t.confirmation(id)
	})
	if err == nil {
		s.confirmWaits.wake(id)
	}
	return c, err
}

// UseConfirmation marks the answered confirmation id as used by the call
// it was made for, once: the token caller, with the binding the call has
// now, before the confirmation's deadline. It returns its state, or
// [ErrConfirmationUsed] if a call used it already, or
// [ErrConfirmationExpired], wrapped, past its deadline: an answer is
// good until then, and for nothing after.
func (s *Store) UseConfirmation(ctx context.Context, caller Actor, id string, binding []byte) (ConfirmationState, error) {
	c, err := write(ctx, s, caller, func(t *tx) (ConfirmationState, error) {
		c, err := t.confirmationState(id)
		if err != nil {
			return ConfirmationState{}, err
		}
		var stored []byte
		if err := t.queryRow(`SELECT binding FROM web_confirmations WHERE id = ?`, id).Scan(&stored); err != nil {
			return ConfirmationState{}, err
		}
		if c.TokenID != caller.TokenID || string(stored) != string(binding) {
			return ConfirmationState{}, forbiddenf("confirmation %q is not this call's", id)
		}
		if c.UsedAt != "" {
			return ConfirmationState{}, ErrConfirmationUsed
		}
		if c.Expired(t.now) {
			return ConfirmationState{}, fmt.Errorf("%w: confirmation %q could be used until %s", ErrConfirmationExpired, id, c.ExpiresAt)
		}
		if c.Answer == "" {
			return ConfirmationState{}, conflictf("confirmation %q has no answer yet", id)
		}
		res, err := t.exec(`UPDATE web_confirmations SET used_at = ? WHERE id = ? AND used_at IS NULL`, t.nowText(), id)
		if err != nil {
			return ConfirmationState{}, err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return ConfirmationState{}, ErrConfirmationUsed
		}
		if err := t.notifyConfirmation(id); err != nil {
			return ConfirmationState{}, err
		}
		return t.confirmationState(id)
	})
	if err == nil {
		s.confirmWaits.wake(id)
	}
	return c, err
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
		if err := t.notifyConfirmation(id); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, t.record("withdraw_confirmation", "confirmation", id, "", nil)
	})
	if err == nil {
		s.confirmWaits.wake(id)
	}
	return err
}

// PendingConfirmations returns the confirmations the person by may
// answer, not answered and not expired, oldest first, at most
// [MaxShown], and whether there are more; without their arguments,
// which a list does not show, so that what it reads is bounded by its
// questions.
func (s *Store) PendingConfirmations(ctx context.Context, by Actor) ([]Confirmation, bool, error) {
	type page struct {
		items []Confirmation
		more  bool
	}
	p, err := read(ctx, s, by, func(t *tx) (page, error) {
		if by.Kind != Human {
			return page{items: []Confirmation{}}, nil
		}
		items, more, err := shown(t, scanConfirmation, `SELECT `+pendingColumns+pendingFrom+`
			WHERE c.person IN (?, '') AND c.answer IS NULL AND c.used_at IS NULL AND c.expires_at > ? ORDER BY c.id LIMIT +?`, by.Name, t.nowText())
		return page{items, more}, err
	})
	return p.items, p.more, err
}

// waiters are the calls of one Store that wait for the answers to their
// confirmations ([Store.AwaitConfirmation]), by confirmation id: a write
// of the answer wakes them.
type waiters struct {
	mu sync.Mutex
	m  map[string]map[chan struct{}]struct{}
}

// watch returns a channel that receives when the confirmation id may have
// changed, and what stops the watch.
func (w *waiters) watch(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	if w.m == nil {
		w.m = map[string]map[chan struct{}]struct{}{}
	}
	if w.m[id] == nil {
		w.m[id] = map[chan struct{}]struct{}{}
	}
	w.m[id][ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.m[id], ch)
		if len(w.m[id]) == 0 {
			delete(w.m, id)
		}
		w.mu.Unlock()
	}
}

// wake wakes the watches of the confirmation id.
func (w *waiters) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.m[id] {
		select {
		case ch <- struct{}{}:
		default: // woken already, not yet read
		}
	}
}

// wakeAll wakes every watch: the notifications of another Store may have
// been lost.
func (w *waiters) wakeAll() {
	w.mu.Lock()
	ids := make([]string, 0, len(w.m))
	for id := range w.m {
		ids = append(ids, id)
	}
	w.mu.Unlock()
	for _, id := range ids {
		w.wake(id)
	}
}
