package audit

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/mcpeffect/mcpeffect/resolution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Published outcomes as a server built with mcpeffect writes them.
const (
	outRead        = `"effect": "read", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false`
	outWrite       = `"effect": "write", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false`
	outDestructive = `"effect": "write|destructive|idempotent", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false`
	outOpen        = `"effect": "read|openworld", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true`

	hintsDestructive = `{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}`
	hintsWrite       = `{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}`
	hintsRead        = `{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}`
)

func outcomesMeta(value string) string {
	return `{"` + mcpeffect.OutcomesMetaKey + `": ` + value + `}`
}

// TestReviewPublishedOutcomes reads the outcomes that tools publish, as a
// claim to check: each outcome shown when it can be read, a warning and
// nothing shown when it cannot, whatever the server sent, and an error
// for an outcome that may do more than the tool's hints say.
func TestReviewPublishedOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations string
		meta        string // the tool's _meta, or "" for none
		argument    string
		values      []string // of the outcomes shown
		effects     []mcpeffect.Effect
		resolvable  bool
		rules       []Rule
		message     string // in the finding, if any
	}{
		{name: "no _meta", annotations: hintsDestructive},
		{name: "_meta without the key", annotations: hintsDestructive, meta: `{"com.example/x": 1}`},
		{name: "_meta not an object", annotations: hintsDestructive, meta: `[1]`},
		{name: "common form", annotations: hintsDestructive,
			meta:     outcomesMeta(`{"argument": "action", "outcomes": [{"value": "delete", ` + outDestructive + `}, {"value": "get", ` + outRead + `}, {"value": "", ` + outWrite + `}]}`),
			argument: "action", values: []string{"delete", "get", ""},
			effects: []mcpeffect.Effect{mcpeffect.Destructive | mcpeffect.Idempotent, mcpeffect.Read, mcpeffect.Write}},
		{name: "general form", annotations: hintsDestructive,
			meta:    outcomesMeta(`{"outcomes": [{` + outWrite + `}, {` + outDestructive + `}]}`),
			values:  []string{"", ""},
			effects: []mcpeffect.Effect{mcpeffect.Write, mcpeffect.Destructive | mcpeffect.Idempotent}},
		{name: "members it does not know", annotations: hintsDestructive,
			meta:    outcomesMeta(`{"version": 2, "outcomes": [{"note": "x", ` + outWrite + `}]}`),
			values:  []string{""},
			effects: []mcpeffect.Effect{mcpeffect.Write}},
		{name: "resolvable", annotations: hintsDestructive,
			meta:     `{"io.modelcontextprotocol/tool-resolution": {"resolvable": true}, "` + mcpeffect.OutcomesMetaKey + `": {"argument": "a", "outcomes": [{"value": "x", ` + outWrite + `}]}}`,
			argument: "a", values: []string{"x"}, effects: []mcpeffect.Effect{mcpeffect.Write}, resolvable: true},
		{name: "resolvable without outcomes", annotations: hintsDestructive,
			meta: `{"io.modelcontextprotocol/tool-resolution": {"resolvable": true}}`, resolvable: true},
		{name: "marker not true", annotations: hintsDestructive,
			meta: `{"io.modelcontextprotocol/tool-resolution": {"resolvable": "yes"}}`},

		// A server that says more in its outcomes than in its hints.
		{name: "a write among the outcomes of a read", annotations: hintsRead,
			meta:     outcomesMeta(`{"argument": "action", "outcomes": [{"value": "get", ` + outRead + `}, {"value": "set", ` + outWrite + `}]}`),
			argument: "action", values: []string{"get", "set"}, effects: []mcpeffect.Effect{mcpeffect.Read, mcpeffect.Write},
			rules:   []Rule{RuleOutcomeWider},
			message: `its hints say read, but it publishes outcomes that may do more: action="set" is write (beyond readOnlyHint, idempotentHint)`},
		{name: "destructive among the outcomes of a write", annotations: hintsWrite,
			meta:   outcomesMeta(`{"outcomes": [{` + outWrite + `}, {` + outDestructive + `}]}`),
			values: []string{"", ""}, effects: []mcpeffect.Effect{mcpeffect.Write, mcpeffect.Destructive | mcpeffect.Idempotent},
			rules:   []Rule{RuleOutcomeWider},
			message: "its hints say write, but it publishes outcomes that may do more: some calls are write|destructive|idempotent (beyond destructiveHint)"},
		{name: "open world among the outcomes of a closed read", annotations: hintsRead,
			meta:     outcomesMeta(`{"argument": "q", "outcomes": [{"value": "web", ` + outOpen + `}]}`),
			argument: "q", values: []string{"web"}, effects: []mcpeffect.Effect{mcpeffect.Read | mcpeffect.OpenWorld},
			rules: []Rule{RuleOutcomeWider}, message: `q="web" is read|openworld (beyond openWorldHint)`},
		// A long name is cut where it is shown.
		{name: "a long argument", annotations: hintsRead,
			meta:     outcomesMeta(`{"argument": "` + strings.Repeat("a", 100) + `", "outcomes": [{"value": "` + strings.Repeat("v", 100) + `", ` + outWrite + `}]}`),
			argument: strings.Repeat("a", 100), values: []string{strings.Repeat("v", 100)}, effects: []mcpeffect.Effect{mcpeffect.Write},
			rules: []Rule{RuleOutcomeWider}, message: strings.Repeat("a", 60) + `…="` + strings.Repeat("v", 60) + `…" is write`},
		// Missing hints are their worst case: nothing published is wider.
		{name: "outcomes of a tool without hints", annotations: "",
			meta:     outcomesMeta(`{"argument": "a", "outcomes": [{"value": "x", ` + outDestructive + `}]}`),
			argument: "a", values: []string{"x"}, effects: []mcpeffect.Effect{mcpeffect.Destructive | mcpeffect.Idempotent},
			rules: []Rule{RuleNoAnnotations}},
		// Narrower outcomes are what a rule is for.
		{name: "outcomes narrower than the hints", annotations: hintsDestructive,
			meta:     outcomesMeta(`{"argument": "a", "outcomes": [{"value": "x", ` + outRead + `}]}`),
			argument: "a", values: []string{"x"}, effects: []mcpeffect.Effect{mcpeffect.Read}},

		// What cannot be read is a warning, and nothing is shown.
		{name: "not an object", annotations: hintsDestructive, meta: outcomesMeta(`"read"`),
			rules: []Rule{RuleOutcomesMalformed}, message: "not a JSON object"},
		{name: "null", annotations: hintsDestructive, meta: outcomesMeta(`null`),
			rules: []Rule{RuleOutcomesMalformed}, message: "not a JSON object"},
		{name: "argument not a string", annotations: hintsDestructive, meta: outcomesMeta(`{"argument": 1, "outcomes": [{"value": "x", ` + outRead + `}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "argument is 1, not the name of an argument"},
		{name: "argument empty", annotations: hintsDestructive, meta: outcomesMeta(`{"argument": "", "outcomes": [{"value": "x", ` + outRead + `}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: `argument is ""`},
		{name: "argument null", annotations: hintsDestructive, meta: outcomesMeta(`{"argument": null, "outcomes": [{"value": "x", ` + outRead + `}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "argument is null"},
		{name: "no outcomes", annotations: hintsDestructive, meta: outcomesMeta(`{"argument": "a"}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "no outcomes"},
		{name: "empty outcomes", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": []}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "no outcomes"},
		{name: "outcomes not an array", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": {"get": "read"}}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "no outcomes"},
		{name: "an outcome not an object", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": [{` + outRead + `}, "write"]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "outcome 2: not a JSON object"},
		{name: "unknown effect", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": [{"effect": "reed", "readOnlyHint": true}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: `outcome 1: effect "reed": unknown flag "reed"`},
		{name: "invalid effect", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": [{"effect": "read|destructive"}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "Read cannot be combined with Destructive"},
		{name: "effect not a string", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": [{"effect": 1}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: `effect is 1, not an effect`},
		{name: "no effect", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": [{"readOnlyHint": true}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: `effect is missing`},
		{name: "a long effect", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": [{"effect": "` + strings.Repeat("read|", 100) + `read"}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: `…, not an effect`},
		{name: "a hint missing", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": [{"effect": "read", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "outcome 1: effect read without openWorldHint"},
		{name: "a hint null", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": [{"effect": "write", "readOnlyHint": null}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "readOnlyHint is null, not a boolean"},
		{name: "a hint not a boolean", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": [{"effect": "write", "readOnlyHint": "no"}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: `readOnlyHint is "no", not a boolean`},
		// A read published with the hints of a write, or the reverse: which
		// is the claim? Neither is shown.
		{name: "hints that are not the effect's", annotations: hintsDestructive,
			meta:  outcomesMeta(`{"outcomes": [{"effect": "read", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "effect read with readOnlyHint false: the effect derives true"},
		{name: "no value in the common form", annotations: hintsDestructive, meta: outcomesMeta(`{"argument": "a", "outcomes": [{` + outRead + `}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: `outcome 1: no value of "a"`},
		{name: "a value in the general form", annotations: hintsDestructive, meta: outcomesMeta(`{"outcomes": [{"value": "get", ` + outRead + `}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "a value, but no argument"},
		{name: "a value null", annotations: hintsDestructive, meta: outcomesMeta(`{"argument": "a", "outcomes": [{"value": null, ` + outRead + `}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: "value is null, not a string"},
		{name: "a value not a string", annotations: hintsDestructive, meta: outcomesMeta(`{"argument": "a", "outcomes": [{"value": ["get"], ` + outRead + `}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: `value is ["get"], not a string`},
		{name: "a value twice", annotations: hintsDestructive,
			meta:  outcomesMeta(`{"argument": "a", "outcomes": [{"value": "get", ` + outRead + `}, {"value": "get", ` + outDestructive + `}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: `outcome 2: the value "get" is given twice`},
		// What the server sent is quoted, so that it cannot reach a
		// terminal as escapes.
		{name: "hostile text", annotations: hintsDestructive, meta: outcomesMeta(`{"argument": "a", "outcomes": [{"value": [` + "\n" + `1], ` + outRead + `}]}`),
			rules: []Rule{RuleOutcomesMalformed}, message: `value is "[\n1]", not a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := connect.Listed{Name: "tool", Annotations: json.RawMessage(tc.annotations)}
			if tc.meta != "" {
				l.Meta = json.RawMessage(tc.meta)
			}
			r, err := Review(connect.Server{}, []connect.Listed{l}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tool := r.Tools[0]
			if tool.Argument != tc.argument || tool.Resolvable != tc.resolvable {
				t.Errorf("argument %q, resolvable %t; want %q, %t", tool.Argument, tool.Resolvable, tc.argument, tc.resolvable)
			}
			var values []string
			var effects []mcpeffect.Effect
			for _, o := range tool.Outcomes {
				values = append(values, o.Value)
				effects = append(effects, o.Effect)
				if got, want := mustJSON(t, o.Declared), mustJSON(t, host.DeclaredOf(o.Effect.Annotations())); got != want {
					t.Errorf("outcome %q of effect %s: hints %s, want %s", o.Value, o.Effect, got, want)
				}
			}
			if !slices.Equal(values, tc.values) || !slices.Equal(effects, tc.effects) {
				t.Errorf("outcomes %q %v, want %q %v", values, effects, tc.values, tc.effects)
			}
			var rules []Rule
			for _, f := range r.Findings {
				rules = append(rules, f.Rule)
				if f.Level != f.Rule.Level() {
					t.Errorf("finding %s has level %s", f.Rule, f.Level)
				}
			}
			if !slices.Equal(rules, tc.rules) {
				t.Errorf("rules %v, want %v; findings %+v", rules, tc.rules, r.Findings)
			}
			if tc.message != "" && !slices.ContainsFunc(r.Findings, func(f Finding) bool { return strings.Contains(f.Message, tc.message) }) {
				t.Errorf("no finding says %q: %+v", tc.message, r.Findings)
			}
			for _, f := range r.Findings {
				if strings.ContainsAny(f.Message, "\x1b\n") {
					t.Errorf("finding %s holds a control character: %q", f.Rule, f.Message)
				}
			}
		})
	}
}

// TestAuditOurOwnServer lists a server built with mcpeffect, over the
// protocol, and finds in the audit each outcome of each rule exactly as
// the registry has it, the tools that can be resolved, and no finding.
func TestAuditOurOwnServer(t *testing.T) {
	type podArgs struct {
		Action string `json:"action"`
	}
	type issueArgs struct {
		State string `json:"state,omitempty"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "own", Version: "1"}, nil)
	r := mcpeffect.NewRegistry()
	pods := mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
		"get": mcpeffect.Read, "list": mcpeffect.Read, "": mcpeffect.Read,
		"create": mcpeffect.Write, "delete": mcpeffect.Destructive | mcpeffect.Idempotent,
		"fetch": mcpeffect.Read | mcpeffect.OpenWorld,
	})
	issue := mcpeffect.EffectByFunc(func(in issueArgs) mcpeffect.Effect {
		if in.State != "" {
			return mcpeffect.Destructive
		}
		return mcpeffect.Write
	}, mcpeffect.Write, mcpeffect.Destructive)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods"}, pods,
		func(context.Context, *mcp.CallToolRequest, podArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "update_issue"}, issue,
		func(context.Context, *mcp.CallToolRequest, issueArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "get_note"}, mcpeffect.Read, noop)
	s.AddReceivingMiddleware(r.Middleware(nil))
	if err := resolution.Serve(s, r); err != nil {
		t.Fatal(err)
	}

	ctx := t.Context()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	server, tools, err := connect.List(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	// The audit declares the extension, to see the marker, and keeps
	// go-sdk's default roots, by which some servers choose their tools.
	caps := mustJSON(t, ss.InitializeParams().Capabilities)
	if !strings.Contains(caps, `"roots":{"listChanged":true}`) || !strings.Contains(caps, `"extensions":{"`+resolution.Extension+`":{}}`) {
		t.Errorf("the audit's capabilities: %s", caps)
	}
	report, err := Review(server, tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Findings) != 0 {
		t.Errorf("findings: %+v", report.Findings)
	}
	want := map[string]struct {
		rule       *mcpeffect.EffectRule
		resolvable bool
	}{"pods": {pods, true}, "update_issue": {issue.EffectRule, false}, "get_note": {}}
	for _, tool := range report.Tools {
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		delete(want, tool.Name)
		if tool.Resolvable != w.resolvable {
			t.Errorf("%s: resolvable %t, want %t", tool.Name, tool.Resolvable, w.resolvable)
		}
		if w.rule == nil {
			if tool.Outcomes != nil || tool.Argument != "" {
				t.Errorf("%s, a tool with one effect, shows outcomes %q %+v", tool.Name, tool.Argument, tool.Outcomes)
			}
			continue
		}
		if tool.Argument != w.rule.Argument() || tool.Effect != w.rule.Worst() {
			t.Errorf("%s: argument %q, effect %s; want %q, %s", tool.Name, tool.Argument, tool.Effect, w.rule.Argument(), w.rule.Worst())
		}
		var got []mcpeffect.Outcome
		for _, o := range tool.Outcomes {
			got = append(got, mcpeffect.Outcome{Value: o.Value, Effect: o.Effect})
		}
		if !slices.Equal(got, w.rule.Outcomes()) {
			t.Errorf("%s: outcomes %+v, want %+v", tool.Name, got, w.rule.Outcomes())
		}
	}
	if len(want) > 0 {
		t.Errorf("not listed: %v", want)
	}
}

// TestHostOutcomes: a host decides from the tool's hints, so the calls
// of every outcome get the tool's outcome; what the outcome's own hints
// would get is there beside it.
func TestHostOutcomes(t *testing.T) {
	r, err := Review(connect.Server{}, []connect.Listed{{Name: "pods", Annotations: json.RawMessage(hintsDestructive),
		Meta: json.RawMessage(outcomesMeta(`{"argument": "action", "outcomes": [{"value": "delete", ` + outDestructive + `}, {"value": "get", ` + outRead + `}, {"value": "fetch", ` + outOpen + `}]}`))}},
		&Options{Hosts: []HostProfile{profile(t, "vscode", "manual"), profile(t, "claude-code", "plan"), profile(t, "cline", "default")}})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		value          string
		outcome, own   HostAction
		review, ownRev bool
	}
	want := map[string][]row{
		"vscode/manual": {{"delete", Asks, Asks, false, false}, {"get", Asks, Runs, false, false}, {"fetch", Asks, Runs, false, true}},
		"claude-code/plan": {{"delete", AsksAlways, AsksAlways, false, false}, {"get", AsksAlways, Asks, false, false},
			{"fetch", AsksAlways, Asks, false, false}},
		"cline/default": {{"delete", Asks, Asks, false, false}, {"get", Asks, Asks, false, false}, {"fetch", Asks, Asks, false, false}},
	}
	for _, h := range r.Hosts {
		var got []row
		for _, o := range h.Tools[0].Outcomes {
			got = append(got, row{o.Value, o.Action, o.WithOwnHints, o.ReviewsOutput, o.OwnReviewsOutput})
		}
		if w := want[h.Host+"/"+h.Mode]; !slices.Equal(got, w) {
			t.Errorf("%s/%s: %+v, want %+v", h.Host, h.Mode, got, w)
		}
		if h.Counts.Asks+h.Counts.AsksAlways != 1 {
			t.Errorf("%s/%s counts %+v: outcomes are not tools", h.Host, h.Mode, h.Counts)
		}
	}
}
