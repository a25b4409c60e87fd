package enginetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/policy"
	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/catalog"
	"github.com/mcpeffect/mcpeffect/manifest"
)

// engines are the three engines, loaded with the policies of one set.
type engines struct {
	cedar *toolhive
	rego  *opa
	cel   *agentgateway
}

func load(t testing.TB, s *policy.Set) engines {
	t.Helper()
	var th, rg, ag bytes.Buffer
	if err := s.WriteToolHive(&th, policy.CedarOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteRego(&rg); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteAgentgateway(&ag, policy.CELOptions{}); err != nil {
		t.Fatal(err)
	}
	return engines{loadToolHive(t, th.Bytes()), loadOPA(t, rg.Bytes()), loadAgentgateway(t, celRules(t, ag.Bytes()))}
}

// celRules reads the rules of an agentgateway configuration in YAML, as
// agentgateway reads mcpAuthorization: a list of expressions.
func celRules(t testing.TB, config []byte) []string {
	t.Helper()
	var c struct {
		MCPAuthorization struct {
			Rules []string `yaml:"rules"`
		} `yaml:"mcpAuthorization"`
	}
	if err := yaml.Unmarshal(config, &c); err != nil {
		t.Fatalf("agentgateway's configuration: %v\n%s", err, config)
	}
	if len(c.MCPAuthorization.Rules) == 0 {
		t.Fatalf("agentgateway's configuration has no rules:\n%s", config)
	}
	return c.MCPAuthorization.Rules
}

// The tokens of the test: none, one of each scope, two at once, and one
// whose scopes the server does not know.
func tokens(n mcpeffect.ScopeNames) map[string]map[string]any {
	tok := func(scopes ...string) map[string]any {
		return map[string]any{"sub": "client-1", "scope": strings.Join(scopes, " ")}
	}
	return map[string]map[string]any{
		"no token":                       nil,
		"no scope":                       tok(),
		n.Name(mcpeffect.ReadOnly):       tok(n.Name(mcpeffect.ReadOnly)),
		n.Name(mcpeffect.NonDestructive): tok(n.Name(mcpeffect.NonDestructive)),
		n.Name(mcpeffect.Full):           tok(n.Name(mcpeffect.Full)),
		"two scopes":                     tok(n.Name(mcpeffect.ReadOnly), n.Name(mcpeffect.Full)),
		"unknown scope":                  tok("admin", "tools:*"),
	}
}

// A tally counts the decisions compared, by engine and by agreement.
type tally struct {
	mu     sync.Mutex
	equal  map[string]int
	strict map[string]int // the engine refused what the server allows, as documented
}

func newTally() *tally { return &tally{equal: map[string]int{}, strict: map[string]int{}} }

// compare decides r with Enforcer.Decide of e and with each engine, and
// reports a difference, unless worst says that the engine is documented
// to take the worst case of r where the server reads its arguments.
func (tl *tally) compare(t *testing.T, e *mcpeffect.Enforcer, en engines, r request, what string, worstIn map[string]bool) {
	t.Helper()
	var caller mcpeffect.Caller
	if r.claims != nil {
		caller = e.TokenCaller(r.scopes())
	}
	op := mcpeffect.Operation{Method: r.method, Name: r.name, URI: r.uri, Arguments: r.args}
	if op.Method == "resources/subscribe" {
		// As every way into the Enforcer decides it (see Operation).
		op.Method = "resources/read"
	}
	want := e.Decide(context.Background(), op, caller).Allowed()
	for _, c := range []struct {
		engine string
		allow  func(request) (bool, error)
	}{{"cedar", en.cedar.allow}, {"rego", en.rego.allow}, {"cel", en.cel.allow}} {
		if r.method == "completion/complete" && c.engine != "rego" {
			// Neither ToolHive nor agentgateway authorizes completions:
			// they pass them on, and the server decides.
			continue
		}
		got, err := c.allow(r)
		if err != nil {
			t.Errorf("%s: %s: %v", c.engine, what, err)
			continue
		}
		tl.mu.Lock()
		switch {
		case got == want:
			tl.equal[c.engine]++
		case worstIn[c.engine] && want && !got:
			tl.strict[c.engine]++
		default:
			t.Errorf("%s: %s: the engine says allowed=%t, Enforcer.Decide %t", c.engine, what, got, want)
		}
		tl.mu.Unlock()
	}
}

func (tl *tally) log(t *testing.T, name string) {
	for _, e := range []string{"cedar", "rego", "cel"} {
		t.Logf("%s: %s: %d decisions equal to Enforcer.Decide's; %d refused where the server allows, as the policy says (worst case)", name, e, tl.equal[e], tl.strict[e])
	}
}

// check compares every decision of the set written from m with those of
// r's enforcer: for each tool, each token and each argument case; each
// resource and template; each prompt.
func check(t *testing.T, name string, r *mcpeffect.Registry, s *policy.Set, names mcpeffect.ScopeNames, uris []string) *tally {
	t.Helper()
	return checkWith(t, name, r, s, load(t, s), names, uris)
}

// checkWith is check, with the engines loaded already.
func checkWith(t *testing.T, name string, r *mcpeffect.Registry, s *policy.Set, en engines, names mcpeffect.ScopeNames, uris []string) *tally {
	t.Helper()
	e := r.Enforcer(&mcpeffect.MiddlewareOptions{ScopeNames: names})
	tl := newTally()
	toks := tokens(names)
	for _, tool := range s.Tools {
		cases := argumentCases(tool)
		for tokName, claims := range toks {
			for _, c := range cases {
				worstIn := map[string]bool{"cel": tool.DependsOnArguments()}
				if tool.Computed {
					worstIn["cedar"], worstIn["rego"] = true, true
				}
				tl.compare(t, e, en, request{method: "tools/call", name: tool.Name, args: c, claims: claims},
					fmt.Sprintf("tool %s, %s, arguments %s", tool.Name, tokName, c), worstIn)
			}
		}
	}
	// A tool the registry does not know is refused for every scope.
	for tokName, claims := range toks {
		tl.compare(t, e, en, request{method: "tools/call", name: "not_a_tool", args: json.RawMessage(`{}`), claims: claims}, "an unknown tool, "+tokName, nil)
		for _, uri := range uris {
			// Cedar has no regular expressions: a template is matched
			// with like, whose * matches more than the template's
			// expressions, and a URI is held to the widest scope of the
			// templates whose pattern matches it.
			worstIn := map[string]bool{"cedar": likeRequired(s, uri) > r.ResourceScope(uri)}
			for _, m := range []string{"resources/read", "resources/subscribe"} {
				tl.compare(t, e, en, request{method: m, uri: uri, claims: claims}, fmt.Sprintf("%s %s, %s", m, uri, tokName), worstIn)
			}
		}
		prompts := []string{"not_a_prompt"}
		for _, p := range s.Prompts {
			prompts = append(prompts, p.Name)
		}
		for _, p := range prompts {
			tl.compare(t, e, en, request{method: "prompts/get", name: p, claims: claims}, fmt.Sprintf("prompt %s, %s", p, tokName), nil)
			tl.compare(t, e, en, request{method: "completion/complete", name: p, claims: claims}, fmt.Sprintf("completion of prompt %s, %s", p, tokName), nil)
		}
		completed := slices.Clone(uris)
		for _, tmpl := range s.Templates {
			completed = append(completed, tmpl.Template)
		}
		for _, uri := range completed {
			tl.compare(t, e, en, request{method: "completion/complete", uri: uri, claims: claims}, fmt.Sprintf("completion of %s, %s", uri, tokName), nil)
		}
	}
	tl.log(t, name)
	return tl
}

// likeRequired returns the scope that the Cedar policy of s requires to
// read uri: that of the resource if it is declared, and otherwise the
// widest of read-only and of the templates whose like pattern (each
// expression a *) matches uri.
func likeRequired(s *policy.Set, uri string) mcpeffect.Scope {
	for _, r := range s.Resources {
		if r.Name == uri {
			return r.Required
		}
	}
	need := mcpeffect.ReadOnly
	for _, t := range s.Templates {
		var pattern strings.Builder
		pattern.WriteString("^")
		for _, part := range regexp.MustCompile(`\{[^}]*\}`).Split(t.Template, -1) {
			pattern.WriteString(regexp.QuoteMeta(part) + "(?s:.*)")
		}
		p := strings.TrimSuffix(pattern.String(), "(?s:.*)") + "$"
		if regexp.MustCompile(p).MatchString(uri) && t.Required > need {
			need = t.Required
		}
	}
	return need
}

// argumentCases are the arguments of the calls of tool: none, and for a
// tool whose effect depends on one argument, each of its values and each
// way of leaving its outcome uncertain.
func argumentCases(tool policy.Tool) []json.RawMessage {
	cases := []json.RawMessage{nil, json.RawMessage(`{}`), json.RawMessage(`{"unrelated": 1}`)}
	if tool.Argument == "" {
		return cases
	}
	arg, _ := json.Marshal(tool.Argument)
	for _, o := range tool.Outcomes {
		v, _ := json.Marshal(o.Value)
		cases = append(cases, json.RawMessage(fmt.Sprintf(`{%s: %s, "name": "web-1"}`, arg, v)))
		// The same, with the argument also given in another case: an
		// uncertain call, the worst case.
		upper, _ := json.Marshal(strings.ToUpper(tool.Argument))
		cases = append(cases, json.RawMessage(fmt.Sprintf(`{%s: %s, %s: %s}`, arg, v, upper, v)))
		cases = append(cases, json.RawMessage(fmt.Sprintf(`{%s: %s, %s: {"nested": true}}`, arg, v, upper)))
		// In another case alone, and the value in another case.
		cases = append(cases, json.RawMessage(fmt.Sprintf(`{%s: %s}`, upper, v)))
		vu, _ := json.Marshal(strings.ToUpper(o.Value) + "\u212a")
		cases = append(cases, json.RawMessage(fmt.Sprintf(`{%s: %s}`, arg, vu)))
	}
	cases = append(cases,
		json.RawMessage(fmt.Sprintf(`{%s: "no such value"}`, arg)),
		json.RawMessage(fmt.Sprintf(`{%s: 7}`, arg)),
		json.RawMessage(fmt.Sprintf(`{%s: null}`, arg)),
		json.RawMessage(fmt.Sprintf(`{%s: ["get"]}`, arg)),
		json.RawMessage(`[1, 2]`),
	)
	// The Kelvin sign folds to k, and the long s to s: strings.EqualFold
	// takes them for the letters, as mcpeffect does.
	if folded := strings.NewReplacer("k", "\u212a", "s", "\u017f", "K", "\u212a", "S", "\u017f").Replace(tool.Argument); folded != tool.Argument {
		f, _ := json.Marshal(folded)
		v, _ := json.Marshal(tool.Outcomes[0].Value)
		cases = append(cases, json.RawMessage(fmt.Sprintf(`{%s: %s, %s: %s}`, arg, v, f, v)))
	}
	return cases
}

// TestCatalog holds the policies of the conformance catalog's registry
// (its tools, resources, template and prompts, the transient ones too)
// to Enforcer.Decide, in the three engines.
func TestCatalog(t *testing.T) {
	r := mcpeffect.NewRegistry()
	for _, tool := range catalog.Tools {
		must(t, r.Add(tool.Name, tool.Effect))
	}
	must(t, r.Add(catalog.TransientTool.Name, catalog.TransientTool.Effect))
	var uris []string
	for _, res := range catalog.Resources {
		if res.Template {
			must(t, r.DeclareResourceTemplate(res.URI, res.Scope))
			uris = append(uris, strings.ReplaceAll(res.URI, "{id}", "7"), strings.ReplaceAll(res.URI, "{id}", "a%2Fb"))
		} else {
			must(t, r.DeclareResource(res.URI, res.Scope))
			uris = append(uris, res.URI)
		}
	}
	uris = append(uris, "test://not-declared")
	for _, p := range catalog.Prompts {
		must(t, r.DeclarePrompt(p.Name, p.Scope))
	}
	must(t, r.DeclarePrompt(catalog.TransientPrompt.Name, catalog.TransientPrompt.Scope))
	names := mcpeffect.ScopeNames{}
	s, err := policy.FromManifest(manifest.Of(r, names), names, "the conformance catalog")
	must(t, err)
	check(t, "conformance catalog", r, s, names, uris)
	if n := len(s.Tools); n != len(catalog.Tools)+1 {
		t.Errorf("%d tools in the policy, want %d", n, len(catalog.Tools)+1)
	}
}

// TestRules holds the policies of a registry with every kind of
// classification to Enforcer.Decide, in the three engines, with scope
// names of its own: tools whose effect depends on an argument (one whose
// name folds with the Kelvin sign), one computed by a function, resources,
// templates that overlap, and prompts.
func TestRules(t *testing.T) {
	r := mcpeffect.NewRegistry()
	must(t, r.Add("get_pod", mcpeffect.Read))
	must(t, r.Add("scale", mcpeffect.Write|mcpeffect.Idempotent|mcpeffect.OpenWorld))
	must(t, r.AddRule("pods", mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
		"get": mcpeffect.Read, "list": mcpeffect.Read, "create": mcpeffect.Write, "delete": mcpeffect.Destructive | mcpeffect.Idempotent,
	})))
	must(t, r.AddRule("kinds", mcpeffect.EffectByArgument("kind", map[string]mcpeffect.Effect{
		"show": mcpeffect.Read, "add": mcpeffect.Write, "": mcpeffect.Read,
	})))
	must(t, r.AddRule("tasks", mcpeffect.EffectByArgument("op", map[string]mcpeffect.Effect{
		"add": mcpeffect.Write, "drop": mcpeffect.Destructive,
	})))
	must(t, r.AddRule("update_issue", mcpeffect.EffectByFunc(func(in json.RawMessage) mcpeffect.Effect {
		if bytes.Contains(in, []byte(`"state"`)) {
			return mcpeffect.Destructive
		}
		return mcpeffect.Write
	}, mcpeffect.Write, mcpeffect.Destructive).EffectRule))
	must(t, r.DeclareResource("cluster://secrets", mcpeffect.Full))
	must(t, r.DeclareResource("cluster://pods/web", mcpeffect.ReadOnly))
	must(t, r.DeclareResourceTemplate("cluster://pods/{name}", mcpeffect.NonDestructive))
	must(t, r.DeclareResourceTemplate("cluster://{kind}/{name}", mcpeffect.Full))
	must(t, r.DeclareResourceTemplate("cluster://logs/{+path}", mcpeffect.ReadOnly))
	must(t, r.DeclarePrompt("audit", mcpeffect.NonDestructive))
	must(t, r.DeclarePrompt("rotate", mcpeffect.Full))
	names := mcpeffect.ScopeNames{ReadOnly: "k8s.read", NonDestructive: "k8s.write", Full: "k8s.admin"}
	s, err := policy.FromManifest(manifest.Of(r, names), names, "a cluster")
	must(t, err)
	uris := []string{"cluster://secrets", "cluster://pods/web", "cluster://pods/api", "cluster://pods/a/b",
		"cluster://nodes/n1", "cluster://logs/a/b/c", "cluster://other", "other://pods/x", ""}
	check(t, "rules", r, s, names, uris)
}

