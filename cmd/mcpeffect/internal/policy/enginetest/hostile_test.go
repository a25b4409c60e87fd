package enginetest

import (
	"encoding/json"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/policy"
	"github.com/mcpeffect/mcpeffect/manifest"
)

// TestHostileNames writes the policies of a server whose names no
// registry would take (a live server may list them): quotes, backslashes,
// a line break that would end a comment, U+2028, a NUL, a like pattern's
// star, a Cedar entity separator. Each engine loads each policy, and
// decides each name as its own, not as its neighbour's.
func TestHostileNames(t *testing.T) {
	names := []string{
		"a\"b", `back\slash`, "line\nbreak // permit", "sep\u2028arator", "nul\x00l", "star*", "Tool::\"x\"", "é", "' || true || '",
	}
	tool := func(name string, e mcpeffect.Effect) manifest.Tool {
		return manifest.Tool{Name: name, Derived: manifest.Derived{Effect: e, Hints: e.Hints(), Required: e.Required()}}
	}
	m := &manifest.Manifest{}
	for _, n := range names {
		m.Tools = append(m.Tools, tool(n, mcpeffect.Read))
		m.Tools = append(m.Tools, tool(n+"!", mcpeffect.Destructive))
		m.Prompts = append(m.Prompts, manifest.Scoped{Name: n, Required: mcpeffect.Full})
		m.Resources = append(m.Resources, manifest.Scoped{Name: "x://" + n, Required: mcpeffect.Full})
	}
	m.Tools = append(m.Tools, manifest.Tool{Name: "rule", Derived: manifest.Derived{Effect: mcpeffect.Destructive, Required: mcpeffect.Full}, Argument: "k\"ind*",
		Outcomes: []manifest.Outcome{{Value: "g\"et\n", Derived: manifest.Derived{Effect: mcpeffect.Read}}, {Value: "drop", Derived: manifest.Derived{Effect: mcpeffect.Destructive}}}})
	s, err := policy.FromManifest(m, mcpeffect.ScopeNames{}, "a \"hostile\"\nserver")
	must(t, err)
	en := load(t, s)
	read := map[string]any{"sub": "x", "scope": "tools:read"}
	full := map[string]any{"sub": "x", "scope": "tools:destructive"}
	expect := func(what string, r request, want bool, engines ...string) {
		t.Helper()
		all := map[string]func(request) (bool, error){"cedar": en.cedar.allow, "rego": en.rego.allow, "cel": en.cel.allow}
		for _, e := range engines {
			got, err := all[e](r)
			if err != nil || got != want {
				t.Errorf("%s: %s: allowed=%t, %v; want %t", e, what, got, err, want)
			}
		}
	}
	for _, n := range names {
		expect(n+" read-only", request{method: "tools/call", name: n, args: json.RawMessage(`{}`), claims: read}, true, "cedar", "rego", "cel")
		expect(n+"! read-only", request{method: "tools/call", name: n + "!", args: json.RawMessage(`{}`), claims: read}, false, "cedar", "rego", "cel")
		expect(n+"! full", request{method: "tools/call", name: n + "!", args: json.RawMessage(`{}`), claims: full}, true, "cedar", "rego", "cel")
		expect("prompt "+n+" read-only", request{method: "prompts/get", name: n, claims: read}, false, "cedar", "rego", "cel")
		expect("prompt "+n+" full", request{method: "prompts/get", name: n, claims: full}, true, "cedar", "rego", "cel")
		expect("resource "+n+" read-only", request{method: "resources/read", uri: "x://" + n, claims: read}, false, "cedar", "rego", "cel")
	}
	get, _ := json.Marshal(map[string]string{"k\"ind*": "g\"et\n"})
	expect("rule, its read outcome", request{method: "tools/call", name: "rule", args: get, claims: read}, true, "cedar", "rego")
	expect("rule, its read outcome, without arguments in CEL", request{method: "tools/call", name: "rule", args: get, claims: read}, false, "cel")
}
