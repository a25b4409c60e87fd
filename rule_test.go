package mcpeffect_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resourceArgs are the arguments of a tool that folds several operations
// into one, selected by action, as Kubernetes servers' resources tools do.
type resourceArgs struct {
	Action string `json:"action" jsonschema:"get, list, create or delete"`
	Name   string `json:"name,omitempty"`
}

// issueArgs are those of a tool whose effect a function computes:
// commenting adds, changing the state overwrites.
type issueArgs struct {
	Comment string `json:"comment,omitempty"`
	State   string `json:"state,omitempty"`
}

var resourceEffects = map[string]mcpeffect.Effect{
	"get":    mcpeffect.Read,
	"list":   mcpeffect.Read,
	"create": mcpeffect.Write,
	"delete": mcpeffect.Destructive | mcpeffect.Idempotent,
}

// seen records what each handler received.
type seen struct {
	mu   sync.Mutex
	args map[string][]string
}

func (s *seen) add(tool, what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.args[tool] = append(s.args[tool], what)
}

// take returns what tool's handler received since the last take.
func (s *seen) take(tool string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.args[tool]
	delete(s.args, tool)
	return got
}

// newRuleServer returns a server whose tools have effects that depend on
// their arguments, in every form:
//
//   - resources: typed, by the argument action;
//   - docs: typed, by action, whose schema gives action the default "get";
//   - files: low-level, by action, with the same default in its schema;
//   - update_issue: typed, by a function of the decoded input;
//   - raw_issue: low-level, by a function of the raw arguments.
func newRuleServer(t testing.TB, opts *mcpeffect.MiddlewareOptions) (*mcp.Server, *mcpeffect.Registry, *seen) {
	t.Helper()
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "rules", Version: "v1"}, nil)
	sn := &seen{args: map[string][]string{}}
	byAction := mcpeffect.EffectByArgument("action", resourceEffects)
	typed := func(name string) mcp.ToolHandlerFor[resourceArgs, any] {
		return func(_ context.Context, _ *mcp.CallToolRequest, in resourceArgs) (*mcp.CallToolResult, any, error) {
			sn.add(name, in.Action)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Action + " done"}}}, nil, nil
		}
	}
	raw := func(name string) mcp.ToolHandler {
		return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sn.add(name, string(req.Params.Arguments))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		}
	}
	withDefault := json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","default":"get"},"name":{"type":"string"}}}`)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "resources", Description: "Get, list, create or delete a resource."}, byAction, typed("resources"))
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "docs", InputSchema: withDefault}, byAction, typed("docs"))
	mcpeffect.AddToolHandler(s, r, &mcp.Tool{Name: "files", InputSchema: withDefault}, byAction, raw("files"))
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "update_issue"},
		mcpeffect.EffectByFunc(func(in issueArgs) mcpeffect.Effect {
			switch {
			case in.State == "panic":
				panic("a rule that panics")
			case in.State == "read":
				return mcpeffect.Read // not declared
			case in.State != "":
				return mcpeffect.Destructive
			}
			return mcpeffect.Write
		}, mcpeffect.Write, mcpeffect.Destructive),
		func(_ context.Context, _ *mcp.CallToolRequest, in issueArgs) (*mcp.CallToolResult, any, error) {
			sn.add("update_issue", in.Comment+"|"+in.State)
			return &mcp.CallToolResult{}, nil, nil
		})
	mcpeffect.AddToolHandler(s, r, &mcp.Tool{Name: "raw_issue", InputSchema: json.RawMessage(`{"type":"object"}`)},
		mcpeffect.EffectByFunc(func(args json.RawMessage) mcpeffect.Effect {
			var in issueArgs
			if json.Unmarshal(args, &in) != nil {
				return 0
			}
			if in.State != "" {
				return mcpeffect.Destructive
			}
			return mcpeffect.Write
		}, mcpeffect.Write, mcpeffect.Destructive),
		raw("raw_issue"))
	s.AddReceivingMiddleware(r.Middleware(opts))
	return s, r, sn
}

