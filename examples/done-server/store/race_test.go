package store

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
)

// The races of two replicas over the same rows, run as real concurrent
// transactions: on PostgreSQL each side has a Store of its own (its own
// pool, as a replica has) on one database; on SQLite the single writer
// orders them. Each race runs several rounds, so that both orders (and,
// on PostgreSQL, transactions that overlap) happen. In every one, exactly
// one side wins, the other is refused with an *Error that says what
// happened (never ErrBusy, never an error of the database), and the rows
// are as the winner left them.

// replicas opens two Stores on one database, with alice and bob (people)
// and builder and helper (agents) minted on it.
func replicas(t *testing.T) (a, b *Store, alice, bob, builder, helper Token) {
	t.Helper()
	dir := t.TempDir()
	a, _, err := openAt(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b, _, err = openAt(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	mint := func(name string, kind Kind) Token {
		k, _, err := a.MintToken(t.Context(), NewToken{Name: name, Kind: kind, Scope: mcpeffect.Full})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	return a, b, mint("alice", Human), mint("bob", Human), mint("builder", Agent), mint("helper", Agent)
}

// race runs one and other at the same moment, and returns their errors.
func race(one, other func() error) (error, error) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	var e1, e2 error
	wg.Go(func() { <-start; e1 = one() })
	wg.Go(func() { <-start; e2 = other() })
	close(start)
	wg.Wait()
	return e1, e2
}

// oneWins checks that exactly one of e1 and e2 is nil and the other a
// refusal of the domain whose message holds want.
func oneWins(t *testing.T, e1, e2 error, want string) {
	t.Helper()
	loser := e1
	switch {
	case e1 == nil && e2 == nil:
		t.Fatal("both sides won")
	case e1 != nil && e2 != nil:
		t.Fatalf("both sides lost: %v; %v", e1, e2)
	case e1 == nil:
		loser = e2
	}
	t.Logf("the loser: %v", loser)
	var refused *Error
	if !errors.As(loser, &refused) || !strings.Contains(loser.Error(), want) {
		t.Fatalf("the loser got %v (%T), want a refusal saying %q", loser, loser, want)
	}
}

const raceRounds = 8

func TestRaceApprove(t *testing.T) {
	a, b, alice, bob, builder, _ := replicas(t)
	ctx := t.Context()
	for range raceRounds {
		task, err := a.CreateTask(ctx, builder.Actor(), NewTask{Title: "ship"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.CloseTask(ctx, builder.Actor(), task.ID); err != nil {
			t.Fatal(err)
		}
		d, err := a.GetTask(ctx, task.ID)
		if err != nil || d.Approval == nil {
			t.Fatalf("no pending approval: %+v %v", d, err)
		}
		e1, e2 := race(
			func() error { _, err := a.ApproveTask(ctx, alice.Actor(), task.ID, d.Approval.ID, ""); return err },
			func() error { _, err := b.ApproveTask(ctx, bob.Actor(), task.ID, d.Approval.ID, ""); return err })
		oneWins(t, e1, e2, "was already approved by")
		// The same person again changes nothing and is no error.
		winner := alice
		if e1 != nil {
			winner = bob
		}
		if _, err := b.ApproveTask(ctx, winner.Actor(), task.ID, d.Approval.ID, ""); err != nil {
			t.Errorf("the winner approving again: %v", err)
		}
		if got, _ := a.GetTask(ctx, task.ID); got.Status != StatusDone {
			t.Errorf("task %s after the race, want done", got.Status)
		}
	}
}

func TestRaceClaim(t *testing.T) {
	a, b, _, _, builder, helper := replicas(t)
	ctx := t.Context()
	for range raceRounds {
		task, err := a.CreateTask(ctx, builder.Actor(), NewTask{Title: "free"})
		if err != nil {
			t.Fatal(err)
		}
		e1, e2 := race(
			func() error { _, err := a.ClaimTask(ctx, builder.Actor(), task.ID); return err },
			func() error { _, err := b.ClaimTask(ctx, helper.Actor(), task.ID); return err })
		oneWins(t, e1, e2, "is already assigned to")
		want := "builder"
		if e1 != nil {
			want = "helper"
		}
		if got, _ := a.GetTask(ctx, task.ID); got.Assignee != want {
			t.Errorf("assignee %q, want the winner %q", got.Assignee, want)
		}
	}
}

// TestRaceRestore: restoring converges (an item not in the Trash is left
// as it is, and the answer says restored: false), so the loser is told
// that it restored nothing, and the item is restored once.
func TestRaceRestore(t *testing.T) {
	a, b, alice, bob, _, _ := replicas(t)
	ctx := t.Context()
	for range raceRounds {
		task, err := a.CreateTask(ctx, alice.Actor(), NewTask{Title: "lost"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.DeleteTask(ctx, alice.Actor(), task.ID); err != nil {
			t.Fatal(err)
		}
		var r1, r2 Restored
		e1, e2 := race(
			func() (err error) { r1, err = a.RestoreFromTrash(ctx, alice.Actor(), task.ID); return err },
			func() (err error) { r2, err = b.RestoreFromTrash(ctx, bob.Actor(), task.ID); return err })
		if e1 != nil || e2 != nil || r1.Restored == r2.Restored {
			t.Fatalf("restored %v (%v) and %v (%v): want one restored, the other told it restored nothing", r1.Restored, e1, r2.Restored, e2)
		}
		if _, err := a.GetTask(ctx, task.ID); err != nil {
			t.Errorf("after the race: %v, want the task back", err)
		}
		n, err := read(ctx, a, Actor{}, func(t *tx) (n int, err error) {
			return n, t.queryRow(`SELECT count(*) FROM activity WHERE action = 'restore_from_trash' AND subject_id = ?`, task.ID).Scan(&n)
		})
		if err != nil || n != 1 {
			t.Errorf("%d restorations in the log (%v), want 1", n, err)
		}
	}
}

func TestRaceRotateLink(t *testing.T) {
	a, b, alice, _, _, _ := replicas(t)
	ctx := t.Context()
	for range raceRounds {
		l, _, err := a.CreateCalendarLink(ctx, alice.Actor(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		var s1, s2 string
		e1, e2 := race(
			func() error { _, s, err := a.RotateCalendarLink(ctx, alice.Actor(), l.ID); s1 = s; return err },
			func() error { _, s, err := b.RotateCalendarLink(ctx, alice.Actor(), l.ID); s2 = s; return err })
		oneWins(t, e1, e2, "was already rotated into")
		live := s1 + s2 // the loser's is empty
		if _, err := a.Feed(ctx, live); err != nil {
			t.Errorf("the winner's new link: %v", err)
		}
	}
}

func TestRaceMintAtCap(t *testing.T) {
	a, b, alice, _, _, _ := replicas(t)
	ctx := t.Context()
	// alice's tree holds alice; fill it to one below the cap.
	for i := 2; i < MaxLiveTokens; i++ {
		if _, _, err := a.CreateToken(ctx, alice.Actor(), mcpeffect.Full, NewToken{Name: "filler", Kind: Agent, Scope: mcpeffect.Full}); err != nil {
			t.Fatal(i, err)
		}
	}
	e1, e2 := race(
		func() error {
			_, _, err := a.CreateToken(ctx, alice.Actor(), mcpeffect.Full, NewToken{Name: "one", Kind: Agent, Scope: mcpeffect.Full})
			return err
		},
		func() error {
			_, _, err := b.CreateToken(ctx, alice.Actor(), mcpeffect.Full, NewToken{Name: "other", Kind: Agent, Scope: mcpeffect.Full})
			return err
		})
	oneWins(t, e1, e2, "already make 100 live tokens")
	if n := countTree(t, a, alice.ID); n != MaxLiveTokens {
		t.Errorf("%d live tokens in the tree after the race, want the cap, %d", n, MaxLiveTokens)
	}
}

// countTree counts the live tokens of the tree of root.
func countTree(t *testing.T, s *Store, root string) int {
	t.Helper()
	n, err := read(t.Context(), s, Actor{}, func(t *tx) (int, error) {
		var n int
		err := t.queryRow(grantTree+` SELECT count(*) FROM tree JOIN tokens k ON k.id = tree.id WHERE k.revoked_at IS NULL`, root).Scan(&n)
		return n, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRaceCloseWhileRejected: an agent asks again to close a task while
// a person rejects its pending request. Either order is fine; what must
// hold is the gate: the task awaits approval exactly when a close
// request is pending, and is never done.
func TestRaceCloseWhileRejected(t *testing.T) {
	a, b, alice, _, builder, _ := replicas(t)
	ctx := t.Context()
	for range raceRounds {
		task, err := a.CreateTask(ctx, builder.Actor(), NewTask{Title: "gate"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.CloseTask(ctx, builder.Actor(), task.ID); err != nil {
			t.Fatal(err)
		}
		d, _ := a.GetTask(ctx, task.ID)
		e1, e2 := race(
			func() error { _, err := a.CloseTask(ctx, builder.Actor(), task.ID); return err },
			func() error {
				_, err := b.RejectTask(ctx, alice.Actor(), task.ID, d.Approval.ID, "not yet")
				return err
			})
		for _, err := range []error{e1, e2} {
			var refused *Error
			if err != nil && !errors.As(err, &refused) {
				t.Fatalf("not a refusal: %v", err)
			}
		}
		got, err := a.GetTask(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		pending := got.Approval != nil && got.Approval.Status == "pending"
		if got.Status == StatusDone || (got.Status == StatusAwaitingApproval) != pending {
			t.Errorf("after the race: task %s, pending request %v: the gate is broken", got.Status, pending)
		}
	}
}

// TestRaceUseAnswer: replicas using the same answer of a confirmation at
// once: it is fresh for exactly one of them, and for no one after.
func TestRaceUseAnswer(t *testing.T) {
	a, b, _, _, _, _ := replicas(t)
	ctx := t.Context()
	expires := time.Now().Add(time.Minute)
	for i := range raceRounds {
		nonce := []byte{byte(i), 1, 2, 3}
		var f1, f2 bool
		e1, e2 := race(
			func() (err error) { f1, err = a.UseAnswer(ctx, nonce, expires); return err },
			func() (err error) { f2, err = b.UseAnswer(ctx, nonce, expires); return err })
		if e1 != nil || e2 != nil || f1 == f2 {
			t.Fatalf("fresh %v (%v) and %v (%v): want fresh for exactly one", f1, e1, f2, e2)
		}
		if again, err := a.UseAnswer(ctx, nonce, expires); err != nil || again {
			t.Errorf("a third use: fresh %v (%v), want used", again, err)
		}
	}
	if fresh, err := a.UseAnswer(ctx, []byte("late"), time.Now().Add(-time.Second)); err != nil || fresh {
		t.Errorf("an expired answer: fresh %v (%v), want refused", fresh, err)
	}
	if _, err := a.UseAnswer(ctx, make([]byte, MaxNonce+1), expires); err == nil {
		t.Error("a nonce longer than MaxNonce was kept")
	}
}
