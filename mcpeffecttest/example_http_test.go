package mcpeffecttest_test

import (
	"context"
	"errors"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CheckClient over Streamable HTTP, where a caller is its bearer token:
// connect gives each session that CheckClient opens a token of the scope
// it asks for, which SessionScope reads from ctx. Here the server's
// purge_notes is added with go-sdk alone and hints written by hand that
// claim it only reads, while its registry says it destroys: CheckClient
// reports the hints, and proves over HTTP that every scope below full is
// refused each write it may not make.
func ExampleCheckClient_http() {
	t := &printer{} // in a test, the test's own t

	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, nil)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "get_note"}, mcpeffect.Read, noop)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "add_note"}, mcpeffect.Write, noop)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_note"}, mcpeffect.Destructive|mcpeffect.Idempotent, noop)
	mcp.AddTool(server, &mcp.Tool{Name: "purge_notes", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, noop)
	if err := r.Add("purge_notes", mcpeffect.Destructive); err != nil {
		log.Fatal(err)
	}
	server.AddReceivingMiddleware(r.Middleware(nil))

	// A token of each scope, and go-sdk's bearer check in front of the
	// server, as in production.
	tokens := map[mcpeffect.Scope]string{mcpeffect.ReadOnly: "read-token", mcpeffect.NonDestructive: "write-token", mcpeffect.Full: "full-token"}
	verify := func(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
		for scope, secret := range tokens {
			if token == secret {
				return &auth.TokenInfo{Scopes: []string{mcpeffect.ScopeNames{}.Name(scope)}, Expiration: time.Now().Add(time.Hour)}, nil
			}
		}
		return nil, auth.ErrInvalidToken
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(handler))
	defer ts.Close()

	connect := func(ctx context.Context) (*mcp.ClientSession, error) {
		scope, ok := mcpeffecttest.SessionScope(ctx)
		if !ok {
			return nil, errors.New("no scope to connect with")
		}
		transport := &mcp.StreamableClientTransport{
			Endpoint:   ts.URL,
			HTTPClient: &http.Client{Transport: bearer(tokens[scope])},
		}
		return mcp.NewClient(&mcp.Implementation{Name: "check", Version: "v1"}, nil).Connect(ctx, transport, nil)
	}
	mcpeffecttest.CheckClient(t, connect, r)
	// Output:
	// tool "purge_notes", classified write|destructive: readOnlyHint is true, want false
	// tool "purge_notes", classified write|destructive: destructiveHint is missing (hosts assume true), want true
	// tool "purge_notes", classified write|destructive: openWorldHint is missing (hosts assume true), want false
}

func noop(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return nil, nil, nil
}

// bearer sends its token with every request.
type bearer string

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(req)
}
