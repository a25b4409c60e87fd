package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
)

var destructive = mcpeffect.Write | mcpeffect.Destructive

func newConfirmation(args string) NewConfirmation {
	return NewConfirmation{Tool: "delete_task", Effect: destructive, Binding: []byte("binding"), Question: "Delete?",
		Arguments: json.RawMessage(args), TTL: 10 * time.Minute}
}

// TestConfirmationBounds: a confirmation keeps one JSON object of
// arguments, of at most MaxConfirmationArguments bytes, and a question of
// at most MaxQuestion characters; a tree of tokens has at most
// MaxOpenConfirmations open at once, and another tree is not held back by
// it; one over for a day is cleared away.
func TestConfirmationBounds(t *testing.T) {
	ctx := t.Context()
	s, c := openClocked(t)
	alice, _, _ := s.MintToken(ctx, NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})
	bob, _, _ := s.MintToken(ctx, NewToken{Name: "bob", Kind: Human, Scope: mcpeffect.Full})
	bot, _, err := s.CreateToken(ctx, alice.Actor(), mcpeffect.Full, NewToken{Name: "bot", Kind: Agent, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}

	big := `{"text":"` + strings.Repeat("x", MaxConfirmationArguments) + `"}`
	for name, n := range map[string]NewConfirmation{
		"arguments too large":    newConfirmation(big),
		"arguments not a object": newConfirmation(`["a"]`),
		"arguments null":         newConfirmation(`null`),
		"arguments not JSON":     newConfirmation(`{"a":`),
		"question too long": func() NewConfirmation {
			n := newConfirmation(`{}`)
			n.Question = strings.Repeat("q", MaxQuestion+1)
			return n
		}(),
		"no effect": func() NewConfirmation { n := newConfirmation(`{}`); n.Effect = 0; return n }(),
	} {
		if _, err := s.RequestConfirmation(ctx, bot.Actor(), n); err == nil {
			t.Errorf("%s: kept", name)
		}
	}
	var dump strings.Builder
	if err := s.Dump(ctx, &dump); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dump.String(), "xxxxxxxx") {
		t.Error("the refused arguments are in the database")
	}

	// The agent and the person who minted it are one tree.
	var first Confirmation
	for i := range MaxOpenConfirmations {
		by := bot.Actor()
		if i%2 == 1 {
			by = alice.Actor()
		}
		conf, err := s.RequestConfirmation(ctx, by, newConfirmation(`{"task_id":"x"}`))
		if err != nil {
			t.Fatalf("confirmation %d of %d: %v", i+1, MaxOpenConfirmations, err)
		}
		if i == 0 {
			first = conf
		}
	}
	_, err = s.RequestConfirmation(ctx, bot.Actor(), newConfirmation(`{}`))
	if err == nil || !strings.Contains(err.Error(), "try again once the person has answered one") {
		t.Fatalf("confirmation %d of one tree: %v, want a refusal that says to try again", MaxOpenConfirmations+1, err)
	}
	if _, err := s.RequestConfirmation(ctx, bob.Actor(), newConfirmation(`{}`)); err != nil {
		t.Errorf("another tree, held back by alice's: %v", err)
	}
	// Answered and used, one is no longer open.
	if _, err := s.AnswerConfirmation(ctx, alice.Actor(), first.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestConfirmation(ctx, bot.Actor(), newConfirmation(`{}`)); err == nil {
		t.Error("an answer not yet used freed a place")
	}
	if _, err := s.UseConfirmation(ctx, bot.Actor(), first.ID, []byte("binding")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestConfirmation(ctx, bot.Actor(), newConfirmation(`{}`)); err != nil {
		t.Errorf("after one was used: %v", err)
	}
	// Expired, none is open.
	c.add(10 * time.Minute)
	if _, err := s.RequestConfirmation(ctx, bot.Actor(), newConfirmation(`{}`)); err != nil {
		t.Errorf("after the others expired: %v", err)
	}
	// A day past its deadline, a confirmation is cleared away by the
	// next; the page of one over since less is still there.
	recent, err := s.RequestConfirmation(ctx, bob.Actor(), newConfirmation(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	c.add(confirmationKeep)
	if _, err := s.RequestConfirmation(ctx, bob.Actor(), newConfirmation(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetConfirmation(ctx, first.ID); err == nil {
		t.Error("a confirmation over for more than a day is kept")
	}
	if _, err := s.GetConfirmation(ctx, recent.ID); err != nil {
		t.Errorf("a confirmation over for less than a day: %v", err)
	}

	// The list of a person's pending confirmations leaves the arguments
	// out.
	pending, _, err := s.PendingConfirmations(ctx, bob.Actor())
	if err != nil || len(pending) != 1 || pending[0].Arguments != "" || pending[0].Question != "Delete?" {
		t.Errorf("PendingConfirmations: %+v, %v", pending, err)
	}
}

// TestConfirmationPendingShown: a person's list of pending confirmations
// stops at MaxShown, and says there are more.
func TestConfirmationPendingShown(t *testing.T) {
	ctx := t.Context()
	s, _ := openClocked(t)
	alice, _, _ := s.MintToken(ctx, NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})
	for i := range MaxShown + 1 {
		// One tree each: a tree may have only MaxOpenConfirmations open.
		bot, _, err := s.MintToken(ctx, NewToken{Name: "bot-" + string(rune('a'+i/26)) + string(rune('a'+i%26)), Kind: Agent, Scope: mcpeffect.Full})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RequestConfirmation(ctx, bot.Actor(), newConfirmation(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	pending, more, err := s.PendingConfirmations(ctx, alice.Actor())
	if err != nil || len(pending) != MaxShown || !more {
		t.Errorf("PendingConfirmations: %d, more %v, %v; want %d and more", len(pending), more, err, MaxShown)
	}
}

// TestConfirmationDeadlineAtUse: an answer is good until the
// confirmation's deadline, and for nothing after, whatever it is.
func TestConfirmationDeadlineAtUse(t *testing.T) {
	ctx := t.Context()
	s, c := openClocked(t)
	alice, _, _ := s.MintToken(ctx, NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})
	conf, err := s.RequestConfirmation(ctx, alice.Actor(), newConfirmation(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AnswerConfirmation(ctx, alice.Actor(), conf.ID, true); err != nil {
		t.Fatal(err)
	}
	c.add(7 * 24 * time.Hour)
	if _, err := s.UseConfirmation(ctx, alice.Actor(), conf.ID, []byte("binding")); !errors.Is(err, ErrConfirmationExpired) {
		t.Errorf("an answer used a week past its deadline: %v, want ErrConfirmationExpired", err)
	}
	// At the deadline itself, it is over too.
	conf, _ = s.RequestConfirmation(ctx, alice.Actor(), newConfirmation(`{}`))
	s.AnswerConfirmation(ctx, alice.Actor(), conf.ID, true)
	c.add(10 * time.Minute)
	if _, err := s.UseConfirmation(ctx, alice.Actor(), conf.ID, []byte("binding")); !errors.Is(err, ErrConfirmationExpired) {
		t.Errorf("an answer used at its deadline: %v, want ErrConfirmationExpired", err)
	}
}

// TestConfirmationAnswerNeedsScope: the person who answers a
// confirmation holds a scope that permits the call, as every other
// change on the page needs; a decline too.
func TestConfirmationAnswerNeedsScope(t *testing.T) {
	ctx := t.Context()
	s, _ := openClocked(t)
	// An agent of the command line: any person may answer for it.
	bot, _, _ := s.MintToken(ctx, NewToken{Name: "bot", Kind: Agent, Scope: mcpeffect.Full})
	reader, _, _ := s.MintToken(ctx, NewToken{Name: "reader", Kind: Human, Scope: mcpeffect.ReadOnly})
	adder, _, _ := s.MintToken(ctx, NewToken{Name: "adder", Kind: Human, Scope: mcpeffect.NonDestructive})
	full, _, _ := s.MintToken(ctx, NewToken{Name: "full", Kind: Human, Scope: mcpeffect.Full})

	del, err := s.RequestConfirmation(ctx, bot.Actor(), newConfirmation(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	add := newConfirmation(`{"title":"t"}`)
	add.Tool, add.Effect = "create_task", mcpeffect.Write
	created, err := s.RequestConfirmation(ctx, bot.Actor(), add)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who    Token
		conf   Confirmation
		accept bool
		ok     bool
	}{
		{reader, del, true, false},
		{reader, del, false, false},
		{adder, del, true, false},
		{reader, created, true, false},
		{adder, created, true, true},
		{full, del, true, true},
	} {
		_, err := s.AnswerConfirmation(ctx, c.who.Actor(), c.conf.ID, c.accept)
		if (err == nil) != c.ok {
			t.Errorf("%s (%s) answers %s (%s), accept %v: %v", c.who.Name, c.who.Scope, c.conf.Tool, c.conf.Effect, c.accept, err)
		}
		if err != nil && !strings.Contains(err.Error(), "needs a") {
			t.Errorf("the refusal does not say what is needed: %v", err)
		}
	}
}

// TestAwaitConfirmation: a call waiting for its confirmation returns when
// it is answered (on this Store or another on the same data), when it is
// withdrawn, when it expires, and when the call gives up.
func TestAwaitConfirmation(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	c := &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s, _, err := openAt(t, dir, &Options{Now: c.Now, AuthCache: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, _, err := openAt(t, dir, &Options{Now: c.Now, AuthCache: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	alice, _, _ := s.MintToken(ctx, NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})

	await := func(id string, cctx context.Context) chan ConfirmationState {
		got := make(chan ConfirmationState, 1)
		go func() {
			st, err := s.AwaitConfirmation(cctx, id)
			if err != nil && cctx.Err() == nil {
				t.Errorf("AwaitConfirmation: %v", err)
			}
			got <- st
		}()
		return got
	}
	for _, answerer := range []*Store{s, other} {
		conf, err := s.RequestConfirmation(ctx, alice.Actor(), newConfirmation(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		got := await(conf.ID, ctx)
		if _, err := answerer.AnswerConfirmation(ctx, alice.Actor(), conf.ID, true); err != nil {
			t.Fatal(err)
		}
		if st := <-got; st.Answer != Accepted || st.AnsweredBy != "alice" {
			t.Errorf("answered: %+v", st)
		}
	}

	conf, _ := s.RequestConfirmation(ctx, alice.Actor(), newConfirmation(`{}`))
	got := await(conf.ID, ctx)
	if err := s.WithdrawConfirmation(ctx, alice.Actor(), conf.ID); err != nil {
		t.Fatal(err)
	}
	if st := <-got; st.UsedAt == "" || st.Answer != "" {
		t.Errorf("withdrawn: %+v", st)
	}

	conf, _ = s.RequestConfirmation(ctx, alice.Actor(), newConfirmation(`{}`))
	got = await(conf.ID, ctx)
	c.add(10 * time.Minute)
	if st := <-got; !st.Expired(c.Now()) || st.Answer != "" {
		t.Errorf("expired: %+v", st)
	}

	conf, _ = s.RequestConfirmation(ctx, alice.Actor(), newConfirmation(`{}`))
	cctx, cancel := context.WithCancel(ctx)
	got = await(conf.ID, cctx)
	cancel()
	if st := <-got; st.Answer != "" {
		t.Errorf("given up: %+v", st)
	}
	if len(s.confirmWaits.m) != 0 {
		t.Errorf("the waits are still watched: %v", s.confirmWaits.m)
	}
}
