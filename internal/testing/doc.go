// Package testing holds, in its subdirectories, what the module's tests
// run and nothing else: the conformance server and suite, the end-to-end
// server, and the helpers that run node and the examples. The production
// internals (effectproof, testhook) stand beside it, under internal/.
package testing
