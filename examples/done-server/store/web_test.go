package store

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
)

// clock is a time that a test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func openClocked(t *testing.T) (*Store, *clock) {
	t.Helper()
	c := &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s, _, err := openAt(t, t.TempDir(), &Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

// TestSignInLinks shows a sign-in link good once and until it expires,
// for a person's token only, and a session that ends with its sign-out,
// its expiry and its token.
func TestSignInLinks(t *testing.T) {
	ctx := t.Context()
	s, c := openClocked(t)
	alice, _, err := s.MintToken(ctx, NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	agent, secret, err := s.MintToken(ctx, NewToken{Name: "bot", Kind: Agent, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateSignInLink(ctx, agent.ID, time.Minute); err == nil {
		t.Error("a sign-in link was made for an agent's token")
	}
	if _, _, err := s.SignIn(ctx, secret, time.Hour); !errors.Is(err, ErrBadLink) {
		t.Errorf("an agent's token as a link: %v, want ErrBadLink", err)
	}
	if k, err := s.PersonToken(ctx, "alice"); err != nil || k.ID != alice.ID {
		t.Errorf("PersonToken(alice) = %v, %v", k.ID, err)
	}
	if _, err := s.PersonToken(ctx, "bot"); err == nil {
		t.Error("PersonToken found an agent")
	}

	link, _, err := s.CreateSignInLink(ctx, alice.ID, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ws, cookie, err := s.SignIn(ctx, link, time.Hour)
	if err != nil || ws.Token.ID != alice.ID {
		t.Fatalf("SignIn: %+v, %v", ws, err)
	}
	if _, _, err := s.SignIn(ctx, link, time.Hour); !errors.Is(err, ErrBadLink) {
		t.Errorf("a link replayed: %v, want ErrBadLink", err)
	}
	if got, err := s.WebSession(ctx, cookie); err != nil || got.ID != ws.ID || got.Token.Name != "alice" {
		t.Errorf("WebSession: %+v, %v", got, err)
	}
	if _, err := s.Authenticate(ctx, cookie); !errors.Is(err, ErrBadToken) {
		t.Errorf("a session's secret as a token: %v", err)
	}

	late, _, err := s.CreateSignInLink(ctx, alice.ID, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c.add(10 * time.Minute)
	if _, _, err := s.SignIn(ctx, late, time.Hour); !errors.Is(err, ErrBadLink) {
		t.Errorf("an expired link: %v, want ErrBadLink", err)
	}
	c.add(50 * time.Minute)
	if _, err := s.WebSession(ctx, cookie); !errors.Is(err, ErrBadSession) {
		t.Errorf("an expired session: %v, want ErrBadSession", err)
	}

	link, _, _ = s.CreateSignInLink(ctx, alice.ID, time.Minute)
	ws, cookie, err = s.SignIn(ctx, link, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SignOut(ctx, alice.Actor(), ws.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSession(ctx, cookie); !errors.Is(err, ErrBadSession) {
		t.Errorf("a session signed out: %v, want ErrBadSession", err)
	}

	link, _, _ = s.CreateSignInLink(ctx, alice.ID, time.Minute)
	_, cookie, err = s.SignIn(ctx, link, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeAnyToken(ctx, alice.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSession(ctx, cookie); !errors.Is(err, ErrBadSession) {
		t.Errorf("a session of a revoked token: %v, want ErrBadSession", err)
	}
}

// TestConfirmations shows a confirmation answered once, by its person
// only, before its deadline, and used once by its own call.
func TestConfirmations(t *testing.T) {
	ctx := t.Context()
	s, c := openClocked(t)
	alice, _, _ := s.MintToken(ctx, NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})
	bob, _, _ := s.MintToken(ctx, NewToken{Name: "bob", Kind: Human, Scope: mcpeffect.Full})
	bot, _, err := s.CreateToken(ctx, alice.Actor(), mcpeffect.Full, NewToken{Name: "bot", Kind: Agent, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	n := NewConfirmation{Tool: "delete_task", Effect: mcpeffect.Write | mcpeffect.Destructive, Binding: []byte("binding"), Question: "Delete?", Arguments: []byte(`{}`), TTL: time.Minute}
	conf, err := s.RequestConfirmation(ctx, bot.Actor(), n)
	if err != nil {
		t.Fatal(err)
	}
	if conf.Person != "alice" || conf.Caller != "bot" {
		t.Errorf("confirmation for %q by %q, want alice's, by bot", conf.Person, conf.Caller)
	}
	if p, _, _ := s.PendingConfirmations(ctx, bob.Actor()); len(p) != 0 {
		t.Errorf("bob sees %d confirmations of alice's agent", len(p))
	}
	if p, _, _ := s.PendingConfirmations(ctx, alice.Actor()); len(p) != 1 {
		t.Errorf("alice sees %d confirmations, want 1", len(p))
	}
	if _, err := s.AnswerConfirmation(ctx, bob.Actor(), conf.ID, true); err == nil {
		t.Error("bob answered for alice")
	}
	if _, err := s.AnswerConfirmation(ctx, bot.Actor(), conf.ID, true); err == nil {
		t.Error("the agent answered its own call")
	}
	if _, err := s.UseConfirmation(ctx, bot.Actor(), conf.ID, n.Binding); err == nil {
		t.Error("an unanswered confirmation was used")
	}
	if got, err := s.AnswerConfirmation(ctx, alice.Actor(), conf.ID, false); err != nil || got.Answer != Declined {
		t.Fatalf("alice declines: %+v, %v", got, err)
	}
	if _, err := s.AnswerConfirmation(ctx, alice.Actor(), conf.ID, true); err == nil {
		t.Error("a confirmation was answered twice")
	}
	if _, err := s.UseConfirmation(ctx, bot.Actor(), conf.ID, []byte("other")); err == nil {
		t.Error("a confirmation was used by a call with other arguments")
	}
	if _, err := s.UseConfirmation(ctx, alice.Actor(), conf.ID, n.Binding); err == nil {
		t.Error("a confirmation was used by another caller")
	}
	if got, err := s.UseConfirmation(ctx, bot.Actor(), conf.ID, n.Binding); err != nil || got.Answer != Declined {
		t.Errorf("UseConfirmation: %+v, %v", got, err)
	}
	if _, err := s.UseConfirmation(ctx, bot.Actor(), conf.ID, n.Binding); !errors.Is(err, ErrConfirmationUsed) {
		t.Errorf("a confirmation used twice: %v", err)
	}

	late, err := s.RequestConfirmation(ctx, bot.Actor(), n)
	if err != nil {
		t.Fatal(err)
	}
	c.add(time.Minute)
	if _, err := s.AnswerConfirmation(ctx, alice.Actor(), late.ID, true); err == nil {
		t.Error("an expired confirmation was answered")
	}

	// An agent of the command line has no person above it: any person
	// may answer for it.
	cli, _, _ := s.MintToken(ctx, NewToken{Name: "cli-bot", Kind: Agent, Scope: mcpeffect.Full})
	conf, err = s.RequestConfirmation(ctx, cli.Actor(), n)
	if err != nil || conf.Person != "" {
		t.Fatalf("%+v, %v", conf, err)
	}
	if _, err := s.AnswerConfirmation(ctx, bob.Actor(), conf.ID, true); err != nil {
		t.Errorf("bob answers for an agent of the command line: %v", err)
	}
}

// TestWithdrawConfirmation shows a confirmation that its call gave up on
// gone from the person's list, and unanswerable.
func TestWithdrawConfirmation(t *testing.T) {
	ctx := t.Context()
	s, _ := openClocked(t)
	alice, _, _ := s.MintToken(ctx, NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})
	n := NewConfirmation{Tool: "delete_task", Effect: mcpeffect.Write | mcpeffect.Destructive, Binding: []byte("b"), Question: "Delete?", Arguments: []byte(`{}`), TTL: time.Minute}
	conf, err := s.RequestConfirmation(ctx, alice.Actor(), n)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WithdrawConfirmation(ctx, alice.Actor(), conf.ID); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := s.PendingConfirmations(ctx, alice.Actor()); len(p) != 0 {
		t.Errorf("a withdrawn confirmation is pending: %+v", p)
	}
	if _, err := s.AnswerConfirmation(ctx, alice.Actor(), conf.ID, true); err == nil {
		t.Error("a withdrawn confirmation was answered")
	}
}
