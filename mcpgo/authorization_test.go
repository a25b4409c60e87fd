package mcpgo_test

import (
	"context"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAuthorizationDenial checks that a refusal of the adapter carries
// the structured denial of SEP-2643, as the go-sdk integration's does,
// over stdio and HTTP, and that the server advertises the extension.
func TestAuthorizationDenial(t *testing.T) {
	ts := newTestServer(t, nil, false)
	for via, cs := range map[string]*sdk.ClientSession{
		"stdio": connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly), ts.s, nil),
		"http":  connectHTTP(t, serveHTTP(t, ts.s, ts.r, nil).URL+"/mcp", "read-token", nil),
	} {
		if _, ok := cs.InitializeResult().Capabilities.Extensions[mcpeffect.AuthorizationDenialsExtension]; !ok {
			t.Errorf("%s: capabilities %+v do not advertise the extension", via, cs.InitializeResult().Capabilities)
		}
		_, err := callTool(cs, "delete_task")
		d := denied(t, err, "delete_task")
		a := d.Authorization
		if a == nil || a.Reason != "insufficient_authorization" || a.Remediation != mcpeffect.RemediationAvailable || a.AuthorizationContextID == "" ||
			len(a.RemediationHints) != 1 || a.RemediationHints[0] != (mcpeffect.RemediationHint{Type: mcpeffect.ScopeHint, Scope: "tools:destructive"}) {
			t.Errorf("%s: the refusal carries %+v, want remediation available by the scope tools:destructive", via, a)
		}
	}
}
