package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/policy"
)

// A request is one MCP request, as each engine is given it: the method,
// the tool's or prompt's name or the resource's URI, the arguments of a
// tools/call as the client sent them, and the claims of the token.
type request struct {
	method string // tools/call, resources/read, prompts/get
	name   string
	uri    string
	args   json.RawMessage // nil: no arguments
	claims map[string]any  // nil: no token
	// hints are the tool's annotations as ToolHive's annotation cache
	// holds them from the server's last tools/list, which its Cedar
	// authorizer puts on the resource entity.
	hints map[string]any
}

// scopes returns the scope strings of r's token, as an MCP server reads
// them from a token whose "scope" claim holds them.
func (r request) scopes() []string {
	s, _ := r.claims["scope"].(string)
	return strings.Fields(s)
}

// arguments returns r's arguments decoded as the gateways decode them,
// with encoding/json; nil if it has none or they are not an object.
func (r request) arguments() map[string]any {
	if r.args == nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(r.args, &m) != nil {
		return nil
	}
	return m
}

// toolhive is a Cedar policy set loaded as ToolHive's Cedar authorizer
// loads its configuration, with requests made as it makes them.
//
// It follows github.com/stacklok/toolhive at commit e25de16cf (the newest
// stored, v0.44.0 and 33 commits; the module cannot be built here, as some
// of its dependencies are not served):
//
//   - pkg/authz/authorizers/config.go and cedar/core.go (Factory,
//     NewCedarAuthorizer): the configuration's version, type and cedar
//     options; each policy parsed on its own as "policy<i>";
//     entities_json as the entities;
//   - cedar/core.go (AuthorizeWithJWTClaims, preprocessClaims,
//     normalizeMultiValuedClaims, addMultiValuedClaimSets,
//     preprocessArguments, mergeContexts, authorizeToolCall,
//     authorizePromptGet, authorizeResourceRead, IsAuthorized): the
//     principal Client::<sub>; the claims as "claim_<name>", the
//     multi-valued ones also as the set "claimset_<name>"; the arguments
//     as "arg_<name>" (scalars) or "arg_<name>_present"; the resource's
//     attributes (the tool's annotations, then the arguments, then name,
//     operation and feature); the context (claims, then arguments); any
//     error of any policy is a denial;
//   - cedar/entity.go (CreateEntitiesForRequest, convertToCedarValue):
//     the entities of the principal, the action (with its operation) and
//     the resource, and how Go values become Cedar values;
//   - pkg/authz/middleware.go: tools/call, prompts/get and
//     resources/read (and resources/subscribe) are authorized so;
//     completion/complete is not authorized at all.
type toolhive struct {
	policies          *cedar.PolicySet
	entities          cedar.EntityMap
	multiValuedClaims []string
}

