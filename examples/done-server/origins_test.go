package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMintedTokenExpiresWithParent shows that a token minted by an
// expiring token expires at the latest when its parent does, whatever it
// asks for, and stops working then.
func TestMintedTokenExpiresWithParent(t *testing.T) {
	e := newEnv(t)
	_, parent, err := e.store.MintToken(t.Context(), store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full, TTL: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	alice := e.connect(parent)
	parentExpiry := must[whoamiResult](t, alice, "whoami", nil).ExpiresAt
	if parentExpiry != "2025-07-02T09:00:00.000Z" {
		t.Fatalf("the parent expires at %q", parentExpiry)
	}
	var children []string
	for _, c := range []struct {
		name string
		days int // expires_in_days; 0 to leave it out
		want string
	}{
		{"no expiry asked", 0, parentExpiry},
		{"a longer one asked", 3650, parentExpiry},
		{"a shorter one asked", 1, "2025-06-03T09:00:00.000Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := args{"name": "bot", "kind": "agent", "scope": "full"}
			if c.days > 0 {
				a["expires_in_days"] = c.days
			}
			res := must[createTokenResult](t, alice, "create_token", a)
			if res.Token.ExpiresAt != c.want || res.Token.CreatedByToken == "" {
				t.Errorf("minted token: expires at %q (minted by %q), want %q", res.Token.ExpiresAt, res.Token.CreatedByToken, c.want)
			}
			children = append(children, res.Secret)
		})
	}
	// The agent's own token, minted by the child, is bounded the same.
	bot := e.connect(children[0])
	grandchild := must[createTokenResult](t, bot, "create_token", args{"name": "bot", "kind": "agent", "scope": "read-only"})
	if grandchild.Token.ExpiresAt != parentExpiry {
		t.Errorf("a grandchild expires at %q, want %q", grandchild.Token.ExpiresAt, parentExpiry)
	}
	e.clock.Advance(30*24*time.Hour + time.Minute)
	for _, secret := range append(children, grandchild.Secret) {
		if _, err := e.store.Authenticate(t.Context(), secret); err != store.ErrBadToken {
			t.Errorf("a token minted by an expired token authenticates: %v", err)
		}
	}
}

// origins is a chain of tokens, each minted by the one before, and a
// calendar feed made by each, served over HTTP.
type origins struct {
	secrets []string // alice's (from the command line), bot's, bot's own, bot's own again
	ids     []string
	feeds   []string // the URL of the feed each made
}

// newOrigins makes alice's token on the command line, which mints a token
// for the agent bot, which mints one for itself (the grandchild), which
// mints another (the great-grandchild); each makes a feed of a project.
func newOrigins(t *testing.T, e *env) origins {
	t.Helper()
	var o origins
	o.secrets = append(o.secrets, e.mint("alice", store.Human, mcpeffect.Full))
	cs := e.connect(o.secrets[0])
	project := must[store.Project](t, cs, "create_project", args{"name": "Launch"})
	must[store.Task](t, cs, "create_task", args{"title": "Ship", "project_id": project.ID, "due": "2025-06-30"})
	for i := range 4 {
		me := must[whoamiResult](t, cs, "whoami", nil)
		o.ids = append(o.ids, me.TokenID)
		o.feeds = append(o.feeds, must[calendarLinkResult](t, cs, "create_calendar_link", args{"project_id": project.ID}).URL)
		if i == 3 {
			break
		}
		child := must[createTokenResult](t, cs, "create_token", args{"name": "bot", "kind": "agent", "scope": "full"})
		o.secrets = append(o.secrets, child.Secret)
		cs = e.connect(child.Secret)
	}
	for i, url := range o.feeds {
		if status, _, _ := fetch(t, http.MethodGet, url); status != http.StatusOK {
			t.Fatalf("the feed of token %d: status %d", i, status)
		}
	}
	return o
}

