package main

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// TestCreateToken shows who may mint which tokens, and that a minted
// token works with the scope it was given.
func TestCreateToken(t *testing.T) {
	e := newEnv(t)
	human := e.connect(e.mint("alice", store.Human, mcpeffect.NonDestructive))
	agent := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))

	for _, c := range []struct {
		name   string
		caller string
		args   args
		want   string // in the error; "" for success
	}{
		{"human mints for an agent", "alice", args{"name": "reader-bot", "kind": "agent", "scope": "read-only"}, ""},
		{"human mints for themself", "alice", args{"name": "alice", "kind": "human", "scope": "non-destructive", "expires_in_days": 30}, ""},
		{"wider than the caller", "alice", args{"name": "reader-bot", "kind": "agent", "scope": "full"}, "wider than your token's"},
		{"human mints for another human", "alice", args{"name": "mallory", "kind": "human", "scope": "read-only"}, "not for human"},
		{"agent mints a human token", "builder", args{"name": "builder", "kind": "human", "scope": "read-only"}, "not for human"},
		{"agent mints for another agent", "builder", args{"name": "other-bot", "kind": "agent", "scope": "read-only"}, "not for agent"},
		{"agent mints for itself", "builder", args{"name": "builder", "kind": "agent", "scope": "full"}, ""},
		{"a name is one kind", "alice", args{"name": "alice", "kind": "agent", "scope": "read-only"}, "belongs to a human"},
		{"bad scope", "alice", args{"name": "x", "kind": "agent", "scope": "admin"}, "validating"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := human
			if c.caller == "builder" {
				cs = agent
			}
			before := e.dump()
			res, err := call[createTokenResult](t, cs, "create_token", c.args)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v, want one saying %q", err, c.want)
				}
				if e.dump() != before {
					t.Error("a refused create_token changed the database")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Secret, store.SecretPrefix) || len(res.Secret) < len(store.SecretPrefix)+43 {
				t.Errorf("secret %q: want %s and at least 32 bytes in base64", res.Secret, store.SecretPrefix)
			}
			// Only the hash of the secret is stored.
			dump := e.dump()
			if strings.Contains(dump, res.Secret) || !strings.Contains(dump, fmt.Sprintf("%x", sha256.Sum256([]byte(res.Secret)))) {
				t.Error("the database holds the secret, or not its SHA-256")
			}
			me := must[whoamiResult](t, e.connect(res.Secret), "whoami", nil)
			if me.Name != c.args["name"] || string(me.Kind) != c.args["kind"] || me.Scope.String() != c.args["scope"] {
				t.Errorf("whoami with the new token: %+v", me)
			}
		})
	}

	// list_tokens shows alice's tokens and the one she minted, no secrets.
	res, err := human.CallTool(t.Context(), callParams("list_tokens", nil))
	if err != nil {
		t.Fatal(err)
	}
	listed := text(res)
	for _, name := range []string{`"alice"`, `"reader-bot"`} {
		if !strings.Contains(listed, name) {
			t.Errorf("list_tokens lacks %s: %s", name, listed)
		}
	}
	if strings.Contains(listed, "builder") || strings.Contains(listed, "secret") || strings.Contains(listed, store.SecretPrefix) {
		t.Errorf("list_tokens shows others' tokens or secrets: %s", listed)
	}
}
