package mcpeffecttest_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type podArgs struct {
	Action string `json:"action"`
}

// A textAction decodes itself, so the raw arguments may not give what a
// handler receives.
type textAction string

func (a *textAction) UnmarshalText(b []byte) error { *a = textAction(b); return nil }

type textPodArgs struct {
	Action textAction `json:"action"`
	Name   string     `json:"name"`
}

type optionalPodArgs struct {
	Action *string `json:"action,omitempty"`
}

type namedPodArgs struct {
	Action string `json:"action"`
	Name   string `json:"name" jsonschema:"required"`
}

type issueArgs struct {
	State string `json:"state,omitempty"`
}

var podEffects = map[string]mcpeffect.Effect{
	"get":    mcpeffect.Read,
	"create": mcpeffect.Write,
	"delete": mcpeffect.Destructive,
}

// TestCheckRules checks servers with tools whose effect depends on their
// arguments: each outcome's boundary, and what Check says when it cannot
// make the calls it needs.
func TestCheckRules(t *testing.T) {
	for _, tt := range []struct {
		name  string
		build func(s *mcp.Server, r *mcpeffect.Registry, ran func())
		calls []mcpeffecttest.Call
		want  []string
	}{
		{
			name: "the common form, enforced",
			build: func(s *mcp.Server, r *mcpeffect.Registry, ran func()) {
				mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods"}, mcpeffect.EffectByArgument("action", podEffects),
					func(context.Context, *mcp.CallToolRequest, podArgs) (*mcp.CallToolResult, any, error) {
						ran()
						return nil, nil, nil
					})
			},
		},
		{
			// Check gives the other arguments the schema requires.
			name: "the common form, with arguments the schema requires",
			build: func(s *mcp.Server, r *mcpeffect.Registry, ran func()) {
				mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods"}, mcpeffect.EffectByArgument("action", podEffects),
					func(context.Context, *mcp.CallToolRequest, namedPodArgs) (*mcp.CallToolResult, any, error) {
						ran()
						return nil, nil, nil
					})
			},
		},
		{
			// A schema that the zero values do not satisfy, of a handler
			// whose argument decodes itself, so that only its wrapper, after
			// go-sdk's schema validation, can read it: the calls must be
			// given, and Check says so.
			name: "the common form, with arguments the schema constrains",
			build: func(s *mcp.Server, r *mcpeffect.Registry, ran func()) {
				schema := &jsonschema.Schema{Type: "object", Required: []string{"action", "name"}, Properties: map[string]*jsonschema.Schema{
					"action": {Type: "string"},
					"name":   {Type: "string", MinLength: jsonschema.Ptr(1)},
				}}
				mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods", InputSchema: schema}, mcpeffect.EffectByArgument("action", podEffects),
					func(context.Context, *mcp.CallToolRequest, textPodArgs) (*mcp.CallToolResult, any, error) {
						ran()
						return nil, nil, nil
					})
			},
			want: []string{
				`tool "pods" with action="create" and the other arguments its schema requires, {"action":"create","name":""}, with a read-only scope: go-sdk's schema validation refused the arguments`,
				`give Check a Call of the tool with arguments that its input schema accepts`,
				`tool "pods" with action="delete" and the other arguments its schema requires, {"action":"delete","name":""}, with a non-destructive scope: go-sdk's schema validation refused`,
			},
		},
		{
			// The same schema, of a handler that receives its argument as a
			// plain string: the middleware reads it from the raw arguments
			// and refuses before go-sdk's schema validation.
			name: "the common form, decided before the schema",
			build: func(s *mcp.Server, r *mcpeffect.Registry, ran func()) {
				schema := &jsonschema.Schema{Type: "object", Required: []string{"action", "name"}, Properties: map[string]*jsonschema.Schema{
					"action": {Type: "string"},
					"name":   {Type: "string", MinLength: jsonschema.Ptr(1)},
				}}
				mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods", InputSchema: schema}, mcpeffect.EffectByArgument("action", podEffects),
					func(context.Context, *mcp.CallToolRequest, namedPodArgs) (*mcp.CallToolResult, any, error) {
						ran()
						return nil, nil, nil
					})
			},
		},
		{
			name: "the common form, with the calls it needs",
			build: func(s *mcp.Server, r *mcpeffect.Registry, ran func()) {
				mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods"}, mcpeffect.EffectByArgument("action", podEffects),
					func(context.Context, *mcp.CallToolRequest, namedPodArgs) (*mcp.CallToolResult, any, error) {
						ran()
						return nil, nil, nil
					})
			},
			calls: []mcpeffecttest.Call{
				{Tool: "pods", Args: map[string]any{"action": "create", "name": "web"}},
				{Tool: "pods", Args: map[string]any{"action": "delete", "name": "web"}},
			},
		},
		{
			// The rule is enforced by a wrapper this server does not have:
			// its handler was added by go-sdk alone.
			name: "a rule without its wrapper",
			build: func(s *mcp.Server, r *mcpeffect.Registry, ran func()) {
				other := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "v1"}, nil)
				rule := mcpeffect.EffectByArgument("action", podEffects)
				mcpeffect.AddTool(other, r, &mcp.Tool{Name: "pods"}, rule,
					func(context.Context, *mcp.CallToolRequest, podArgs) (*mcp.CallToolResult, any, error) {
						return nil, nil, nil
					})
				mcp.AddTool(s, &mcp.Tool{Name: "pods", Annotations: rule.Worst().Annotations()},
					func(context.Context, *mcp.CallToolRequest, podArgs) (*mcp.CallToolResult, any, error) {
						ran()
						return nil, nil, nil
					})
			},
			// The middleware refuses what the raw arguments decide, and
			// go-sdk's schema validation the call without the argument,
			// which the schema inferred from podArgs requires: nothing that
			// Check sends reaches the handler. (Before the middleware read
			// the raw arguments, every call it planned did.)
		},
		{
			// The same, with an argument the schema does not require: the
			// call without it is left by the middleware to a wrapper that
			// is not there, and its handler runs.
			name: "a rule without its wrapper, the argument optional",
			build: func(s *mcp.Server, r *mcpeffect.Registry, ran func()) {
				other := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "v1"}, nil)
				rule := mcpeffect.EffectByArgument("action", podEffects)
				mcpeffect.AddTool(other, r, &mcp.Tool{Name: "pods"}, rule,
					func(context.Context, *mcp.CallToolRequest, optionalPodArgs) (*mcp.CallToolResult, any, error) {
						return nil, nil, nil
					})
				mcp.AddTool(s, &mcp.Tool{Name: "pods", Annotations: rule.Worst().Annotations()},
					func(context.Context, *mcp.CallToolRequest, optionalPodArgs) (*mcp.CallToolResult, any, error) {
						ran()
						return nil, nil, nil
					})
			},
			want: []string{
				`tool "pods" without action, {}, with a read-only scope: want a refusal, but the call returned a result (isError false): its handler ran`,
				`tool "pods" without action, {}, with a non-destructive scope: want a refusal, but the call returned a result`,
			},
		},
		{
			name: "the general form: only the worst case without calls",
			build: func(s *mcp.Server, r *mcpeffect.Registry, ran func()) {
				mcpeffect.AddTool(s, r, &mcp.Tool{Name: "update_issue"}, mcpeffect.EffectByFunc(func(in issueArgs) mcpeffect.Effect {
					if in.State != "" {
						return mcpeffect.Destructive
					}
					return mcpeffect.Write
				}, mcpeffect.Write, mcpeffect.Destructive), func(context.Context, *mcp.CallToolRequest, issueArgs) (*mcp.CallToolResult, any, error) {
					ran()
					return nil, nil, nil
				})
			},
		},
		{
			name: "the general form, with calls",
			build: func(s *mcp.Server, r *mcpeffect.Registry, ran func()) {
				mcpeffect.AddTool(s, r, &mcp.Tool{Name: "update_issue"}, mcpeffect.EffectByFunc(func(in issueArgs) mcpeffect.Effect {
					if in.State == "reopened" {
						return mcpeffect.Write // wrongly: reopening overwrites the state
					}
					if in.State != "" {
						return mcpeffect.Destructive
					}
					return mcpeffect.Write
				}, mcpeffect.Write, mcpeffect.Destructive), func(context.Context, *mcp.CallToolRequest, issueArgs) (*mcp.CallToolResult, any, error) {
					ran()
					return nil, nil, nil
				})
			},
			calls: []mcpeffecttest.Call{
				{Tool: "update_issue", Args: issueArgs{State: "closed"}, Effect: mcpeffect.Destructive},
				{Tool: "update_issue", Args: issueArgs{State: "reopened"}, Effect: mcpeffect.Destructive},
			},
			want: []string{
				`tool "update_issue" with arguments {"state":"reopened"}, with a non-destructive scope: want a refusal, but the call returned a result (isError false): its handler ran`,
			},
		},
		{
			name: "calls that cannot be made",
			build: func(s *mcp.Server, r *mcpeffect.Registry, ran func()) {
				mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods"}, mcpeffect.EffectByArgument("action", podEffects),
					func(context.Context, *mcp.CallToolRequest, podArgs) (*mcp.CallToolResult, any, error) {
						ran()
						return nil, nil, nil
					})
				mcpeffect.AddTool(s, r, &mcp.Tool{Name: "update_issue"}, mcpeffect.EffectByFunc(func(in issueArgs) mcpeffect.Effect {
					return mcpeffect.Write
				}, mcpeffect.Write), func(context.Context, *mcp.CallToolRequest, issueArgs) (*mcp.CallToolResult, any, error) {
					return nil, nil, nil
				})
			},
			calls: []mcpeffecttest.Call{
				{Tool: "get_task"},
				{Tool: "pods", Args: map[string]any{"action": "get"}, Effect: mcpeffect.Write},
				{Tool: "pods", Args: []int{1}},
				{Tool: "update_issue", Args: issueArgs{}},
			},
			want: []string{
				`call 0 is of tool "get_task", which is not a tool of the server whose effect depends on its arguments`,
				`call 1 of tool "pods": the call says write, but the rule gives read for its arguments {"action":"get"}`,
				`call 2 of tool "pods": the arguments: they must marshal to a JSON object`,
				`call 3 of tool "update_issue": its arguments {} do not give the effect with certainty`,
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, r, _ := server(t, true, nil)
			var mu sync.Mutex
			ran := 0
			tt.build(s, r, func() { mu.Lock(); ran++; mu.Unlock() })
			rec := &recorder{TB: t}
			mcpeffecttest.Check(rec, s, r, tt.calls...)
			if len(rec.errs) != len(tt.want) {
				t.Fatalf("Check reported %d failures, want %d:\n%s", len(rec.errs), len(tt.want), strings.Join(rec.errs, "\n"))
			}
			for i, w := range tt.want {
				if !strings.Contains(rec.errs[i], w) {
					t.Errorf("failure %d = %q, want it to contain %q", i, rec.errs[i], w)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			// Each failure that says a call returned a result is a handler
			// that ran; no other call may run one.
			if want := strings.Count(strings.Join(tt.want, "\n"), "the call returned a result"); ran != want {
				t.Errorf("handlers ran %d times, want %d", ran, want)
			}
		})
	}
}
