package mcpeffect

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// Resolvable reports whether the raw arguments of a call of the tool
// called name give the call's own effect, so that a host may ask for it
// before the call (the experimental tool-resolution extension, served by
// package [github.com/mcpeffect/mcpeffect/resolution]): true for a tool
// added with a rule (see [AddTool]) whose raw arguments decide, as
// [EffectRule.CallEffect] says, and false for every other tool and an
// unknown one.
func (r *Registry) Resolvable(name string) bool { return r.lookup(name).resolvable() }

// ErrNotResolvable is the error of [Registry.ResolveCall] for a tool that
// is not [Registry.Resolvable].
var ErrNotResolvable = errors.New("mcpeffect: the tool's calls cannot be resolved from their arguments")

// ResolveCall returns the effect of a call of the tool called name with
// the raw arguments args, as the decision of the call would compute it:
// a declared outcome, or the tool's worst case where the arguments leave
// it uncertain. It first validates args, a JSON object, against the
// tool's input schema, as tools/call does but without its defaults, and
// returns the error with which the schema refuses them; for a tool that
// is not [Registry.Resolvable], it returns [ErrNotResolvable].
func (r *Registry) ResolveCall(name string, args json.RawMessage) (Effect, error) {
	ent := r.lookup(name)
	if !ent.resolvable() {
		return 0, ErrNotResolvable
	}
	if err := validateInput(ent.schema, args); err != nil {
		return 0, err
	}
	return ent.rule.outcomeOfRaw(args).effect, nil
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
