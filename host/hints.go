package host

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Declared are the four annotation hints of a tool as a server declared
// them, seen from the host's side. A nil field is a hint the server left
// out, which [mcpeffect.Hints] cannot say.
type Declared struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
	Idempotent  *bool `json:"idempotentHint,omitempty"`
	OpenWorld   *bool `json:"openWorldHint,omitempty"`
}

// DeclaredOf returns the hints of annotations decoded by go-sdk. A nil a
// has no hints. go-sdk decodes readOnlyHint and idempotentHint into plain bools, so
// a server that left them out cannot be told from one that sent false;
// since false is also their default, the effect is the same. To tell a
// missing hint from a false one, read the raw JSON with [ParseDeclared].
func DeclaredOf(a *mcp.ToolAnnotations) Declared {
	if a == nil {
		return Declared{}
	}
	h := Declared{ReadOnly: ptr(a.ReadOnlyHint), Idempotent: ptr(a.IdempotentHint)}
	if a.DestructiveHint != nil {
		h.Destructive = ptr(*a.DestructiveHint)
	}
	if a.OpenWorldHint != nil {
		h.OpenWorld = ptr(*a.OpenWorldHint)
	}
	return h
}

// ParseDeclared reads the hints from the JSON of a tool's "annotations"
// object as a server sent it. Empty input or null is a tool with no
// annotations: every hint missing. A hint that is null counts as missing;
// one that is neither a boolean nor null, or input that is not an object,
// is an error naming it. Other members (such as title) are ignored.
func ParseDeclared(raw []byte) (Declared, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return Declared{}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return Declared{}, fmt.Errorf("mcpeffect: annotations are not a JSON object: %w", err)
	}
	var h Declared
	for _, f := range []struct {
		key string
		dst **bool
	}{
		{"readOnlyHint", &h.ReadOnly},
		{"destructiveHint", &h.Destructive},
		{"idempotentHint", &h.Idempotent},
		{"openWorldHint", &h.OpenWorld},
	} {
		v, ok := obj[f.key]
		if !ok || bytes.Equal(v, []byte("null")) {
			continue
		}
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return Declared{}, fmt.Errorf("mcpeffect: annotation %s is %s, not a boolean", f.key, v)
		}
		*f.dst = &b
	}
	return h, nil
}

// Assumed returns h with each missing hint set to the value the
// specification tells hosts to assume ([mcpeffect.DefaultHints]). Every
// field of the result is non-nil.
func (h Declared) Assumed() Declared {
	x := h.Explicit()
	return Declared{ReadOnly: ptr(x.ReadOnlyHint), Destructive: ptr(x.DestructiveHint), Idempotent: ptr(x.IdempotentHint), OpenWorld: ptr(x.OpenWorldHint)}
}

// Explicit returns h as [mcpeffect.Hints], each missing hint set to the
// value the specification tells hosts to assume
// ([mcpeffect.DefaultHints]): the form in which the library writes and
// compares hints, such as the conservative bound of
// [mcpeffect.Hints.Within].
func (h Declared) Explicit() mcpeffect.Hints {
	def := mcpeffect.DefaultHints()
	return mcpeffect.Hints{
		ReadOnlyHint:    valueOr(h.ReadOnly, def.ReadOnlyHint),
		DestructiveHint: valueOr(h.Destructive, def.DestructiveHint),
		IdempotentHint:  valueOr(h.Idempotent, def.IdempotentHint),
		OpenWorldHint:   valueOr(h.OpenWorld, def.OpenWorldHint),
	}
}

func valueOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// Contradictory reports whether h declares a tool both read-only and
// destructive.
func (h Declared) Contradictory() bool {
	return valueOr(h.ReadOnly, false) && valueOr(h.Destructive, false)
}

// Effect returns the effect that the hints amount to, missing hints taking
// their worst-case defaults: no hints at all is Write|Destructive|OpenWorld.
//
// A read-only tool is a [Read] whatever its destructiveHint says, as the
// specification reads destructiveHint only for writes, except that an
// explicit destructiveHint of true contradicts readOnlyHint, and a host
// cannot know which of the two is wrong: the effect is then the write.
// The result is always a valid Effect.
func (h Declared) Effect() mcpeffect.Effect {
	x := h.Explicit()
	if h.Contradictory() {
		x.ReadOnlyHint = false
	}
	return x.Effect()
}

// EffectOf returns the effect that annotations received from a server
// amount to: DeclaredOf(a).Effect(). A nil a, a tool without annotations, is
// the worst case, Write|Destructive|OpenWorld.
func EffectOf(a *mcp.ToolAnnotations) mcpeffect.Effect {
	return DeclaredOf(a).Effect()
}

func ptr[T any](v T) *T { return &v }