// TestDone holds the policies of Done, written as mcpeffect policy writes
// them from the server (run as a command, listed through the audit's
// bounded session), to Enforcer.Decide of Done's registry as its
// specification (examples/done-server/testdata/tools.tsv, which Done's
// own tests hold the server to) declares it.
func TestDone(t *testing.T) {
	bin := buildDone(t)
	data := t.TempDir()
	names := mcpeffect.ScopeNames{}
	m, err := policy.FromServer(context.Background(), connect.Target{Command: []string{bin, "-data", data}, Timeout: time.Minute}, names, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s, err := policy.FromManifest(m, names, "Done")
	must(t, err)
	spec := doneSpec(t)
	if len(s.Tools) != len(spec) || len(spec) == 0 {
		t.Fatalf("Done lists %d tools, its specification %d", len(s.Tools), len(spec))
	}
	r := mcpeffect.NewRegistry()
	for _, tool := range s.Tools {
		if want, ok := spec[tool.Name]; !ok || want != tool.Effect {
			t.Errorf("tool %s: Done's hints say %v, its specification %v", tool.Name, tool.Effect, want)
		}
	}
	must(t, r.AddAll(spec))
	// Done's resources and prompts have scopes the server does not
	// publish: the policy leaves them to the server (it lets any caller
	// with a scope through), checked by TestUnscoped.
	check(t, "Done", r, s, names, nil)
}

// doneSpec reads the effects of Done's tools from its specification.
func doneSpec(t *testing.T) map[string]mcpeffect.Effect {
	f, err := os.Open(filepath.Join(doneDir, "testdata", "tools.tsv"))
	must(t, err)
	defer f.Close()
	out := map[string]mcpeffect.Effect{}
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 6 {
			continue
		}
		e := mcpeffect.Read
		if cols[2] != "read" {
			e = mcpeffect.Write
			if cols[3] == "yes" {
				e |= mcpeffect.Destructive
			}
			if cols[4] == "yes" {
				e |= mcpeffect.Idempotent
			}
		}
		if cols[5] == "yes" {
			e |= mcpeffect.OpenWorld
		}
		out[cols[0]] = e
	}
	must(t, sc.Err())
	return out
}

const doneDir = "../../../../../examples/done-server"

var (
	doneOnce sync.Once
	doneBin  string
	doneErr  error
)

// buildDone builds the Done server once for the tests of this binary.
func buildDone(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the Done server")
	}
	doneOnce.Do(func() {
		dir, err := os.MkdirTemp("", "enginetest-")
		if err != nil {
			doneErr = err
			return
		}
		doneBin = filepath.Join(dir, "done-server")
		build := exec.Command("go", "build", "-o", doneBin, ".")
		build.Dir = doneDir
		if out, err := build.CombinedOutput(); err != nil {
			doneErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if doneErr != nil {
		t.Fatalf("building Done: %v", doneErr)
	}
	return doneBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if doneBin != "" {
		os.RemoveAll(filepath.Dir(doneBin))
	}
	os.Exit(code)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