// TestRuleAdvertisesTheWorstCase: the registry and tools/list report the
// worst case of each rule's outcomes, which everything that knows nothing
// of rules keeps assuming.
func TestRuleAdvertisesTheWorstCase(t *testing.T) {
	s, r, _ := newRuleServer(t, nil)
	want := map[string]mcpeffect.Effect{
		"resources":    mcpeffect.Destructive, // read, write and an idempotent deletion: not idempotent
		"docs":         mcpeffect.Destructive,
		"files":        mcpeffect.Destructive,
		"update_issue": mcpeffect.Destructive,
		"raw_issue":    mcpeffect.Destructive,
	}
	tools, err := connect(t, context.Background(), s).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		e, ok := r.Effect(tool.Name)
		if !ok || e != want[tool.Name] {
			t.Errorf("%s: Effect = %s, %t; want %s", tool.Name, e, ok, want[tool.Name])
		}
		a := tool.Annotations
		if a.ReadOnlyHint || !*a.DestructiveHint || a.IdempotentHint || *a.OpenWorldHint {
			t.Errorf("%s advertises %+v, want the worst case of its outcomes", tool.Name, a)
		}
		if _, ok := r.Rule(tool.Name); !ok {
			t.Errorf("%s: no rule", tool.Name)
		}
		if r.Allowed(tool.Name, mcpeffect.NonDestructive) || !r.Allowed(tool.Name, mcpeffect.Full) {
			t.Errorf("%s: Allowed says what the worst case allows", tool.Name)
		}
	}
	if len(tools.Tools) != len(want) {
		t.Errorf("listed %d tools", len(tools.Tools))
	}
}

