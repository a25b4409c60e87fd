package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCreateToken shows who may mint which tokens, and that a minted
// token works with the scope it was given.
func TestCreateToken(t *testing.T) {
	e := newEnv(t)
	human := e.connect(e.mint("alice", store.Human, mcpeffect.NonDestructive))
	agent := e.connect(e.mint("builder", store.Agent, mcpeffect.Full))
	e.mint("mallory", store.Human, mcpeffect.ReadOnly)

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

	// list_tokens shows a person their tokens and every agent's; an agent
	// only its own; never a secret.
	for _, c := range []struct {
		cs        *mcp.ClientSession
		want, not []string
	}{
		{human, []string{`"alice"`, `"reader-bot"`, `"builder"`}, []string{`"mallory"`}},
		{agent, []string{`"builder"`}, []string{`"alice"`, `"reader-bot"`}},
	} {
		res, err := c.cs.CallTool(t.Context(), callParams("list_tokens", nil))
		if err != nil {
			t.Fatal(err)
		}
		listed := text(res)
		for _, name := range c.want {
			if !strings.Contains(listed, name) {
				t.Errorf("list_tokens lacks %s: %s", name, listed)
			}
		}
		for _, name := range c.not {
			if strings.Contains(listed, name) {
				t.Errorf("list_tokens shows %s: %s", name, listed)
			}
		}
		if strings.Contains(listed, "secret") || strings.Contains(listed, store.SecretPrefix) {
			t.Errorf("list_tokens shows secrets: %s", listed)
		}
	}
}

// connectCapped returns a client session over in-memory transports
// connected as done-server serve connects stdio: with the credential cred
// (DONE_TOKEN's secret, or the data directory's owner) and the connection
// capped at the least of its token's scope and flag (serve -scope).
func (e *env) connectCapped(cred stdioCredential, flag mcpeffect.Scope) *mcp.ClientSession {
	e.t.Helper()
	ctx := e.t.Context()
	var k store.Token
	var err error
	if cred.owner {
		k, err = e.store.AuthenticateOwner(ctx)
	} else {
		k, err = e.store.Authenticate(ctx, cred.secret)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := e.server.Connect(mcpeffect.WithConnectionScope(withStdioCredential(ctx, cred), min(k.Scope, flag)), st, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { ss.Close() })
	return e.clientConnect(ct)
}

// TestCreateTokenWithinCap shows that a connection capped below its
// token, as serve -scope caps stdio, cannot mint a token wider than the
// cap, as the owner or with DONE_TOKEN: the cap bounds what it grants, not
// only what it calls.
func TestCreateTokenWithinCap(t *testing.T) {
	e := newEnv(t)
	if _, _, err := e.store.Owner(t.Context(), "olive"); err != nil {
		t.Fatal(err)
	}
	full := e.mint("alice", store.Human, mcpeffect.Full)
	nd := e.mint("alice", store.Human, mcpeffect.NonDestructive)
	owner := stdioCredential{owner: true}
	for _, c := range []struct {
		name  string
		cred  stdioCredential
		cap   mcpeffect.Scope
		scope mcpeffect.Scope // asked for
		want  string          // in the error; "" for success, "refused" for the scope check
	}{
		{"owner capped non-destructive mints full", owner, mcpeffect.NonDestructive, mcpeffect.Full, "wider than what this connection may do (non-destructive; your token's is full)"},
		{"owner capped non-destructive mints non-destructive", owner, mcpeffect.NonDestructive, mcpeffect.NonDestructive, ""},
		{"owner capped read-only mints read-only", owner, mcpeffect.ReadOnly, mcpeffect.ReadOnly, "refused"},
		{"owner uncapped mints full", owner, mcpeffect.Full, mcpeffect.Full, ""},
		{"DONE_TOKEN full capped non-destructive mints full", stdioCredential{secret: full}, mcpeffect.NonDestructive, mcpeffect.Full, "wider than what this connection may do"},
		{"DONE_TOKEN full capped non-destructive mints read-only", stdioCredential{secret: full}, mcpeffect.NonDestructive, mcpeffect.ReadOnly, ""},
		{"DONE_TOKEN full capped read-only mints read-only", stdioCredential{secret: full}, mcpeffect.ReadOnly, mcpeffect.ReadOnly, "refused"},
		{"DONE_TOKEN non-destructive uncapped mints full", stdioCredential{secret: nd}, mcpeffect.Full, mcpeffect.Full, "wider than your token's (non-destructive)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := e.connectCapped(c.cred, c.cap)
			me := must[whoamiResult](t, cs, "whoami", nil)
			if want := min(c.cap, me.TokenScope); me.Scope != want {
				t.Errorf("whoami: scope %s, want %s (token %s, cap %s)", me.Scope, want, me.TokenScope, c.cap)
			}
			before := e.dump()
			res, err := call[createTokenResult](t, cs, "create_token", args{"name": "helper-bot", "kind": "agent", "scope": c.scope.String()})
			switch {
			case c.want == "refused":
				if d, ok := mcpeffect.AsDeniedError(err); !ok || d.Granted != c.cap {
					t.Errorf("err = %v, want a refusal by the scope check", err)
				}
			case c.want != "":
				if !errors.Is(err, errToolFailed) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("err = %v, want a tool error saying %q", err, c.want)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if got := must[whoamiResult](t, e.connect(res.Secret), "whoami", nil); got.Scope != c.scope {
					t.Errorf("the minted token has scope %s, want %s", got.Scope, c.scope)
				}
				return
			}
			if after := e.dump(); after != before {
				t.Errorf("a refused create_token changed the database:\n%s", lineDiff(before, after))
			}
		})
	}
}
