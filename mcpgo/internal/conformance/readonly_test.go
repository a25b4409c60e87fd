package main

import (
	"net/http/httptest"
	"testing"

	"github.com/mcpeffect/mcpeffect/internal/testing/conformance/suite"
)

// TestReadOnlyToken calls every tool, resource and prompt of the mcp-go
// conformance server with a read-only token, through go-sdk's client over
// Streamable HTTP: exactly those whose effect or scope needs more, as the
// catalog says, are refused, with the code and data of a DeniedError, and
// by the HTTP challenge too; everything else works, and the full scope
// runs what read-only could not. The checks are those of the go-sdk
// conformance server (suite.ReadOnlyCalls).
func TestReadOnlyToken(t *testing.T) {
	c := newConformance()
	ts := httptest.NewServer(c.handler(map[string][]string{"read-secret": {"tools:read"}, "full-secret": {"tools:destructive"}}))
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	cs := suite.Connect(t, url, "read-secret")
	suite.ReadOnlyCalls(t, cs, c.reg, url, "read-secret", noRoots)
	suite.FullCalls(t, suite.Connect(t, url, "full-secret"))
}

// noRoots are the tools that ask the client for its roots within the call
// (SEP-2322), which go-sdk v1.8.0's client cannot answer when mcp-go
// asks: mcp-go writes the roots/list input request without params
// (InputRequest.MarshalJSON in mcp/mrtr.go), which the protocol allows,
// and go-sdk's client (InputRequestMap.UnmarshalJSON in mcp/protocol.go)
// decodes the absent params as JSON, and fails: "unexpected end of JSON
// input".
// The conformance suite's own client answers them, and they pass there.
var noRoots = map[string]string{
	"test_input_required_result_list_roots":      rootsReason,
	"test_input_required_result_multiple_inputs": rootsReason,
	"test_input_required_result_capabilities":    rootsReason,
}

const rootsReason = "go-sdk's client cannot decode mcp-go's roots/list input request, which has no params"
