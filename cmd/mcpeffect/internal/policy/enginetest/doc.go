// Package enginetest holds the tests that load the policies mcpeffect
// policy writes into the engines that run them in production: cedar-go
// (the engine of ToolHive's Cedar authorizer), OPA and cel-go (the
// language of agentgateway's rules), and prove that for every tool, scope
// and outcome of Done and of the conformance catalog each engine decides
// as mcpeffect.Enforcer.Decide does. It is a module of its own so that no
// user of mcpeffect depends on those engines.
package enginetest
