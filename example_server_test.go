package mcpeffect_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type noteArgs struct {
	ID string `json:"id" jsonschema:"the note"`
}

func deleteNote(ctx context.Context, req *mcp.CallToolRequest, args noteArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted " + args.ID}}}, nil, nil
}

func getNote(ctx context.Context, req *mcp.CallToolRequest, args noteArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "note " + args.ID}}}, nil, nil
}

// A server whose tools are classified once, with the classification
// enforced on every call. Here the client connects in-process with a
// read-only scope, as a stdio server started read-only would serve it.
func ExampleAddTool() {
	ctx := context.Background()
	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, nil)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "get_note", Description: "Read a note."}, mcpeffect.Read, getNote)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_note", Description: "Delete a note."}, mcpeffect.Destructive|mcpeffect.Idempotent, deleteNote)
	server.AddReceivingMiddleware(r.Middleware(nil))

	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	if _, err := server.Connect(mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), serverTransport, nil); err != nil {
		log.Fatal(err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1"}, nil).Connect(ctx, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools.Tools {
		fmt.Printf("%s: readOnlyHint=%t destructiveHint=%t\n", t.Name, t.Annotations.ReadOnlyHint, *t.Annotations.DestructiveHint)
	}

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "get_note", Arguments: noteArgs{ID: "n1"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)

	_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "delete_note", Arguments: noteArgs{ID: "n1"}})
	if d, ok := mcpeffect.AsDeniedError(err); ok {
		fmt.Printf("refused: %s needs %s (%s), caller has %s\n", d.Tool, d.Required, d.RequiredScopeName, d.Granted)
	}
	// Output:
	// delete_note: readOnlyHint=false destructiveHint=true
	// get_note: readOnlyHint=true destructiveHint=false
	// note n1
	// refused: delete_note needs full (tools:destructive), caller has read-only
}

// The step-up challenge goes between the bearer token check and the
// Streamable HTTP handler.
// Both come from one Enforcer, so that they share one configuration.
func ExampleEnforcer_Challenge() {
	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, nil)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_note"}, mcpeffect.Destructive|mcpeffect.Idempotent, deleteNote)
	enforcer := r.Enforcer(nil)
	server.AddReceivingMiddleware(enforcer.Middleware()) // the check that counts

	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	challenge := enforcer.Challenge(&mcpeffect.ChallengeOptions{
		ResourceMetadataURL: "https://notes.example/.well-known/oauth-protected-resource",
	})
	// A verifier that knows one token, allowed to write but not to delete.
	verify := func(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
		if token != "secret-writer" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: []string{"tools:write"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	handler := auth.RequireBearerToken(verify, nil)(challenge(streamable))

	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_note","arguments":{"id":"n1"}}}`))
	req.Header.Set("Authorization", "Bearer secret-writer")
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	fmt.Println(rec.Header().Get("WWW-Authenticate"))
	// Output:
	// 403
	// Bearer error="insufficient_scope", scope="tools:write tools:destructive", resource_metadata="https://notes.example/.well-known/oauth-protected-resource", error_description="a wider scope is needed to call delete_note"
}

// A server built on another SDK decides each operation with the same
// Enforcer that go-sdk's middleware and the HTTP challenge use: from the
// operation's method, name and raw arguments, and the scope its caller
// holds. A refusal is the same DeniedError, in the three parts of a
// JSON-RPC error that any SDK can send.
func ExampleEnforcer_Decide() {
	r := mcpeffect.NewRegistry()
	r.Add("get_note", mcpeffect.Read)
	r.Add("delete_note", mcpeffect.Destructive|mcpeffect.Idempotent)
	enforcer := r.Enforcer(nil)

	caller := enforcer.TokenCaller([]string{"tools:write"}) // the scopes of the caller's token
	for _, tool := range []string{"get_note", "delete_note"} {
		d := enforcer.Decide(context.Background(), mcpeffect.Operation{Method: "tools/call", Name: tool, Arguments: []byte(`{"id":"n1"}`)}, caller)
		if d.Denied != nil {
			code, message, _ := d.Denied.JSONRPCError()
			fmt.Println(tool, "refused:", code, message)
			continue
		}
		fmt.Println(tool, "allowed, the handler runs with scope", mcpeffect.CallerScopeFromContext(mcpeffect.WithDecision(context.Background(), d)))
	}
	// Output:
	// get_note allowed, the handler runs with scope non-destructive
	// delete_note refused: -32050 mcpeffect: tool "delete_note" is refused: it needs the full scope ("tools:destructive"), and the caller has only non-destructive
}