// TestRuleEnforcesEachCall calls the tools with every scope and hostile
// arguments. The decision must be the effect of what the handler receives:
// for a typed handler, the input go-sdk decoded (case-sensitively, with
// the schema's defaults); for a low-level one, anything uncertain in the
// raw arguments is the worst case.
func TestRuleEnforcesEachCall(t *testing.T) {
	s, _, sn := newRuleServer(t, nil)
	ctx := context.Background()
	sessions := map[mcpeffect.Scope]*mcp.ClientSession{}
	for _, scope := range []mcpeffect.Scope{0, mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full} {
		sessions[scope] = connect(t, mcpeffect.WithConnectionScope(ctx, scope), s)
	}
	const (
		worst         = "the worst case"
		undecided     = "" // no outcome expected in the refusal
		schemaRefused = "!schema"
	)
	for _, tt := range []struct {
		tool, args string
		scope      mcpeffect.Scope
		// want is what the handler receives, or "" for a refusal, whose
		// Outcome contains outcome and whose Required is need.
		want    string
		outcome string
		need    mcpeffect.Scope
	}{
		{"resources", `{"action":"get"}`, mcpeffect.ReadOnly, "get", "", 0},
		{"resources", `{"action":"list","name":"x"}`, mcpeffect.ReadOnly, "list", "", 0},
		{"resources", `{"action":"create"}`, mcpeffect.ReadOnly, "", `action="create"`, mcpeffect.NonDestructive},
		{"resources", `{"action":"create"}`, mcpeffect.NonDestructive, "create", "", 0},
		{"resources", `{"action":"delete"}`, mcpeffect.NonDestructive, "", `action="delete"`, mcpeffect.Full},
		{"resources", `{"action":"delete"}`, mcpeffect.Full, "delete", "", 0},
		{"resources", `{"action":"GET"}`, mcpeffect.ReadOnly, "", `action="GET", which it does not declare, ` + worst, mcpeffect.Full},
		{"resources", `{"action":"GET"}`, mcpeffect.Full, "GET", "", 0},
		// The schema go-sdk infers from resourceArgs requires action and
		// refuses other properties, before any handler.
		{"resources", `{}`, mcpeffect.Full, schemaRefused, "", 0},
		{"resources", `{"action":"get","Action":"delete"}`, mcpeffect.Full, schemaRefused, "", 0},
		// docs's schema allows both. go-sdk decodes case-sensitively: the
		// handler receives "get".
		{"docs", `{"action":"get","Action":"delete"}`, mcpeffect.ReadOnly, "get", "", 0},
		{"docs", `{"Action":"get","action":"delete"}`, mcpeffect.ReadOnly, "", `action="delete"`, mcpeffect.Full},
		{"docs", `{"action":""}`, mcpeffect.NonDestructive, "", `action="", which it does not declare, ` + worst, mcpeffect.Full},
		{"resources", `{"\u0061ction":"get"}`, mcpeffect.ReadOnly, "get", "", 0},
		{"resources", `{"action":"g\u0065t"}`, mcpeffect.ReadOnly, "get", "", 0},
		// The zero scope allows none of the outcomes: refused before the
		// arguments are read, with the least scope that allows some.
		{"resources", `{"action":"get"}`, 0, "", undecided, mcpeffect.ReadOnly},
		// The schema's default fills the missing action for a typed
		// handler, which receives "get"...
		{"docs", `{}`, mcpeffect.ReadOnly, "get", "", 0},
		{"docs", `{"name":"x"}`, mcpeffect.ReadOnly, "get", "", 0},
		// ...but not for a low-level one, whose raw arguments lack it.
		{"files", `{}`, mcpeffect.ReadOnly, "", `action missing, not a string, or given more than once, ` + worst, mcpeffect.Full},
		{"files", `{"action":"get"}`, mcpeffect.ReadOnly, `{"action":"get"}`, "", 0},
		{"files", `{"\u0061ction":"get"}`, mcpeffect.ReadOnly, `{"\u0061ction":"get"}`, "", 0},
		{"files", `{"action":"get","Action":"delete"}`, mcpeffect.ReadOnly, "", worst, mcpeffect.Full},
		{"files", `{"action":"get","\u0041ction":"delete"}`, mcpeffect.ReadOnly, "", worst, mcpeffect.Full},
		{"files", `{"action":5}`, mcpeffect.ReadOnly, "", worst, mcpeffect.Full},
		{"files", `{"action":"get","Action":"delete"}`, mcpeffect.Full, `{"action":"get","Action":"delete"}`, "", 0},
		{"update_issue", `{"comment":"looks good"}`, mcpeffect.NonDestructive, "looks good|", "", 0},
		{"update_issue", `{"state":"closed"}`, mcpeffect.NonDestructive, "", "these arguments", mcpeffect.Full},
		{"update_issue", `{"state":"closed"}`, mcpeffect.Full, "|closed", "", 0},
		{"update_issue", `{"state":"read"}`, mcpeffect.NonDestructive, "", "give none of its declared effects, " + worst, mcpeffect.Full},
		{"update_issue", `{"state":"panic"}`, mcpeffect.NonDestructive, "", "give none of its declared effects, " + worst, mcpeffect.Full},
		{"update_issue", `{"comment":"x"}`, mcpeffect.ReadOnly, "", undecided, mcpeffect.NonDestructive},
		{"raw_issue", `{"comment":"x"}`, mcpeffect.NonDestructive, `{"comment":"x"}`, "", 0},
		{"raw_issue", `{"state":"open"}`, mcpeffect.NonDestructive, "", "these arguments", mcpeffect.Full},
		{"raw_issue", `[1]`, mcpeffect.NonDestructive, "", worst, mcpeffect.Full},
	} {
		t.Run(fmt.Sprintf("%s %s %s", tt.tool, tt.args, tt.scope), func(t *testing.T) {
			res, err := sessions[tt.scope].CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			got := sn.take(tt.tool)
			if tt.want == schemaRefused {
				if err != nil || !res.IsError || len(got) != 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `validating "arguments"`) {
					t.Errorf("err %v, result %+v, handler received %q; want go-sdk's schema to refuse the call", err, res, got)
				}
				return
			}
			if tt.want != "" {
				if err != nil || res.IsError {
					t.Fatalf("err %v, result %+v; want the call to run", err, res)
				}
				if len(got) != 1 || got[0] != tt.want {
					t.Errorf("the handler received %q, want %q", got, tt.want)
				}
				return
			}
			if len(got) != 0 {
				t.Fatalf("the handler of a refused call ran with %q", got)
			}
			d, ok := mcpeffect.AsDeniedError(err)
			if !ok {
				t.Fatalf("err %v, result %+v; want a DeniedError", err, res)
			}
			if d.Tool != tt.tool || !d.DependsOnArguments || d.Granted != tt.scope || d.Required != tt.need ||
				(tt.outcome == undecided) != (d.Selected == "") || !strings.Contains(d.Selected, tt.outcome) {
				t.Errorf("denial %+v; want outcome %q, required %s", d, tt.outcome, tt.need)
			}
			if !strings.HasSuffix(err.Error(), d.Error()) {
				t.Errorf("message %q, DeniedError says %q", err, d.Error())
			}
		})
	}
}

