package mcpeffect

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Hints are the four annotation hints of the MCP specification, all
// explicit: those of a tool, or of one call of it. It is the one shape of
// that fact in this module: what a tool advertises ([Effect.Hints]), what
// a tool with an [EffectRule] publishes of each outcome
// ([OutcomesMetaKey]), what the manifest lists and what tool resolution
// answers. Its JSON is that of the hints in [mcp.ToolAnnotations].
type Hints struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// DefaultHints returns the hints that the MCP specification tells hosts
// to assume of a tool without annotations, each missing hint's default:
// not read-only, destructive, not idempotent, open world. It is the worst
// case, which an invalid effect and a tool that is not classified get.
func DefaultHints() Hints {
	return Hints{ReadOnlyHint: false, DestructiveHint: true, IdempotentHint: false, OpenWorldHint: true}
}

// Hints returns the hints of effect e, as the effect table of the package
// documentation gives them. An invalid effect (see [Effect.Valid]) gets
// the worst case, as a tool that is not classified at all.
func (e Effect) Hints() Hints {
	if !e.Valid() {
		return DefaultHints()
	}
	read := e&Read != 0
	return Hints{
		ReadOnlyHint:    read,
		DestructiveHint: e&destructiveBit != 0,
		IdempotentHint:  read || e&idempotentBit != 0,
		OpenWorldHint:   e&OpenWorld != 0,
	}
}

// Annotations returns the annotations that a tool of effect e advertises,
// with all four hints explicit ([Effect.Hints]). Each call returns a new
// value that the caller may change.
func (e Effect) Annotations() *mcp.ToolAnnotations {
	return e.Hints().Annotations()
}

// Annotations returns h as go-sdk's annotations, each hint explicit
// (DestructiveHint and OpenWorldHint never nil). Each call returns a new
// value that the caller may change.
func (h Hints) Annotations() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    h.ReadOnlyHint,
		DestructiveHint: ptr(h.DestructiveHint),
		IdempotentHint:  h.IdempotentHint,
		OpenWorldHint:   ptr(h.OpenWorldHint),
	}
}

// Effect returns the effect that h amounts to: a [Read] for read-only
// hints (the specification reads destructiveHint and idempotentHint only
// for writes), else a [Write], [Destructive] and [Idempotent] as h says;
// [OpenWorld] as h says. It is the inverse of [Effect.Hints], and always
// a valid effect.
func (h Hints) Effect() Effect {
	var e Effect
	if h.ReadOnlyHint {
		e = Read
	} else {
		e = Write
		if h.DestructiveHint {
			e |= Destructive
		}
		if h.IdempotentHint {
			e |= Idempotent
		}
	}
	if h.OpenWorldHint {
		e |= OpenWorld
	}
	return e
}

// Within reports whether h, the hints of one call, respect the
// conservative bound of the hints bound that its tool advertises, as
// [Effect.Within] orders the effects they amount to: the bound of the
// tool-resolution extension, for the server that resolves and the host
// that checks.
func (h Hints) Within(bound Hints) bool {
	return h.Effect().Within(bound.Effect())
}

func ptr[T any](v T) *T { return &v }

// conflict returns an error naming the first hint that a tool's own
// annotations set and that differs from what its effect derives.
func conflict(got *mcp.ToolAnnotations, want Hints) error {
	switch {
	case got.ReadOnlyHint && !want.ReadOnlyHint:
		return fmt.Errorf("its annotations say readOnlyHint: true")
	case got.IdempotentHint && !want.IdempotentHint:
		return fmt.Errorf("its annotations say idempotentHint: true")
	case got.DestructiveHint != nil && *got.DestructiveHint != want.DestructiveHint:
		return fmt.Errorf("its annotations say destructiveHint: %t", *got.DestructiveHint)
	case got.OpenWorldHint != nil && *got.OpenWorldHint != want.OpenWorldHint:
		return fmt.Errorf("its annotations say openWorldHint: %t", *got.OpenWorldHint)
	}
	return nil
}
