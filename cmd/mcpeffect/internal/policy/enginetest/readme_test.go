package enginetest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/policy"
	"github.com/mcpeffect/mcpeffect/manifest"
)

var printReadme = flag.Bool("print-readme", false, "print the policies of the README's example, to paste into it")

const readme = "../../../README.md"

// readmeExample is the registry of the README's example: a notes server
// with a tool whose effect depends on its action, and a prompt that only
// the full scope gets.
func readmeExample(t testing.TB) (*mcpeffect.Registry, *policy.Set) {
	r := mcpeffect.NewRegistry()
	must(t, r.Add("get_note", mcpeffect.Read))
	must(t, r.Add("create_note", mcpeffect.Write))
	must(t, r.Add("delete_note", mcpeffect.Destructive|mcpeffect.Idempotent))
	must(t, r.AddRule("notes", mcpeffect.EffectByArgument("op", map[string]mcpeffect.Effect{
		"get": mcpeffect.Read, "delete": mcpeffect.Destructive | mcpeffect.Idempotent,
	})))
	must(t, r.DeclarePrompt("purge_old_notes", mcpeffect.Full))
	s, err := policy.FromManifest(manifest.Of(r, mcpeffect.ScopeNames{}), mcpeffect.ScopeNames{}, "notes-server")
	must(t, err)
	return r, s
}

// readmeBlock returns the code block of the README that follows the
// marker <!-- name -->.
func readmeBlock(t *testing.T, text, name string) string {
	t.Helper()
	re := regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(name) + " -->\\s*```[a-z]*\\n(.*?)```")
	m := re.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the README has no code block after <!-- %s -->", name)
	}
	return m[1]
}

// TestReadmeConfigurations loads the configuration the README gives for
// each gateway into its engine: ToolHive's authorization file into
// cedar-go as ToolHive does, the Rego module into OPA with the README's
// input document, the rules of agentgateway's configuration into cel-go;
// checks that each is what mcpeffect policy writes for the example today;
// and that each decides as Enforcer.Decide does.
func TestReadmeConfigurations(t *testing.T) {
	r, s := readmeExample(t)
	var th, rg, ag bytes.Buffer
	must(t, s.WriteToolHive(&th, policy.CedarOptions{}))
	must(t, s.WriteRego(&rg))
	must(t, s.WriteAgentgateway(&ag, policy.CELOptions{}))
	if *printReadme {
		os.Stdout.Write(th.Bytes())
		os.Stdout.Write(rg.Bytes())
		os.Stdout.Write(ag.Bytes())
	}
	data, err := os.ReadFile(readme)
	must(t, err)
	text := string(data)

	toolhiveConfig := readmeBlock(t, text, "policy:toolhive")
	regoModule := readmeBlock(t, text, "policy:rego")
	regoInput := readmeBlock(t, text, "policy:rego-input")
	agentgatewayConfig := readmeBlock(t, text, "policy:agentgateway")
	if toolhiveConfig != th.String() {
		t.Errorf("the README's ToolHive configuration is not what mcpeffect policy writes: run go test -run TestReadmeConfigurations -print-readme and paste it")
	}
	if regoModule != rg.String() {
		t.Errorf("the README's Rego module is not what mcpeffect policy writes: run go test -run TestReadmeConfigurations -print-readme and paste it")
	}
	// The README's agentgateway configuration holds the rules mcpeffect
	// policy writes, under mcp.policies, beside the JWT authentication.
	var full struct {
		MCP struct {
			Policies struct {
				MCPAuthentication map[string]any `yaml:"mcpAuthentication"`
				MCPAuthorization  struct {
					Rules []string `yaml:"rules"`
				} `yaml:"mcpAuthorization"`
			} `yaml:"policies"`
			Targets []map[string]any `yaml:"targets"`
		} `yaml:"mcp"`
	}
	if err := yaml.Unmarshal([]byte(agentgatewayConfig), &full); err != nil {
		t.Fatalf("the README's agentgateway configuration: %v", err)
	}
	written := celRules(t, ag.Bytes())
	if got := full.MCP.Policies.MCPAuthorization.Rules; strings.Join(got, "\n") != strings.Join(written, "\n") {
		t.Errorf("the README's agentgateway rules are not what mcpeffect policy writes:\n%s", strings.Join(written, "\n"))
	}
	if full.MCP.Policies.MCPAuthentication == nil || len(full.MCP.Targets) == 0 {
		t.Errorf("the README's agentgateway configuration has no mcpAuthentication or no target")
	}

	en := engines{loadToolHive(t, []byte(toolhiveConfig)), loadOPA(t, []byte(regoModule)), loadAgentgateway(t, full.MCP.Policies.MCPAuthorization.Rules)}
	checkWith(t, "README", r, s, en, mcpeffect.ScopeNames{}, nil)

	// The README's input document is one OPA decides, as Decide does.
	var input map[string]any
	if err := json.Unmarshal([]byte(regoInput), &input); err != nil {
		t.Fatalf("the README's input document: %v", err)
	}
	args, _ := json.Marshal(input["arguments"])
	var scopes []string
	for _, s := range input["scopes"].([]any) {
		scopes = append(scopes, s.(string))
	}
	req := request{method: input["method"].(string), name: input["name"].(string), args: args, claims: map[string]any{"sub": "reader", "scope": strings.Join(scopes, " ")}}
	got, err := en.rego.allow(req)
	if err != nil || !got {
		t.Errorf("OPA on the README's input: %t, %v; want allowed", got, err)
	}
}
