package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// TestServeFirstStart runs done-server with no arguments in an empty
// directory: it creates its data, explains how to mint a token, and does
// not serve stdio without one.
func TestServeFirstStart(t *testing.T) {
	t.Chdir(t.TempDir())
	var stderr bytes.Buffer
	err := run(t.Context(), nil, getenv(nil), new(bytes.Buffer), &stderr)
	if err == nil || !strings.Contains(err.Error(), "DONE_TOKEN is not set") {
		t.Errorf("err = %v, want DONE_TOKEN missing", err)
	}
	if !strings.Contains(stderr.String(), "done-server token create -data ./done-data") {
		t.Errorf("stderr does not say how to mint a token:\n%s", &stderr)
	}
	if _, err := os.Stat(filepath.Join("done-data", store.FileName)); err != nil {
		t.Errorf("no database in ./done-data: %v", err)
	}

	stderr.Reset()
	err = run(t.Context(), []string{"serve"}, getenv(map[string]string{"DONE_TOKEN": "done_not-a-token"}), new(bytes.Buffer), &stderr)
	if err == nil || !strings.Contains(err.Error(), "DONE_TOKEN") {
		t.Errorf("serving with an unknown DONE_TOKEN: err = %v", err)
	}
	if strings.Contains(stderr.String(), "token create") {
		t.Errorf("the first-start message again on the second start:\n%s", &stderr)
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
