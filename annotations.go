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

// worstHints are the hints that the MCP specification tells hosts to
// assume of a tool without annotations: not read-only, destructive, not
// idempotent, open world.
var worstHints = Hints{ReadOnlyHint: false, DestructiveHint: true, IdempotentHint: false, OpenWorldHint: true}

// Hints returns the hints of effect e, as the effect table of the package
// documentation gives them. An invalid effect (see [Effect.Valid]) gets
// the worst case, as a tool that is not classified at all.
func (e Effect) Hints() Hints {
	if !e.Valid() {
		return worstHints
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

// Within reports whether h, the hints of one call, respect the
// conservative bound of the hints bound that its tool advertises: what
// hosts were told to assume is never less careful than what the call
// does. A call may be more careful than its tool (a read of a tool that
// may write), never less: not a write of a read-only tool, not
// destructive where the tool is not (for a tool that is not read-only),
// not a non-idempotent write of an idempotent tool, not open world where
// the tool is closed. It is the bound of the tool-resolution extension,
// written once here, for the server that resolves and the host that
// checks.
func (h Hints) Within(bound Hints) bool {
	switch {
	case bound.ReadOnlyHint && !h.ReadOnlyHint:
		return false
	case !bound.ReadOnlyHint && !bound.DestructiveHint && !h.ReadOnlyHint && h.DestructiveHint:
		return false
	case bound.IdempotentHint && !h.ReadOnlyHint && !h.IdempotentHint:
		return false
	case !bound.OpenWorldHint && h.OpenWorldHint:
		return false
	}
	return true
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
