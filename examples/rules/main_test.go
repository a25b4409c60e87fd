package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/internal/testing/exampletest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A person stands for the one who answers the server's questions: it
// answers each with the next of its answers, and keeps the questions.
type person struct {
	mu        sync.Mutex
	answers   []string
	questions []string
}

func (p *person) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.questions = append(p.questions, req.Params.Message)
	answer := "decline"
	if len(p.answers) > 0 {
		answer, p.answers = p.answers[0], p.answers[1:]
	}
	return &mcp.ElicitResult{Action: answer}, nil
}

// TestRules builds the example and calls it over stdio through go-sdk's
// client: each call is decided by its own effect, computed from its
// arguments; hosts see each tool's worst case; and a destructive call
// runs only once the person accepts the question, in the server's words.
func TestRules(t *testing.T) {
	bin := exampletest.Build(t, ".")
	connect := func(t *testing.T, p *person, args ...string) *mcp.ClientSession {
		t.Helper()
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v1"}, &mcp.ClientOptions{ElicitationHandler: p.elicit})
		cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(bin, args...)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	type call struct {
		tool string
		args map[string]any
		want string // the structured content as JSON (keys sorted), "denied", or "not confirmed"
	}
	add := call{"tasks", map[string]any{"action": "add", "title": "Buy milk"}, `{"tasks":[{"id":"1","title":"Buy milk"}]}`}
	list := call{"tasks", map[string]any{"action": "list"}, `{"tasks":[{"id":"1","title":"Buy milk"}]}`}
	comment := call{"edit_task", map[string]any{"id": "1", "comment": "oat"}, `{"comments":["oat"],"id":"1","title":"Buy milk"}`}
	rename := call{"edit_task", map[string]any{"id": "1", "title": "Buy bread"}, `{"id":"1","title":"Buy bread"}`}
	del := call{"tasks", map[string]any{"action": "delete", "id": "1"}, `{"tasks":[]}`}
	with := func(c call, want string) call { c.want = want; return c }
	for _, tc := range []struct {
		name      string
		args      []string
		answers   []string
		calls     []call
		questions []string
	}{
		{"non-destructive", []string{"-scope", "non-destructive"}, nil,
			[]call{add, list, comment, with(rename, "denied"), with(del, "denied"), with(call{"tasks", map[string]any{"action": "purge"}, ""}, "denied")}, nil},
		{"read-only", []string{"-scope", "read-only"}, nil,
			[]call{with(add, "denied"), with(list, `{"tasks":[]}`), with(comment, "denied")}, nil},
		{"full, the person accepts", nil, []string{"accept", "accept"},
			[]call{add, rename, with(list, `{"tasks":[{"id":"1","title":"Buy bread"}]}`), del, with(list, `{"tasks":[]}`)},
			[]string{`Rename task 1 from "Buy milk" to "Buy bread"?`, `Delete task 1, "Buy bread"?`}},
		{"full, the person declines", nil, []string{"decline", "cancel"},
			[]call{add, with(rename, "not confirmed"), with(del, "not confirmed"), list, comment},
			[]string{`Rename task 1 from "Buy milk" to "Buy bread"?`, `Delete task 1, "Buy milk"?`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &person{answers: tc.answers}
			cs := connect(t, p, tc.args...)
			for i, c := range tc.calls {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				switch c.want {
				case "denied":
					if _, ok := mcpeffect.AsDeniedError(err); !ok {
						t.Errorf("call %d, %s %v: %+v, %v; want it refused", i, c.tool, c.args, res, err)
					}
				case "not confirmed":
					if _, ok := mcpeffect.AsNotConfirmedError(err); !ok {
						t.Errorf("call %d, %s %v: %+v, %v; want it not run, since the person did not accept", i, c.tool, c.args, res, err)
					}
				default:
					if err != nil || res.IsError {
						t.Errorf("call %d, %s %v: %+v, %v; want it to run", i, c.tool, c.args, res, err)
						continue
					}
					if got, _ := json.Marshal(res.StructuredContent); string(got) != c.want {
						t.Errorf("call %d, %s %v: %s, want %s", i, c.tool, c.args, got, c.want)
					}
				}
			}
			if !slices.Equal(p.questions, tc.questions) {
				t.Errorf("the person was asked %q, want %q", p.questions, tc.questions)
			}
		})
	}

	t.Run("hints", func(t *testing.T) {
		cs := connect(t, &person{})
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 2 {
			t.Errorf("%d tools listed, want tasks and edit_task", len(res.Tools))
		}
		for _, tool := range res.Tools {
			a := tool.Annotations
			// The worst case of each: each may destroy, and each may add
			// again what it added.
			if a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint || a.IdempotentHint {
				t.Errorf("%s: hints %+v, want its worst case", tool.Name, a)
			}
		}
	})
}