// TestRuleDuplicateSelector sends the selector twice. Which one a decoder
// keeps is its own business: the decision must follow what the typed
// handler receives, and a low-level handler's call counts as the worst
// case.
func TestRuleDuplicateSelector(t *testing.T) {
	s, _, sn := newRuleServer(t, nil)
	ctx := context.Background()
	full := connect(t, mcpeffect.WithConnectionScope(ctx, mcpeffect.Full), s)
	readOnly := connect(t, mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), s)
	for _, args := range []string{`{"action":"get","action":"delete"}`, `{"action":"delete","action":"get"}`, `{"action":"delete","\u0061ction":"get"}`} {
		if _, err := full.CallTool(ctx, &mcp.CallToolParams{Name: "resources", Arguments: json.RawMessage(args)}); err != nil {
			t.Fatal(err)
		}
		got := sn.take("resources")
		if len(got) != 1 {
			t.Fatalf("%s: the handler received %q", args, got)
		}
		t.Logf("%s: the typed handler receives %q", args, got[0])
		_, err := readOnly.CallTool(ctx, &mcp.CallToolParams{Name: "resources", Arguments: json.RawMessage(args)})
		ran := len(sn.take("resources")) > 0
		if want := resourceEffects[got[0]] == mcpeffect.Read; ran != want || (err == nil) != want {
			t.Errorf("%s: the handler receives %q; a read-only call ran %t (%v), want %t", args, got[0], ran, err, want)
		}
		_, err = readOnly.CallTool(ctx, &mcp.CallToolParams{Name: "files", Arguments: json.RawMessage(args)})
		if d, ok := mcpeffect.AsDeniedError(err); !ok || !strings.Contains(d.Selected, "worst case") || len(sn.take("files")) != 0 {
			t.Errorf("%s to a low-level handler: %v, want the worst case, refused", args, err)
		}
	}
}

// TestRuleRefusalsAgree: the middleware's early refusal and the wrapper's
// are the same kind of error, which a client reads with AsDeniedError,
// and both reach OnDenied.
func TestRuleRefusalsAgree(t *testing.T) {
	var mu sync.Mutex
	var denied []*mcpeffect.DeniedError
	s, _, _ := newRuleServer(t, &mcpeffect.MiddlewareOptions{OnDenied: func(_ context.Context, d *mcpeffect.DeniedError) {
		mu.Lock()
		defer mu.Unlock()
		denied = append(denied, d)
	}})
	ctx := context.Background()
	_, early := connect(t, ctx, s).CallTool(ctx, &mcp.CallToolParams{Name: "resources", Arguments: map[string]any{"action": "get"}})
	_, late := connect(t, mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), s).CallTool(ctx, &mcp.CallToolParams{Name: "resources", Arguments: map[string]any{"action": "delete"}})
	for _, err := range []error{early, late} {
		d, ok := mcpeffect.AsDeniedError(err)
		if !ok || d.Tool != "resources" {
			t.Errorf("%v: not a DeniedError", err)
		}
	}
	if !strings.Contains(early.Error(), "whatever its arguments, it needs at least the read-only scope") || !strings.Contains(early.Error(), "no scope, since the request carried no token") {
		t.Errorf("early refusal: %v", early)
	}
	if !strings.Contains(late.Error(), `with action="delete", it needs the full scope ("tools:destructive"), and the caller has only read-only`) {
		t.Errorf("late refusal: %v", late)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(denied) != 2 || denied[0].Selected != "" || denied[1].Selected != `action="delete"` || !denied[0].Unscoped || denied[1].Unscoped {
		t.Errorf("OnDenied saw %+v", denied)
	}
}

