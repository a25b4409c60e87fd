package effectproof

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// MarshalArgs returns args as a JSON object; nil and null are {}.
func MarshalArgs(args any) (json.RawMessage, error) {
	if args == nil {
		return json.RawMessage("{}"), nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case string(raw) == "null":
		return json.RawMessage("{}"), nil
	case len(raw) == 0 || raw[0] != '{':
		return nil, fmt.Errorf("they must marshal to a JSON object, not %s", Shown(string(raw)))
	}
	return raw, nil
}

// ResolveSchema resolves a tool's input schema, anything that marshals to
// a JSON Schema; nil is a tool without one, and gives nil.
func ResolveSchema(schema any) (*jsonschema.Resolved, error) {
	if schema == nil {
		return nil, nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	if string(raw) == "null" {
		return nil, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// ValidateArgs validates raw, a JSON object, against schema as go-sdk does
// before a handler runs: the schema's defaults applied first. A nil schema
// accepts anything.
func ValidateArgs(schema *jsonschema.Resolved, raw json.RawMessage) (err error) {
	if schema == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	defer func() {
		// ApplyDefaults panics on a default it cannot assign; the server
		// will meet the same default and say so.
		if recover() != nil {
			err = nil
		}
	}()
	if err := schema.ApplyDefaults(&v); err != nil {
		return err
	}
	return schema.Validate(&v)
}
