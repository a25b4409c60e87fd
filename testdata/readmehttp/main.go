package main

import (
	"context"
	"crypto/subtle"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

type task struct {
	ID string `json:"id" jsonschema:"the task"`
}

func getTask(ctx context.Context, req *mcp.CallToolRequest, in task) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "task " + in.ID}}}, nil, nil
}

func deleteTask(ctx context.Context, req *mcp.CallToolRequest, in task) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted " + in.ID}}}, nil, nil
}

// tokens maps each bearer token to its scope strings. A real server asks
// its authorization server instead; here, two tokens come from the
// environment.
var tokens = map[string][]string{
	os.Getenv("READ_TOKEN"): {"tools:read"},
	os.Getenv("FULL_TOKEN"): {"tools:read", "tools:write", "tools:destructive"},
}

// verify is the auth.TokenVerifier: it finds the token's scopes, comparing
// in constant time.
func verify(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
	for secret, scopes := range tokens {
		if secret != "" && subtle.ConstantTimeCompare([]byte(token), []byte(secret)) == 1 {
			return &auth.TokenInfo{Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
		}
	}
	return nil, auth.ErrInvalidToken
}

func main() {
	addr := flag.String("http", "localhost:8080", "serve at `ADDR`")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	metadata := base + "/.well-known/oauth-protected-resource"

	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "get_task", Description: "Get a task."}, mcpeffect.Read, getTask)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_task", Description: "Delete a task."}, mcpeffect.Destructive|mcpeffect.Idempotent, deleteTask)
	// One configuration for the check that counts and the early answer
	// over HTTP: here the defaults, the scope of each call's token as
	// auth.RequireBearerToken puts it in the request.
	enforcer := r.Enforcer(nil)
	server.AddReceivingMiddleware(enforcer.Middleware())

	mux := http.NewServeMux()
	// What a client reads to learn which scopes exist (RFC 9728).
	mux.Handle("/.well-known/oauth-protected-resource", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               base + "/mcp",
		ScopesSupported:        mcpeffect.ScopeNames{}.Strings(),
		BearerMethodsSupported: []string{"header"},
	}))
	// A request without a valid token gets 401; a call its scope does not
	// allow gets 403 and the scope it needs (the step-up challenge), so
	// that a client can ask for it.
	bearer := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metadata})
	challenge := enforcer.Challenge(&mcpeffect.ChallengeOptions{ResourceMetadataURL: metadata})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux.Handle("/mcp", bearer(challenge(handler)))

	log.Printf("serving MCP at %s/mcp", base)
	log.Fatal(http.Serve(ln, mux))
}
