// Package testing holds, in its subdirectories, what the module's tests
// and benchmarks run and nothing else: the conformance server and suite,
// the end-to-end server, the helpers that run node and the examples, and
// percall, the command that measures a call's CPU on each SDK. The production
// internals (effectproof, testhook) stand beside it, under internal/.
package testing
