package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// TestAgentWithoutLiveToken lists agents once one has no live token, its
// only token revoked or another expired: the fleet tools answer, and show
// that agent with no scope.
func TestAgentWithoutLiveToken(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.ReadOnly))
	e.mint("live-bot", store.Agent, mcpeffect.NonDestructive)
	gone, _, err := e.store.MintToken(t.Context(), store.NewToken{Name: "gone-bot", Kind: store.Agent, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.RevokeAnyToken(t.Context(), gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.store.MintToken(t.Context(), store.NewToken{Name: "old-bot", Kind: store.Agent, Scope: mcpeffect.Full, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Hour)

	agents := must[agentsResult](t, alice, "list_agents", nil).Agents
	got := map[string]store.AgentInfo{}
	for _, a := range agents {
		got[a.Name] = a
	}
	for name, want := range map[string]mcpeffect.Scope{"live-bot": mcpeffect.NonDestructive, "gone-bot": 0, "old-bot": 0} {
		a, ok := got[name]
		if !ok || a.Scope != want || (a.LiveTokens > 0) != (want != 0) {
			t.Errorf("list_agents: %s is %+v, want scope %s", name, a, want)
		}
	}
	for _, name := range []string{"gone-bot", "old-bot"} {
		if d := must[store.AgentDetail](t, alice, "get_agent", args{"agent": name}); d.Scope != 0 || d.LiveTokens != 0 {
			t.Errorf("get_agent %s: %+v", name, d)
		}
	}
	must[store.Fleet](t, alice, "fleet_status", nil)
}

// TestPausedAgentTakesNoWork tries every way of giving work to a paused
// agent: each is refused, and changes nothing, until a person resumes it.
func TestPausedAgentTakesNoWork(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	bot := e.connect(e.mint("bot", store.Agent, mcpeffect.Full))
	project := must[store.Project](t, alice, "create_project", args{"name": "Docs", "default_assignee": "bot"})
	free := must[store.Task](t, alice, "create_task", args{"title": "free"})
	mine := must[store.Task](t, alice, "create_task", args{"title": "for bot", "assignee": "bot"})
	failed := must[store.Task](t, alice, "create_task", args{"title": "tried"})
	run := must[store.Run](t, alice, "start_run", args{"task_id": failed.ID, "agent": "bot"})
	must[store.Task](t, bot, "claim_task", args{"task_id": failed.ID})
	must[store.Run](t, bot, "complete_run", args{"run_id": run.ID, "outcome": "failed"})
	must[store.AgentInfo](t, alice, "pause_agent", args{"agent": "bot", "reason": "over budget"})

	for _, c := range []struct {
		name, tool string
		args       args
	}{
		{"assign_task", "assign_task", args{"task_id": free.ID, "assignee": "bot"}},
		{"create_task for it", "create_task", args{"title": "new", "assignee": "bot"}},
		{"create_task for it in a project", "create_task", args{"title": "new", "project_id": project.ID, "assignee": "bot"}},
		{"decompose_task for it", "decompose_task", args{"task_id": free.ID, "subtasks": []args{{"title": "part", "assignee": "bot"}}}},
		{"start_run", "start_run", args{"task_id": free.ID, "agent": "bot"}},
		{"start_run on its task", "start_run", args{"task_id": mine.ID}},
		{"retry_run", "retry_run", args{"run_id": run.ID}},
		{"claim_task by itself", "claim_task", args{"task_id": free.ID}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := alice
			if c.tool == "claim_task" {
				cs = bot
			}
			before := e.dump()
			_, err := call[map[string]any](t, cs, c.tool, c.args)
			if !errors.Is(err, errToolFailed) || !strings.Contains(err.Error(), "is paused") {
				t.Errorf("%s: err = %v, want a refusal saying the agent is paused", c.tool, err)
			}
			if after := e.dump(); after != before {
				t.Errorf("the refused %s changed the database:\n%s", c.tool, lineDiff(before, after))
			}
		})
	}
	// A project's paused default assignee is passed over.
	if task := must[store.Task](t, alice, "create_task", args{"title": "in docs", "project_id": project.ID}); task.Assignee != "" {
		t.Errorf("create_task in a project whose default assignee is paused: assignee %q", task.Assignee)
	}
	if next := must[nextTaskResult](t, bot, "get_next_task", nil); next.Found {
		t.Errorf("get_next_task for a paused agent: %+v", next)
	}

	must[store.AgentInfo](t, alice, "resume_agent", args{"agent": "bot"})
	if task := must[store.Task](t, alice, "assign_task", args{"task_id": free.ID, "assignee": "bot"}); task.Assignee != "bot" {
		t.Errorf("assign_task after resume_agent: %+v", task)
	}
	must[store.Run](t, alice, "retry_run", args{"run_id": run.ID})
}

// TestAgentNameLookAlikes mints agent tokens through create_token with
// names that pass for a person's: each is refused, and the name that is
// kept is the normalised one.
func TestAgentNameLookAlikes(t *testing.T) {
	e := newEnv(t)
	alice := e.connect(e.mint("alice", store.Human, mcpeffect.Full))
	for _, c := range []struct {
		name, input, want string
	}{
		{"trailing space", "alice ", "belongs to a human"},
		{"case", "Alice", "differs only in case"},
		{"zero-width", "ali\u200bce", "U+200B"},
		{"Cyrillic a", "\u0430lice", "mixes letters"},
		{"all Cyrillic", "аӏісе", `looks like "alice"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustFail(t, alice, "create_token", args{"name": c.input, "kind": "agent", "scope": "read-only"}, c.want)
		})
	}
	res := must[createTokenResult](t, alice, "create_token", args{"name": "  Review\u00a0 Bot ", "kind": "agent", "scope": "read-only"})
	if res.Token.Name != "Review Bot" {
		t.Errorf("create_token kept the name %q, want it normalised to %q", res.Token.Name, "Review Bot")
	}
}
