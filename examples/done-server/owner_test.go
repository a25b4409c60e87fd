package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ownerCommand returns done-server (see [doneServer]) with args, run in
// dir for the user alice, without DONE_TOKEN unless secret is set.
func ownerCommand(t testing.TB, dir, secret string, args ...string) *exec.Cmd {
	cmd := exec.Command(doneServer(t), args...)
	cmd.Dir = dir
	for _, kv := range serverEnv("USER=alice") {
		if !strings.HasPrefix(kv, "DONE_TOKEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if secret != "" {
		cmd.Env = append(cmd.Env, "DONE_TOKEN="+secret)
	}
	return cmd
}

// TestOwnerStdio runs done-server as a process with no arguments and no
// DONE_TOKEN, as `go run .` does: it serves its data directory's owner,
// says so on the first start only, caps the connection with -scope, and
// refuses to start once the owner token is revoked.
func TestOwnerStdio(t *testing.T) {
	dir := t.TempDir()
	start := func(secret string, args ...string) (*mcp.ClientSession, *bytes.Buffer) {
		t.Helper()
		cmd := ownerCommand(t, dir, secret, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, &stderr)
		}
		return cs, &stderr
	}
	stop := func(cs *mcp.ClientSession) {
		t.Helper()
		if err := cs.Close(); err != nil {
			t.Logf("closing the process: %v", err)
		}
	}

	cs, stderr := start("")
	me := must[whoamiResult](t, cs, "whoami", nil)
	if me.Name != "alice" || me.Kind != store.Human || !me.Owner || me.Scope != mcpeffect.Full {
		t.Errorf("whoami as the owner: %+v", me)
	}
	task := must[store.Task](t, cs, "create_task", args{"title": "Written by the owner"})
	stop(cs)
	// The process names its data directory as its working directory
	// resolves, which may differ from dir by symbolic links.
	data, err := filepath.EvalSymlinks(filepath.Join(dir, "done-data"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), data) && !strings.Contains(stderr.String(), filepath.Join(dir, "done-data")) {
		t.Errorf("the first start does not say where the data is (%s):\n%s", data, stderr)
	}
	for _, want := range []string{`serves you as the owner of that directory: "alice"`, "-kind agent", "-http 127.0.0.1:8080"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the first start does not say %q:\n%s", want, stderr)
		}
	}

	// Later starts serve the same owner, and say nothing more about it.
	cs, stderr = start("")
	if again := must[whoamiResult](t, cs, "whoami", nil); again.TokenID != me.TokenID {
		t.Errorf("the second start serves token %s, the first %s", again.TokenID, me.TokenID)
	}
	must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID})
	stop(cs)
	if strings.Contains(stderr.String(), "owner of that directory") {
		t.Errorf("the owner message again on the second start:\n%s", stderr)
	}

	// -scope caps the connection below what the owner's token allows.
	cs, _ = start("", "serve", "-scope", "read-only")
	if capped := must[whoamiResult](t, cs, "whoami", nil); capped.Scope != mcpeffect.ReadOnly || capped.TokenScope != mcpeffect.Full || !capped.ReadOnly {
		t.Errorf("whoami with -scope read-only: %+v", capped)
	}
	_, err = cs.CallTool(t.Context(), callParams("create_task", args{"title": "not allowed"}))
	if d, ok := mcpeffect.AsDeniedError(err); !ok || d.Granted != mcpeffect.ReadOnly {
		t.Errorf("create_task with -scope read-only: err = %v, want a refusal", err)
	}
	stop(cs)

	// Revoking the owner token ends serving without DONE_TOKEN, for good.
	var out bytes.Buffer
	if err := run(t.Context(), []string{"token", "revoke", "-data", filepath.Join(dir, "done-data"), me.TokenID}, getenv(nil), &out, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	cmd := ownerCommand(t, dir, "")
	var refused bytes.Buffer
	cmd.Stderr = &refused
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("starting with the owner token revoked: %v, want exit status 2", err)
	}
	if !strings.Contains(refused.String(), "was revoked") || !strings.Contains(refused.String(), "DONE_TOKEN") {
		t.Errorf("the refusal does not say why:\n%s", &refused)
	}

	// A token in DONE_TOKEN still serves.
	st, _, err := store.Open(t.Context(), filepath.Join(dir, "done-data"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := st.MintToken(t.Context(), store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.ReadOnly})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	cs, _ = start(secret)
	if me := must[whoamiResult](t, cs, "whoami", nil); me.Owner || me.Scope != mcpeffect.ReadOnly {
		t.Errorf("whoami with DONE_TOKEN: %+v", me)
	}
	stop(cs)
}
