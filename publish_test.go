package mcpeffect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/resolution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRulePublishesOutcomes lists the tools of the rule server, in every
// form, over the protocol, and reads each tool's _meta as a client
// receives it: the outcomes of its rule, from the rule itself; none for a
// tool with one effect; and the same with tool resolution served, whose
// marker joins the key rather than replacing it.
func TestRulePublishesOutcomes(t *testing.T) {
	hints := func(e mcpeffect.Effect) string {
		a := e.Annotations()
		return fmt.Sprintf(`"readOnlyHint":%t,"destructiveHint":%t,"idempotentHint":%t,"openWorldHint":%t`, a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint)
	}
	byAction := `{"argument":"action","outcomes":[` +
		`{"value":"create","effect":"write",` + hints(mcpeffect.Write) + `},` +
		`{"value":"delete","effect":"write|destructive|idempotent",` + hints(mcpeffect.Destructive|mcpeffect.Idempotent) + `},` +
		`{"value":"get","effect":"read",` + hints(mcpeffect.Read) + `},` +
		`{"value":"list","effect":"read",` + hints(mcpeffect.Read) + `}]}`
	byFunc := `{"outcomes":[` +
		`{"effect":"write",` + hints(mcpeffect.Write) + `},` +
		`{"effect":"write|destructive",` + hints(mcpeffect.Destructive) + `}]}`
	want := map[string]string{
		"resources":    byAction,
		"docs":         byAction,
		"files":        byAction, // low-level
		"update_issue": byFunc,
		"raw_issue":    byFunc, // low-level
		"plain":        "",
		// The empty value is a value like any other, and is published.
		"empty": `{"argument":"action","outcomes":[` +
			`{"value":"","effect":"read",` + hints(mcpeffect.Read) + `},` +
			`{"value":"delete","effect":"write|destructive",` + hints(mcpeffect.Destructive) + `}]}`,
	}
	for _, resolves := range []bool{false, true} {
		t.Run(fmt.Sprintf("resolution=%t", resolves), func(t *testing.T) {
			s, r, _ := newRuleServer(t, nil)
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "plain"}, mcpeffect.Read, resourceHandler)
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "empty"},
				mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{"": mcpeffect.Read, "delete": mcpeffect.Destructive}), resourceHandler)
			ctx := context.Background()
			var cs *mcp.ClientSession
			if resolves {
				if err := resolution.Serve(s, r); err != nil {
					t.Fatal(err)
				}
				cs = connectResolving(t, ctx, s, resolvingClient(true, nil), "")
			} else {
				cs = connect(t, ctx, s)
			}
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, tool := range res.Tools {
				w, ok := want[tool.Name]
				if !ok {
					t.Errorf("unexpected tool %q", tool.Name)
					continue
				}
				seen++
				v, has := tool.Meta[mcpeffect.OutcomesMetaKey]
				if w == "" {
					if has {
						t.Errorf("%s, a tool with one effect, publishes outcomes: %v", tool.Name, v)
					}
					continue
				}
				got, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				if !jsonEqual(t, got, []byte(w)) {
					t.Errorf("%s publishes\n%s\nwant\n%s", tool.Name, got, w)
				}
				if resolves && tool.Name == "resources" && !resolution.Marked(tool) {
					t.Errorf("%s lost the resolution marker: %v", tool.Name, tool.Meta)
				}
			}
			if seen != len(want) {
				t.Errorf("listed %d of the %d tools", seen, len(want))
			}
		})
	}
}

// jsonEqual reports whether a and b are the same JSON value, whatever
// the order of members.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}

// TestPublishedOutcomesCannotBeWrittenByHand: a tool that arrives with the
// key in its _meta is refused, unless it holds exactly what the rule
// publishes (a tool re-added from a listing); other _meta is kept.
func TestPublishedOutcomesCannotBeWrittenByHand(t *testing.T) {
	rule := mcpeffect.EffectByArgument("action", resourceEffects)
	listed := func() any {
		// What a client decodes from the listing of a tool with rule.
		s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
		r := mcpeffect.NewRegistry()
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, rule, resourceHandler)
		s.AddReceivingMiddleware(r.Middleware(nil))
		res, err := connect(t, context.Background(), s).ListTools(context.Background(), nil)
		if err != nil || len(res.Tools) != 1 {
			t.Fatalf("listing: %v, %v", res, err)
		}
		return res.Tools[0].Meta[mcpeffect.OutcomesMetaKey]
	}()
	claim := map[string]any{"outcomes": []any{map[string]any{"value": "delete", "effect": "read"}}}
	for _, tt := range []struct {
		name string
		add  func(s *mcp.Server, r *mcpeffect.Registry)
		want string
	}{
		{"one effect with the key", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t", Meta: mcp.Meta{mcpeffect.OutcomesMetaKey: claim}}, mcpeffect.Destructive, resourceHandler)
		}, `tool "t" has one effect, but its _meta holds "io.github.mcpeffect/outcomes"`},
		{"one effect, low-level, with the key", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddToolHandler(s, r, &mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: mcp.Meta{mcpeffect.OutcomesMetaKey: nil}}, mcpeffect.Read, rawHandler)
		}, "has one effect, but its _meta holds"},
		{"a rule with other outcomes", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t", Meta: mcp.Meta{mcpeffect.OutcomesMetaKey: claim}}, rule, resourceHandler)
		}, "differs from the outcomes of its rule"},
		{"a low-level rule with other outcomes", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddToolHandler(s, r, &mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: mcp.Meta{mcpeffect.OutcomesMetaKey: "read"}}, rule, rawHandler)
		}, "differs from the outcomes of its rule"},
		{"a rule with its own outcomes, as listed", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t", Meta: mcp.Meta{mcpeffect.OutcomesMetaKey: listed, "com.example/other": 1}}, rule, resourceHandler)
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
			r := mcpeffect.NewRegistry()
			var p any
			func() {
				defer func() { p = recover() }()
				tt.add(s, r)
			}()
			if tt.want != "" {
				if !strings.Contains(fmt.Sprint(p), tt.want) {
					t.Fatalf("panic %v, want one containing %q", p, tt.want)
				}
				if _, ok := r.Effect("t"); ok {
					t.Errorf("the refused tool was classified")
				}
				return
			}
			if p != nil {
				t.Fatalf("panic: %v", p)
			}
			s.AddReceivingMiddleware(r.Middleware(nil))
			res, err := connect(t, context.Background(), s).ListTools(context.Background(), nil)
			if err != nil || len(res.Tools) != 1 {
				t.Fatalf("listing: %v, %v", res, err)
			}
			if m := res.Tools[0].Meta; m["com.example/other"] != 1.0 || !jsonEqual(t, mustJSON(t, m[mcpeffect.OutcomesMetaKey]), mustJSON(t, listed)) {
				t.Errorf("_meta = %v", m)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
