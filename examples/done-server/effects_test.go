package main

import (
	"testing"

	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
)

// TestEffects holds the whole server against its registry with
// mcpeffecttest: every tool classified, its hints derived from its effect,
// and every write refused to a read-only connection before its handler.
func TestEffects(t *testing.T) {
	e := newEnv(t)
	mcpeffecttest.Check(t, e.server, e.registry)
}