// loadToolHive loads a ToolHive authorization configuration.
func loadToolHive(t testing.TB, config []byte) *toolhive {
	t.Helper()
	var c struct {
		Version string `json:"version"`
		Type    string `json:"type"`
		Cedar   *struct {
			Policies          []string `json:"policies"`
			EntitiesJSON      string   `json:"entities_json"`
			MultiValuedClaims []string `json:"multi_valued_claims"`
		} `json:"cedar"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		t.Fatalf("ToolHive's configuration: %v", err)
	}
	if c.Version == "" || c.Type != "cedarv1" || c.Cedar == nil || len(c.Cedar.Policies) == 0 {
		t.Fatalf("ToolHive's configuration: version %q, type %q, cedar %v: want a version, cedarv1 and policies", c.Version, c.Type, c.Cedar)
	}
	th := &toolhive{policies: cedar.NewPolicySet(), entities: cedar.EntityMap{}, multiValuedClaims: c.Cedar.MultiValuedClaims}
	for i, text := range c.Cedar.Policies {
		var p cedar.Policy
		if err := p.UnmarshalCedar([]byte(text)); err != nil {
			t.Fatalf("policy %d: %v\n%s", i, err, text)
		}
		th.policies.Add(cedar.PolicyID(fmt.Sprintf("policy%d", i)), &p)
	}
	if c.Cedar.EntitiesJSON != "" {
		if err := json.Unmarshal([]byte(c.Cedar.EntitiesJSON), &th.entities); err != nil {
			t.Fatalf("entities_json: %v", err)
		}
	}
	return th
}

// allow decides r as ToolHive does. A request it does not authorize
// (completion/complete) is allowed, as ToolHive passes it through.
func (th *toolhive) allow(r request) (bool, error) {
	sub, _ := r.claims["sub"].(string)
	if sub == "" {
		return false, nil // ErrMissingPrincipal
	}
	claims := map[string]any{}
	for k, v := range r.claims {
		claims[k] = v
	}
	for _, name := range th.multiValuedClaims {
		switch v := r.claims[name].(type) {
		case string:
			// normalizeMultiValuedClaims keeps a string as it is.
		case []any:
			var parts []string
			for _, e := range v {
				if s, ok := e.(string); ok {
					parts = append(parts, s)
				}
			}
			claims[name] = strings.Join(parts, " ")
		}
	}
	processed := map[string]any{}
	for k, v := range claims {
		processed["claim_"+k] = v
	}
	for _, name := range th.multiValuedClaims {
		switch v := r.claims[name].(type) {
		case string:
			processed["claimset_"+name] = strings.Fields(v)
		case []any:
			var parts []string
			for _, e := range v {
				if s, ok := e.(string); ok {
					parts = append(parts, s)
				}
			}
			processed["claimset_"+name] = parts
		}
	}
	var args map[string]any
	if a := r.arguments(); a != nil {
		args = map[string]any{}
		for k, v := range a {
			switch v.(type) {
			case string, bool, float64:
				args["arg_"+k] = v
			default:
				args["arg_"+k+"_present"] = true
			}
		}
	}
	var action, resource string
	attrs := map[string]any{}
	switch r.method {
	case "tools/call":
		action, resource = "call_tool", "Tool::"+r.name
		merge(attrs, r.hints, args, map[string]any{"name": r.name, "operation": "call", "feature": "tool"})
	case "prompts/get":
		action, resource = "get_prompt", "Prompt::"+r.name
		merge(attrs, map[string]any{"name": r.name, "operation": "get", "feature": "prompt"}, args)
	case "resources/read", "resources/subscribe":
		action, resource = "read_resource", "Resource::"+r.uri
		merge(attrs, map[string]any{"name": r.uri, "uri": r.uri, "operation": "read", "feature": "resource"}, args)
	case "completion/complete":
		return true, nil
	default:
		return false, nil
	}
	typ, id, _ := strings.Cut(resource, "::")
	principal := cedar.NewEntityUID("Client", cedar.String(sub))
	act := cedar.NewEntityUID("Action", cedar.String(action))
	res := cedar.NewEntityUID(cedar.EntityType(typ), cedar.String(id))
	if _, ok := attrs["name"]; !ok {
		attrs["name"] = id
	}
	entities := cedar.EntityMap{}
	for k, v := range th.entities {
		entities[k] = v
	}
	entities[principal] = cedar.Entity{UID: principal, Parents: cedar.NewEntityUIDSet(), Attributes: record(processed), Tags: cedar.NewRecord(nil)}
	entities[act] = cedar.Entity{UID: act, Parents: cedar.NewEntityUIDSet(), Attributes: record(map[string]any{"operation": action}), Tags: cedar.NewRecord(nil)}
	entities[res] = cedar.Entity{UID: res, Parents: cedar.NewEntityUIDSet(), Attributes: record(attrs), Tags: cedar.NewRecord(nil)}
	ctxMap := map[string]any{}
	merge(ctxMap, processed, args)
	decision, diag := cedar.Authorize(th.policies, entities, cedar.Request{Principal: principal, Action: act, Resource: res, Context: record(ctxMap)})
	if len(diag.Errors) > 0 {
		return false, fmt.Errorf("the policies raised errors, which ToolHive takes for a denial: %v", diag.Errors)
	}
	return decision == cedar.Allow, nil
}

func merge(dst map[string]any, srcs ...map[string]any) {
	for _, src := range srcs {
		for k, v := range src {
			dst[k] = v
		}
	}
}

// record converts a map as ToolHive's convertMapToCedarRecord does.
func record(m map[string]any) cedar.Record {
	rm := cedar.RecordMap{}
	for k, v := range m {
		if cv := value(v); cv != nil {
			rm[cedar.String(k)] = cv
		}
	}
	return cedar.NewRecord(rm)
}

func value(v any) cedar.Value {
	switch v := v.(type) {
	case bool:
		return cedar.Boolean(v)
	case string:
		return cedar.String(v)
	case int:
		return cedar.Long(v)
	case float64:
		d, err := cedar.NewDecimalFromFloat(v)
		if err != nil {
			return nil
		}
		return d
	case []string:
		vals := make([]cedar.Value, len(v))
		for i, s := range v {
			vals[i] = cedar.String(s)
		}
		return cedar.NewSet(vals...)
	case []any:
		var vals []cedar.Value
		for _, e := range v {
			if cv := value(e); cv != nil {
				vals = append(vals, cv)
			}
		}
		return cedar.NewSet(vals...)
	case map[string]any:
		return record(v)
	}
	return nil
}

// opa is a Rego module prepared for evaluation by OPA.
type opa struct {
	query rego.PreparedEvalQuery
}

func loadOPA(t testing.TB, module []byte) *opa {
	t.Helper()
	q, err := rego.New(rego.Query("data."+policy.RegoPackage+".allow"), rego.Module("mcpeffect.rego", string(module))).PrepareForEval(context.Background())
	if err != nil {
		t.Fatalf("OPA: %v\n%s", err, module)
	}
	return &opa{q}
}

// allow decides r with the input document that policy.RegoInput
// documents.
func (o *opa) allow(r request) (bool, error) {
	input := map[string]any{"method": r.method, "scopes": r.scopes()}
	if r.claims == nil {
		input["scopes"] = []string{}
	}
	switch {
	case r.method == "resources/read" || r.method == "resources/subscribe":
		input["uri"] = r.uri
	case r.method == "completion/complete" && r.uri != "":
		input["uri"] = r.uri
	default:
		input["name"] = r.name
	}
	if r.args != nil {
		// As a gateway passes it on: the JSON as sent, decoded by OPA.
		var args any
		dec := json.NewDecoder(bytes.NewReader(r.args))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return false, err
		}
		input["arguments"] = args
	}
	rs, err := o.query.Eval(context.Background(), rego.EvalInput(input))
	if err != nil {
		return false, err
	}
	return rs.Allowed(), nil
}

// agentgateway is a list of agentgateway's mcpAuthorization rules,
// compiled by cel-go with the variables agentgateway gives them (jwt, the
// token's claims; mcp, with the tool, prompt or resource of the request)
// and the string functions it registers (split among them), and decided
// as its RuleSet decides: allowed if a rule is true, an error counting as
// false (crates/agentgateway/src/http/authorization.rs, RuleSets.validate
// and cel's Executor.eval_bool).
type agentgateway struct {
	programs []cel.Program
}

func loadAgentgateway(t testing.TB, rules []string) *agentgateway {
	t.Helper()
	env, err := cel.NewEnv(cel.Variable("jwt", cel.DynType), cel.Variable("mcp", cel.DynType), ext.Strings())
	if err != nil {
		t.Fatal(err)
	}
	ag := &agentgateway{}
	for _, rule := range rules {
		ast, iss := env.Compile(rule)
		if iss.Err() != nil {
			t.Fatalf("rule %s: %v", rule, iss.Err())
		}
		prg, err := env.Program(ast)
		if err != nil {
			t.Fatalf("rule %s: %v", rule, err)
		}
		ag.programs = append(ag.programs, prg)
	}
	return ag
}

// allow decides r as agentgateway does; it authorizes tools, prompts and
// resources only (crates/agentgateway/src/mcp/handler.rs), and gives the
// rules the tool's name, not its arguments (mcp/mod.rs, MCPInfo from a
// ResourceType).
func (ag *agentgateway) allow(r request) (bool, error) {
	var mcp map[string]any
	switch r.method {
	case "tools/call":
		mcp = map[string]any{"tool": map[string]any{"target": "server", "name": r.name}}
	case "prompts/get":
		mcp = map[string]any{"prompt": map[string]any{"target": "server", "name": r.name}}
	case "resources/read", "resources/subscribe":
		mcp = map[string]any{"resource": map[string]any{"target": "server", "name": r.uri}}
	default:
		return true, nil
	}
	vars := map[string]any{"mcp": mcp}
	if r.claims != nil {
		vars["jwt"] = r.claims
	}
	for _, p := range ag.programs {
		out, _, err := p.Eval(vars)
		if err != nil {
			continue
		}
		if b, ok := out.Value().(bool); ok && b {
			return true, nil
		}
	}
	return false, nil
}
