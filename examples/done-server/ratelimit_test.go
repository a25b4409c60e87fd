package main

import (
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWriteRateLimit makes a burst of writes and one more on one token,
// through the protocol, with a rate so slow that none comes back during
// the test: the one past the burst is refused with a tool error that
// says to try later, and changes nothing, as is a write of a token that
// alice minted, whose tree is hers; reads go on, as do the writes of
// another tree.
func TestWriteRateLimit(t *testing.T) {
	e := newEnv(t)
	const burst = 5
	d := newDone(e.store, e.logger, config{writeRate: 0.001, writeBurst: burst})
	server, _ := d.newServer()
	alice := connectServer(t, e, server, e.mint("alice", store.Human, mcpeffect.Full), nil, "")
	bob := connectServer(t, e, server, e.mint("bob", store.Human, mcpeffect.Full), nil, "")

	project := must[store.Project](t, alice, "create_project", args{"name": "Limits"})
	// A token alice mints shares her tree's rate: minting more tokens
	// does not buy more writes.
	minted := must[createTokenResult](t, alice, "create_token", args{"name": "scribe", "kind": "agent", "scope": "full"})
	scribe := connectServer(t, e, server, minted.Secret, nil, "")
	for i := range burst - 2 {
		must[store.Task](t, alice, "create_task", args{"project_id": project.ID, "title": "task " + string(rune('a'+i))})
	}
	for _, c := range []struct {
		name string
		cs   *mcp.ClientSession
		tool string
		args args
		want string // in the refusal; "" for a call that goes through
	}{
		{"past the burst", alice, "create_task", args{"project_id": project.ID, "title": "one too many"}, "try again in"},
		{"a destructive write past the burst", alice, "delete_project", args{"project_id": project.ID}, "writes faster than Done allows"},
		{"a write of a token alice minted", scribe, "create_task", args{"project_id": project.ID, "title": "the scribe's"}, "with those minted from the same command-line token"},
		{"a read", alice, "list_tasks", args{"project_id": project.ID}, ""},
		{"many reads", alice, "whoami", nil, ""},
		{"another tree's write", bob, "create_task", args{"project_id": project.ID, "title": "bob's"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 1
			if c.name == "many reads" {
				n = 3 * burst
			}
			for range n {
				before := e.dump()
				_, err := call[any](t, c.cs, c.tool, c.args)
				switch {
				case c.want == "" && err != nil:
					t.Fatalf("refused: %v", err)
				case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
					t.Fatalf("err = %v, want a refusal saying %q", err, c.want)
				case c.want != "" && e.dump() != before:
					t.Error("the refused write changed the database")
				}
			}
		})
	}
}