// TestRuleHideDenied: a read-only caller sees the tools it may make some
// calls of.
func TestRuleHideDenied(t *testing.T) {
	s, _, _ := newRuleServer(t, &mcpeffect.MiddlewareOptions{HideDenied: true})
	ctx := context.Background()
	for scope, want := range map[mcpeffect.Scope]int{0: 0, mcpeffect.ReadOnly: 3, mcpeffect.NonDestructive: 5} {
		res, err := connect(t, mcpeffect.WithConnectionScope(ctx, scope), s).ListTools(ctx, nil)
		if err != nil || len(res.Tools) != want {
			t.Errorf("scope %s: %d tools listed, %v; want %d", scope, len(res.Tools), err, want)
		}
	}
}

func TestAddToolRulePanics(t *testing.T) {
	type other struct {
		Kind string `json:"kind"`
	}
	yes := true
	for _, tt := range []struct {
		name string
		add  func(s *mcp.Server, r *mcpeffect.Registry)
		want string
		kind error
	}{
		{"nil rule", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, (*mcpeffect.EffectRule)(nil), resourceHandler)
		}, "nil EffectRule", nil},
		{"no argument name", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByArgument("", resourceEffects), resourceHandler)
		}, "empty argument name", mcpeffect.ErrInvalidEffect},
		{"no values", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByArgument("action", nil), resourceHandler)
		}, "no values", mcpeffect.ErrInvalidEffect},
		{"invalid effect", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{"get": mcpeffect.Read | mcpeffect.Destructive}), resourceHandler)
		}, `value "get": Read cannot be combined with Destructive`, mcpeffect.ErrInvalidEffect},
		{"no such argument", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByArgument("verb", resourceEffects), resourceHandler)
		}, `no field has the JSON name "verb"`, nil},
		{"argument in another case", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByArgument("Action", resourceEffects), resourceHandler)
		}, `no field has the JSON name "Action"`, nil},
		// A FuncRule of another input does not compile
		// (TestFuncRuleOfAnotherInputDoesNotCompile); its EffectRule,
		// which has lost its type, is checked when the tool is added.
		{"function of another type", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByFunc(func(other) mcpeffect.Effect { return mcpeffect.Read }, mcpeffect.Read).EffectRule, resourceHandler)
		}, "the rule's function takes mcpeffect_test.other, but the handler's input is mcpeffect_test.resourceArgs", nil},
		{"typed function for a low-level handler", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddToolHandler(s, r, &mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
				mcpeffect.EffectByFunc(func(other) mcpeffect.Effect { return mcpeffect.Read }, mcpeffect.Read).EffectRule, rawHandler)
		}, "a low-level handler's arguments are a json.RawMessage", nil},
		{"nil function", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByFunc[resourceArgs](nil, mcpeffect.Read), resourceHandler)
		}, "nil function", mcpeffect.ErrInvalidEffect},
		{"no outcomes", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByFunc(func(resourceArgs) mcpeffect.Effect { return mcpeffect.Read }), resourceHandler)
		}, "no outcomes", mcpeffect.ErrInvalidEffect},
		{"hints of one outcome", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, mcpeffect.EffectByArgument("action", resourceEffects), resourceHandler)
		}, "classified by its arguments, with the worst case write|destructive, but its annotations say readOnlyHint: true", nil},
		{"classified with one effect", func(s *mcp.Server, r *mcpeffect.Registry) {
			r.Add("t", mcpeffect.Read)
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByArgument("action", resourceEffects), resourceHandler)
		}, `tool "t" is already classified as read`, mcpeffect.ErrAlreadyClassified},
		{"classified by another rule", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByArgument("action", resourceEffects), resourceHandler)
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByArgument("action", resourceEffects), resourceHandler)
		}, `tool "t" is already classified by its arguments (by action: "create"=write, "delete"=write|destructive|idempotent, "get"=read, "list"=read)`, mcpeffect.ErrAlreadyClassified},
		{"a rule, then one effect", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.EffectByArgument("action", resourceEffects), resourceHandler)
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, mcpeffect.Destructive, resourceHandler)
		}, "already classified by its arguments", mcpeffect.ErrAlreadyClassified},
		{"the same rule twice", func(s *mcp.Server, r *mcpeffect.Registry) {
			rule := mcpeffect.EffectByArgument("action", resourceEffects)
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t"}, rule, resourceHandler)
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: "t", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}}, rule, resourceHandler)
		}, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
			r := mcpeffect.NewRegistry()
			var p any
			func() {
				defer func() { p = recover() }()
				tt.add(s, r)
			}()
			if tt.want == "" {
				if p != nil {
					t.Fatalf("panic: %v", p)
				}
				return
			}
			if !strings.Contains(fmt.Sprint(p), tt.want) {
				t.Fatalf("panic %v, want one containing %q", p, tt.want)
			}
			if err, _ := p.(error); tt.kind != nil && !errors.Is(err, tt.kind) {
				t.Errorf("panic %v does not wrap %v", p, tt.kind)
			}
		})
	}
}

