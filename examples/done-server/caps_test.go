package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMintCaps fills each thing a caller can mint that grants access up
// to its cap, by several routes: the call past the cap is refused with a
// message that names the limit and says what to do, and changes nothing;
// what is expired or revoked does not count, and revoking one makes room
// for one more.
func TestMintCaps(t *testing.T) {
	e := newEnv(t)
	aliceSecret := e.mint("alice", store.Human, mcpeffect.Full)
	alice := e.connect(aliceSecret)
	bob := e.connect(e.mint("bob", store.Human, mcpeffect.Full))

	// Alice's tree: her token, one that expires, an agent's token from
	// which the agent mints for itself, and tokens for agents of many
	// names, until the tree holds MaxLiveTokens live ones.
	must[createTokenResult](t, alice, "create_token", args{"name": "alice", "kind": "human", "scope": "read-only", "expires_in_days": 1})
	e.clock.Advance(48 * 3600e9)
	bot := must[createTokenResult](t, alice, "create_token", args{"name": "builder", "kind": "agent", "scope": "full"})
	builder := e.connect(bot.Secret)
	var botTokens []string
	for range 5 {
		botTokens = append(botTokens, must[createTokenResult](t, builder, "create_token", args{"name": "builder", "kind": "agent", "scope": "read-only"}).Token.ID)
	}
	for i := 0; i < store.MaxLiveTokens-1-1-5; i++ {
		must[createTokenResult](t, alice, "create_token", args{"name": fmt.Sprintf("bot-%d", i), "kind": "agent", "scope": "read-only"})
	}
	// Alice's calendar links, one of them rotated.
	var links []string
	for range store.MaxLiveCalendarLinks {
		links = append(links, must[calendarLinkResult](t, alice, "create_calendar_link", nil).Link.ID)
	}
	links[0] = must[calendarLinkResult](t, alice, "rotate_calendar_link", args{"link_id": links[0]}).Link.ID

	refused := []struct {
		name string
		cs   *mcp.ClientSession
		tool string
		args args
		want []string
	}{
		{"a token, by the tree's root", alice, "create_token", args{"name": "one-more", "kind": "agent", "scope": "read-only"},
			[]string{fmt.Sprintf("already make %d live tokens", store.MaxLiveTokens), "revoke_token"}},
		{"a token, by an agent of the tree, for itself", builder, "create_token", args{"name": "builder", "kind": "agent", "scope": "read-only"},
			[]string{fmt.Sprintf("already make %d live tokens", store.MaxLiveTokens), "list_tokens"}},
		{"a calendar link", alice, "create_calendar_link", nil,
			[]string{fmt.Sprintf("already have %d live calendar links", store.MaxLiveCalendarLinks), "revoke_calendar_link"}},
	}
	for _, c := range refused {
		t.Run("at the cap/"+c.name, func(t *testing.T) {
			before := e.dump()
			_, err := call[any](t, c.cs, c.tool, c.args)
			if err == nil {
				t.Fatal("allowed past the cap")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal %q does not say %q", err, w)
				}
			}
			if e.dump() != before {
				t.Error("the refused call changed the database")
			}
		})
	}
	t.Run("another tree", func(t *testing.T) {
		must[createTokenResult](t, bob, "create_token", args{"name": "bob", "kind": "human", "scope": "read-only"})
		must[calendarLinkResult](t, bob, "create_calendar_link", nil)
	})
	t.Run("rotating at the cap", func(t *testing.T) {
		links[1] = must[calendarLinkResult](t, alice, "rotate_calendar_link", args{"link_id": links[1]}).Link.ID
	})

	// Revoking one makes room for exactly one more.
	must[store.Token](t, alice, "revoke_token", args{"token_id": botTokens[0]})
	must[store.CalendarLink](t, alice, "revoke_calendar_link", args{"link_id": links[2]})
	must[createTokenResult](t, builder, "create_token", args{"name": "builder", "kind": "agent", "scope": "read-only"})
	must[calendarLinkResult](t, alice, "create_calendar_link", nil)
	for _, c := range refused {
		t.Run("full again/"+c.name, func(t *testing.T) {
			if _, err := call[any](t, c.cs, c.tool, c.args); err == nil || !strings.Contains(err.Error(), c.want[0]) {
				t.Errorf("err = %v, want %q", err, c.want[0])
			}
		})
	}
	// Revoking the agent's token revokes the live ones it minted (four
	// of the first five, and the one after): room for six.
	must[store.Token](t, alice, "revoke_token", args{"token_id": bot.Token.ID})
	for i := range 6 {
		must[createTokenResult](t, alice, "create_token", args{"name": fmt.Sprintf("after-%d", i), "kind": "agent", "scope": "read-only"})
	}
	if _, err := call[any](t, alice, "create_token", refused[0].args); err == nil {
		t.Error("a seventh token after revoking the agent's six was allowed")
	}
}