// TestRevokeEndsWhatATokenMinted revokes a token in a chain of tokens,
// each minted by the one before: the tokens it minted, at any depth, stop
// working over HTTP, and the feeds they made answer 404; the tokens above
// it, and their feeds, go on. The command line's revoke does the same.
func TestRevokeEndsWhatATokenMinted(t *testing.T) {
	for _, c := range []struct {
		name   string
		revoke func(t *testing.T, e *env, o origins) // revokes o.ids[at]
		at     int
	}{
		{"alice revokes bot's token", func(t *testing.T, e *env, o origins) {
			must[store.Token](t, e.connect(o.secrets[0]), "revoke_token", args{"token_id": o.ids[1]})
		}, 1},
		{"bot revokes its own child", func(t *testing.T, e *env, o origins) {
			must[store.Token](t, e.connect(o.secrets[1]), "revoke_token", args{"token_id": o.ids[2]})
		}, 2},
		{"the command line revokes alice's token", func(t *testing.T, e *env, o origins) {
			if _, err := e.store.RevokeAnyToken(t.Context(), o.ids[0]); err != nil {
				t.Fatal(err)
			}
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			base := e.serveHTTP()
			o := newOrigins(t, e)
			c.revoke(t, e, o)
			for i := range o.ids {
				wantLive := i < c.at
				resp := post(t, base+mcpPath, o.secrets[i], "", initialize)
				if live := resp.StatusCode == http.StatusOK; live != wantLive {
					t.Errorf("token %d over HTTP: status %d, want it live %t", i, resp.StatusCode, wantLive)
				}
				status, _, _ := fetch(t, http.MethodGet, o.feeds[i])
				if live := status == http.StatusOK; live != wantLive {
					t.Errorf("the feed of token %d: status %d, want it live %t", i, status, wantLive)
				}
				if !wantLive && status != http.StatusNotFound {
					t.Errorf("the feed of revoked token %d: status %d, want 404", i, status)
				}
			}
			// What was revoked shows so to whoever oversees it.
			if c.at > 0 {
				alice := e.connect(o.secrets[0])
				tokens := must[tokensResult](t, alice, "list_tokens", nil).Tokens
				for _, k := range tokens {
					for i, id := range o.ids {
						if k.ID == id && (k.RevokedAt != "") != (i >= c.at) {
							t.Errorf("list_tokens: token %d revoked at %q", i, k.RevokedAt)
						}
					}
				}
				links := must[linksResult](t, alice, "list_calendar_links", nil).Links
				if len(links) != len(o.ids) {
					t.Fatalf("alice oversees %d links, want the %d of the chain", len(links), len(o.ids))
				}
				for i, l := range links {
					if l.Live != (i < c.at) || (l.RevokedAt != "") != (i >= c.at) {
						t.Errorf("list_calendar_links: link %d live %t, revoked at %q", i, l.Live, l.RevokedAt)
					}
				}
			}
		})
	}
}

