package mcpeffect

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect/internal/hook"
)

// The experimental tool-resolution extension is served by package
// [github.com/mcpeffect/mcpeffect/resolution], from what the registry
// keeps of the tools whose raw arguments give the effect of their calls.
func init() {
	hook.Resolvable = func(r any, name string) bool {
		return r.(*Registry).lookup(name).resolvable()
	}
	hook.Resolve = func(r any, name string, args json.RawMessage) (effect, worst uint8, resolvable bool, err error) {
		ent := r.(*Registry).lookup(name)
		if !ent.resolvable() {
			return 0, 0, false, nil
		}
		if err := validateInput(ent.schema, args); err != nil {
			return 0, 0, true, err
		}
		e, _ := ent.rule.CallEffect(args)
		return uint8(e), uint8(ent.effect), true, nil
	}
}

// resolvable reports whether tool resolution can compute the effect of
// the calls of a tool from their raw arguments.
func (e *entry) resolvable() bool { return e.rule != nil && e.raw }

// validateInput validates args, a JSON object, against schema, if there
// is one. Unlike go-sdk on tools/call, it applies no defaults: resolution
// takes the arguments as they are.
func validateInput(schema *jsonschema.Resolved, args json.RawMessage) error {
	if schema == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return err
	}
	return schema.Validate(v)
}

// resolvedInputSchema returns the input schema of a tool, for
// tools/resolve to validate arguments as tools/call does: the tool's own
// (schema), or else the one go-sdk infers from the handler's input type
// in. It panics on a schema that cannot be resolved, as go-sdk does.
func resolvedInputSchema(toolName string, schema any, in reflect.Type) *jsonschema.Resolved {
	var s *jsonschema.Schema
	switch v := schema.(type) {
	case nil:
		if in == nil {
			return nil
		}
		if in.Kind() == reflect.Pointer {
			in = in.Elem()
		}
		if in == reflect.TypeFor[any]() {
			return nil
		}
		var err error
		if s, err = jsonschema.ForType(in, &jsonschema.ForOptions{}); err != nil {
			panic(fmt.Sprintf("mcpeffect: tool %q: input schema: %v", toolName, err))
		}
	case *jsonschema.Schema:
		s = v
	default:
		raw, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(raw, &s)
		}
		if err != nil {
			panic(fmt.Sprintf("mcpeffect: tool %q: input schema: %v", toolName, err))
		}
	}
	if s == nil {
		return nil
	}
	resolved, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("mcpeffect: tool %q: input schema: %v", toolName, err))
	}
	return resolved
}