func resourceHandler(context.Context, *mcp.CallToolRequest, resourceArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}

func rawHandler(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

func TestEffectRuleCallEffect(t *testing.T) {
	byAction := mcpeffect.EffectByArgument("action", resourceEffects)
	byRaw := mcpeffect.EffectByFunc(func(args json.RawMessage) mcpeffect.Effect {
		if strings.Contains(string(args), "boom") {
			panic("boom")
		}
		if strings.Contains(string(args), "read") {
			return mcpeffect.Read
		}
		return mcpeffect.Write
	}, mcpeffect.Write, mcpeffect.Idempotent)
	byTyped := mcpeffect.EffectByFunc(func(issueArgs) mcpeffect.Effect { return mcpeffect.Write }, mcpeffect.Write)
	for _, tt := range []struct {
		rule    *mcpeffect.EffectRule
		args    string
		want    mcpeffect.Effect
		certain bool
	}{
		{byAction, `{"action":"get"}`, mcpeffect.Read, true},
		{byAction, `{"action":"delete"}`, mcpeffect.Destructive | mcpeffect.Idempotent, true},
		{byAction, `{"action":"get","Action":"get"}`, mcpeffect.Destructive, false},
		{byAction, `{"action":"remove"}`, mcpeffect.Destructive, false},
		{byRaw.EffectRule, `{}`, mcpeffect.Write, true},
		{byRaw.EffectRule, `{"read":1}`, mcpeffect.Write, false}, // Read is not declared
		{byRaw.EffectRule, `{"boom":1}`, mcpeffect.Write, false},
		{byTyped.EffectRule, `{}`, mcpeffect.Write, false},
	} {
		got, certain := tt.rule.CallEffect(json.RawMessage(tt.args))
		if got != tt.want || certain != tt.certain {
			t.Errorf("%s CallEffect(%s) = %s, %t; want %s, %t", tt.rule, tt.args, got, certain, tt.want, tt.certain)
		}
	}
	if w := byRaw.Worst(); w != mcpeffect.Write {
		t.Errorf("worst of write and an idempotent write: %s, want write", w)
	}
	if got := byAction.Outcomes(); len(got) != 4 || got[0].Value != "create" || got[3] != (mcpeffect.Outcome{Value: "list", Effect: mcpeffect.Read}) {
		t.Errorf("Outcomes = %+v", got)
	}
}

// TestFuncRuleOfAnotherInputDoesNotCompile builds two programs: a rule of
// EffectByFunc over the handler's own input compiles, one over another
// input does not, since AddTool ties the rule's input to the handler's.
func TestFuncRuleOfAnotherInputDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	build := func(dir string) (string, error) {
		out, err := exec.Command(gobin, "build", "-o", os.DevNull, "./testdata/ruleinput/"+dir).CombinedOutput()
		return string(out), err
	}
	if out, err := build("match"); err != nil {
		t.Fatalf("the rule of the handler's own input: %v\n%s", err, out)
	}
	out, err := build("mismatch")
	if err == nil {
		t.Fatal("a rule of another input compiled")
	}
	if !strings.Contains(out, "FuncRule[otherArgs] does not satisfy mcpeffect.Classification[podArgs]") {
		t.Errorf("the build failed, but not on the rule: %s", out)
	}
}