// TestPersonOverseesAgentGrants shows that whatever an agent's token made
// that grants access, a person can list and revoke: the feeds it made and
// the tokens it minted, even when no person minted the agent's token. An
// agent sees and revokes only its own; a person does not see another
// person's.
func TestPersonOverseesAgentGrants(t *testing.T) {
	e := newEnv(t)
	e.serveHTTP()
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	bob := e.connect(e.mint("bob", store.Human, mcpeffect.Full))
	bot := e.connect(e.mint("bot", store.Agent, mcpeffect.Full)) // minted on the command line
	other := e.connect(e.mint("other-bot", store.Agent, mcpeffect.Full))
	feed := must[calendarLinkResult](t, bot, "create_calendar_link", nil)
	minted := must[createTokenResult](t, bot, "create_token", args{"name": "bot", "kind": "agent", "scope": "read-only"})
	alicesFeed := must[calendarLinkResult](t, alice, "create_calendar_link", nil)

	has := func(links []store.CalendarLink, id string) bool {
		for _, l := range links {
			if l.ID == id {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		name      string
		cs        *mcp.ClientSession
		see, hide []string
	}{
		{"alice", alice, []string{feed.Link.ID, alicesFeed.Link.ID}, nil},
		{"bob", bob, []string{feed.Link.ID}, []string{alicesFeed.Link.ID}},
		{"the agent", bot, []string{feed.Link.ID}, []string{alicesFeed.Link.ID}},
		{"another agent", other, nil, []string{feed.Link.ID, alicesFeed.Link.ID}},
	} {
		links := must[linksResult](t, c.cs, "list_calendar_links", nil).Links
		for _, id := range c.see {
			if !has(links, id) {
				t.Errorf("%s does not see link %s: %+v", c.name, id, links)
			}
		}
		for _, id := range c.hide {
			if has(links, id) {
				t.Errorf("%s sees link %s", c.name, id)
			}
		}
	}
	mustFail(t, other, "revoke_calendar_link", args{"link_id": feed.Link.ID}, "does not exist")
	mustFail(t, bot, "revoke_calendar_link", args{"link_id": alicesFeed.Link.ID}, "does not exist")
	mustFail(t, bob, "revoke_calendar_link", args{"link_id": alicesFeed.Link.ID}, "does not exist")
	mustFail(t, bot, "revoke_token", args{"token_id": must[whoamiResult](t, alice, "whoami", nil).TokenID}, "does not exist")
	// A person may stop what agents made, but not rotate it: rotating
	// would hand them the agent's feed.
	mustFail(t, alice, "rotate_calendar_link", args{"link_id": feed.Link.ID}, "does not exist")

	if l := must[store.CalendarLink](t, alice, "revoke_calendar_link", args{"link_id": feed.Link.ID}); l.RevokedAt == "" || l.Live {
		t.Errorf("revoke_calendar_link of an agent's feed by a person: %+v", l)
	}
	if status, _, _ := fetch(t, http.MethodGet, feed.URL); status != http.StatusNotFound {
		t.Errorf("the agent's feed after a person revoked it: status %d, want 404", status)
	}
	if k := must[store.Token](t, alice, "revoke_token", args{"token_id": minted.Token.ID}); k.RevokedAt == "" {
		t.Errorf("revoke_token of an agent's minted token by a person: %+v", k)
	}
	if _, err := e.store.Authenticate(t.Context(), minted.Secret); err != store.ErrBadToken {
		t.Errorf("the agent's minted token after a person revoked it: %v", err)
	}
	if status, _, _ := fetch(t, http.MethodGet, alicesFeed.URL); status != http.StatusOK {
		t.Errorf("alice's own feed: status %d", status)
	}
}

// TestFeedEndsWithItsToken shows that a feed stops answering when the
// token that made it expires, though nobody revoked the link, and says so
// in list_calendar_links.
func TestFeedEndsWithItsToken(t *testing.T) {
	e := newEnv(t)
	e.serveHTTP()
	_, brief, err := e.store.MintToken(t.Context(), store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full, TTL: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	feed := must[calendarLinkResult](t, e.connect(brief), "create_calendar_link", nil)
	if status, _, _ := fetch(t, http.MethodGet, feed.URL); status != http.StatusOK {
		t.Fatalf("the feed: status %d", status)
	}
	e.clock.Advance(25 * time.Hour)
	if status, _, body := fetch(t, http.MethodGet, feed.URL); status != http.StatusNotFound || strings.Contains(body, "VCALENDAR") {
		t.Errorf("the feed of an expired token: status %d, want 404", status)
	}
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	links := must[linksResult](t, alice, "list_calendar_links", nil).Links
	if len(links) != 1 || links[0].Live || links[0].RevokedAt != "" {
		t.Errorf("list_calendar_links: %+v, want the link not revoked and not live", links)
	}
}
