// Package effectproof is the one engine that judges whether a tool's
// effect is true: the state before and after each call as records with
// fields, the differences between two states, and the verdicts a tool's
// classification allows (read, non-destructive write, destructive write,
// idempotent write, and what a classification claims that no call
// showed); and whether the undo a tool publishes (SEP-3172) restores the
// state a call of it changed ([ProveUndo]).
//
// Both mcpeffecttest.Verify, for a Go server in its own tests, and
// mcpeffect verify, for any server from outside, judge through it, so
// that the two cannot disagree: the same state and the same calls get the
// same verdict, in the same words.
package effectproof
