package mcpeffecttest_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type manageArgs struct {
	Action string `json:"action"`
	ID     string `json:"id"`
	Note   string `json:"note,omitempty"`
}

// manageEffects are the outcomes of manage_task, each true.
var manageEffects = map[string]mcpeffect.Effect{
	"get":      mcpeffect.Read,
	"note":     mcpeffect.Idempotent,
	"complete": mcpeffect.Destructive | mcpeffect.Idempotent,
}

// ruleServer returns a function that makes a fresh task server with
// manage_task, whose effect depends on its action; with peek, its "get"
// counts views, which a read must not.
func ruleServer(peek bool) func(testing.TB) mcpeffecttest.Instance[*tasks] {
	return func(t testing.TB) mcpeffecttest.Instance[*tasks] {
		st := &tasks{byID: make(map[string]*task), stars: make(map[string]bool), seed: newID()}
		st.byID[st.seed] = &task{title: "Buy milk", status: "open"}
		r := mcpeffect.NewRegistry()
		s := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: "manage_task"}, mcpeffect.EffectByArgument("action", manageEffects),
			func(_ context.Context, _ *mcp.CallToolRequest, a manageArgs) (*mcp.CallToolResult, any, error) {
				st.mu.Lock()
				defer st.mu.Unlock()
				tk := st.byID[a.ID]
				switch a.Action {
				case "get":
					if peek {
						tk.views++
					}
				case "note":
					if tk.note == "" {
						tk.note = a.Note
					}
				case "complete":
					tk.status = "done"
				}
				return &mcp.CallToolResult{}, nil, nil
			})
		// update_task renames when given a title, and adds a note
		// otherwise: a function of its input decides.
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: "update_task"}, mcpeffect.EffectByFunc(func(a taskArgs) mcpeffect.Effect {
			if a.Title != "" {
				return mcpeffect.Destructive | mcpeffect.Idempotent
			}
			return mcpeffect.Idempotent
		}, mcpeffect.Idempotent, mcpeffect.Destructive|mcpeffect.Idempotent),
			func(_ context.Context, _ *mcp.CallToolRequest, a taskArgs) (*mcp.CallToolResult, any, error) {
				st.mu.Lock()
				defer st.mu.Unlock()
				tk := st.byID[a.ID]
				if a.Title != "" {
					tk.title = a.Title
				} else if tk.note == "" {
					tk.note = a.Note
				}
				return &mcp.CallToolResult{}, nil, nil
			})
		s.AddReceivingMiddleware(r.Middleware(nil))
		return mcpeffecttest.Instance[*tasks]{Server: s, Registry: r, State: st.state, Env: st}
	}
}

func onSeedManage(action, note string) func(testing.TB, *tasks, *mcpeffecttest.Session) any {
	return func(_ testing.TB, s *tasks, _ *mcpeffecttest.Session) any {
		return manageArgs{Action: action, ID: s.seed, Note: note}
	}
}

var honestRules = []mcpeffecttest.Example[*tasks]{
	{Tool: "manage_task", Name: "get", Setup: onSeedManage("get", "")},
	{Tool: "manage_task", Name: "note", Setup: onSeedManage("note", "semi-skimmed")},
	{Tool: "manage_task", Name: "complete", Setup: onSeedManage("complete", "")},
	{Tool: "update_task", Name: "rename", Setup: onSeed(taskArgs{Title: "Buy bread"}), Effect: mcpeffect.Destructive | mcpeffect.Idempotent},
	{Tool: "update_task", Name: "note", Setup: onSeed(taskArgs{Note: "semi-skimmed"}), Effect: mcpeffect.Idempotent},
}

// TestVerifyRules: a tool whose effect depends on its arguments is
// verified outcome by outcome, each example held to its own call's
// effect.
func TestVerifyRules(t *testing.T) {
	without := func(name string) []mcpeffecttest.Example[*tasks] {
		var out []mcpeffecttest.Example[*tasks]
		for _, ex := range honestRules {
			if ex.Tool+"/"+ex.Name != name {
				out = append(out, ex)
			}
		}
		return out
	}
	for _, tt := range []struct {
		name     string
		peek     bool
		examples []mcpeffecttest.Example[*tasks]
		want     []string
	}{
		{name: "every outcome true", examples: honestRules},
		{name: "a read action that writes", peek: true, examples: honestRules, want: []string{
			`^tool "manage_task" is classified read, but example "get" changed the state on its first call, which a read must not:`,
		}},
		{name: "an outcome without an example", examples: without("manage_task/complete"), want: []string{
			`^tool "manage_task" has no example of its outcome write\|destructive\|idempotent that reaches its work`,
		}},
		{name: "the general form without the effect", examples: append(without("update_task/rename"),
			mcpeffecttest.Example[*tasks]{Tool: "update_task", Name: "rename", Setup: onSeed(taskArgs{Title: "Buy bread"})}), want: []string{
			`^tool "update_task", example "rename": the example's arguments .* do not give the effect of the call with certainty \(see EffectRule.CallEffect\): set Example.Effect$`,
		}},
		{name: "an effect the rule contradicts", examples: append(without("manage_task/note"),
			mcpeffecttest.Example[*tasks]{Tool: "manage_task", Name: "note", Setup: onSeedManage("note", "x"), Effect: mcpeffect.Write}), want: []string{
			`^tool "manage_task", example "note": Example.Effect says write, but the tool's rule gives write\|idempotent for the arguments`,
		}},
		{name: "an effect the rule does not declare", examples: append(without("update_task/note"),
			mcpeffecttest.Example[*tasks]{Tool: "update_task", Name: "note", Setup: onSeed(taskArgs{Note: "x"}), Effect: mcpeffect.Write}), want: []string{
			`^tool "update_task", example "note": Example.Effect is write, which is not one of the outcomes the tool's rule declares`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &verifyRecorder{recorder: recorder{TB: t}}
			mcpeffecttest.Verify(rec, ruleServer(tt.peek), tt.examples, nil)
			if len(rec.errs) != len(tt.want) {
				t.Fatalf("Verify reported %d failures, want %d:\n%s", len(rec.errs), len(tt.want), strings.Join(rec.errs, "\n"))
			}
			for i, w := range tt.want {
				if !regexp.MustCompile(w).MatchString(rec.errs[i]) {
					t.Errorf("failure %d = %q, want it to match %q", i, rec.errs[i], w)
				}
			}
		})
	}
}
