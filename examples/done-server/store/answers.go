package store

import (
	"context"
	"time"
)

// MaxNonce is the longest nonce [Store.UseAnswer] keeps, in bytes.
const MaxNonce = 64

// UseAnswer marks the answer whose nonce is given as used, and reports
// whether it was fresh: the first use of the nonce, on any process that
// shares the database. It keeps the nonce until expires, after which the
// answer is refused for its age anyway, and forgets those that expired.
// It has the method of mcpeffect's ConfirmOptions.Answers, so that a
// person's acceptance of a confirmed call is used once across every
// replica of Done, not once in each.
//
// It writes no activity: a used answer is bookkeeping of the
// confirmation, not a change anyone made.
func (s *Store) UseAnswer(ctx context.Context, nonce []byte, expires time.Time) (fresh bool, err error) {
	if len(nonce) == 0 || len(nonce) > MaxNonce {
		return false, invalidf("a nonce is 1 to %d bytes, not %d", MaxNonce, len(nonce))
	}
	return write(ctx, s, Actor{}, func(t *tx) (bool, error) {
		now := t.nowText()
		if _, err := t.exec(`DELETE FROM used_answers WHERE expires_at <= ?`, now); err != nil {
			return false, err
		}
		if !expires.After(t.now) {
			// Already expired: refused for its age, nothing to keep.
			return false, nil
		}
		res, err := t.exec(`INSERT INTO used_answers (nonce, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, nonce, formatTime(expires))
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n == 1, err
	})
}
