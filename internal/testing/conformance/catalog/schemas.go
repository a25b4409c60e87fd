package catalog

// The schemas are part of the test: the suite checks that each reaches the
// client as written, so both servers send them as this text.

// Schema202012 is the input schema of json_schema_2020_12_tool, which uses
// the keywords of JSON Schema 2020-12.
const Schema202012 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`

// RegionSchema is the input schema of test_x_mcp_header, whose region
// argument a client mirrors into the Mcp-Param-Region header.
const RegionSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","description":"mirrored into Mcp-Param-Region","x-mcp-header":"Region"},` +
	`"level":{"type":"integer","description":"not mirrored"}}}`

// DefaultsSchema is the form of test_elicitation_sep1034_defaults.
const DefaultsSchema = `{"type": "object", "properties": {
	"name": {"type": "string", "description": "User name", "default": "John Doe"},
	"age": {"type": "integer", "description": "User age", "default": 30},
	"score": {"type": "number", "description": "User score", "default": 95.5},
	"status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
	"verified": {"type": "boolean", "description": "Verification status", "default": true}
}}`

// EnumsSchema is the form of test_elicitation_sep1330_enums.
const EnumsSchema = `{"type": "object", "properties": {
	"untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
	"titledSingle": {"type": "string", "oneOf": [
		{"const": "value1", "title": "First Option"},
		{"const": "value2", "title": "Second Option"},
		{"const": "value3", "title": "Third Option"}]},
	"legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
	"untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
	"titledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
		{"const": "value1", "title": "First Option"},
		{"const": "value2", "title": "Second Option"},
		{"const": "value3", "title": "Third Option"}]}}
}}`
