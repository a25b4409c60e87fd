package main

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func getenv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestTokenCreateCommand runs done-server token create: the secret alone
// on stdout, a token with what was asked behind it.
func TestTokenCreateCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"token", "create", "-data", dir, "-scope", "non-destructive", "-kind", "agent", "-name", "builder"},
		getenv(nil), &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, &stderr)
	}
	secret := strings.TrimSuffix(stdout.String(), "\n")
	if strings.ContainsAny(secret, " \n") || !strings.HasPrefix(secret, store.SecretPrefix) {
		t.Fatalf("stdout %q: want the secret alone", stdout.String())
	}
	st, created, err := store.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if created {
		t.Error("the command did not create the database")
	}
	k, err := st.Authenticate(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if k.Name != "builder" || k.Kind != store.Agent || k.Scope != mcpeffect.NonDestructive || k.ExpiresAt != "" {
		t.Errorf("token %+v", k)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no scope", []string{"token", "create", "-data", dir, "-kind", "human"}, "-scope must be"},
		{"bad kind", []string{"token", "create", "-data", dir, "-scope", "full", "-kind", "robot"}, "-kind must be"},
		{"no subcommand", []string{"token"}, "usage"},
		{"revoke without id", []string{"token", "revoke", "-data", dir}, "usage"},
		{"revoke unknown", []string{"token", "revoke", "-data", dir, "01977a2b-3c4d-7e5f-8a9b-0c1d2e3f4a5b"}, "does not exist"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(t.Context(), c.args, getenv(nil), &stdout, new(bytes.Buffer))
			if err == nil || !strings.Contains(err.Error(), c.want) || stdout.Len() > 0 {
				t.Errorf("err = %v, stdout %q; want an error saying %q and nothing on stdout", err, &stdout, c.want)
			}
		})
	}
}

// TestServeFlags checks what serve refuses before it serves anything.
func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown DONE_TOKEN", []string{"serve", "-data", dir}, map[string]string{"DONE_TOKEN": "done_not-a-token"}, "DONE_TOKEN: the token is unknown"},
		{"bad scope", []string{"serve", "-data", dir, "-scope", "admin"}, nil, "-scope must be"},
		{"bad confirm", []string{"serve", "-data", dir, "-confirm", "yes"}, nil, `-confirm must be off, destructive, writes, url or url-writes (got "yes")`},
		{"confirm in capitals", []string{"serve", "-data", dir, "-confirm", "Destructive"}, nil, "-confirm must be"},
		{"scope over HTTP", []string{"serve", "-data", dir, "-http", "127.0.0.1:0", "-scope", "read-only"}, nil, "-scope caps a stdio connection"},
		{"argument", []string{"serve", "-data", dir, "extra"}, nil, "unexpected argument"},
		{"write rate of zero", []string{"serve", "-data", dir, "-write-rate", "0"}, nil, "-write-rate must be a number of writes a second above zero, or off"},
		{"write rate not a number", []string{"serve", "-data", dir, "-write-rate", "fast"}, nil, `-write-rate must be a number of writes a second above zero, or off (got "fast")`},
		{"write rate NaN", []string{"serve", "-data", dir, "-write-rate", "NaN"}, nil, "-write-rate must be"},
		{"write rate infinite", []string{"serve", "-data", dir, "-write-rate", "+Inf"}, nil, "-write-rate must be"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := run(t.Context(), c.args, getenv(c.env), new(bytes.Buffer), new(bytes.Buffer))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one saying %q", err, c.want)
			}
		})
	}
}

// TestParseWriteRate reads serve -write-rate: a rate, with a burst of
// three seconds of it (the default's 60 for 20), or off.
func TestParseWriteRate(t *testing.T) {
	for _, c := range []struct {
		text  string
		rate  rate.Limit
		burst int
	}{{"20", 20, 60}, {"0.1", 0.1, 1}, {"2.5", 2.5, 8}, {"off", rate.Inf, 1}} {
		r, burst, err := parseWriteRate(c.text)
		if err != nil || r != c.rate || burst != c.burst {
			t.Errorf("%s: %v after %d, %v; want %v after %d", c.text, r, burst, err, c.rate, c.burst)
		}
	}
	if r, burst, _ := parseWriteRate(strconv.FormatFloat(float64(defaultWriteRate), 'g', -1, 64)); r != defaultWriteRate || burst != defaultWriteBurst {
		t.Errorf("the flag's default: %v after %d, want the defaults %v after %d", r, burst, defaultWriteRate, defaultWriteBurst)
	}
}

// TestTokenListRevokeCommands lists the tokens and revokes one from the
// command line: it stops working at once.
func TestTokenListRevokeCommands(t *testing.T) {
	dir := t.TempDir()
	st, _, err := store.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, secret, err := st.MintToken(t.Context(), store.NewToken{Name: "leaky", Kind: store.Agent, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}

	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"token", "list", "-data", dir}, getenv(nil), &stdout, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), k.ID) || !strings.Contains(stdout.String(), "leaky") || strings.Contains(stdout.String(), secret) {
		t.Errorf("token list:\n%s", &stdout)
	}
	stdout.Reset()
	if err := run(t.Context(), []string{"token", "revoke", "-data", dir, k.ID}, getenv(nil), &stdout, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Authenticate(t.Context(), secret); err != store.ErrBadToken {
		t.Errorf("a revoked token authenticates: %v", err)
	}
}
