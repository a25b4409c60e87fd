// The http server is the stdio example's list of tasks served over
// Streamable HTTP, where each caller's scope is its bearer token's: go-sdk's
// auth package checks the token, mcpeffect refuses each call the token's
// scope does not allow, and answers it early with the step-up challenge
// of the MCP authorization specification (403, and the scope to ask for),
// so that an OAuth client can ask for more. Its protected resource
// metadata (RFC 9728) tells clients which scopes exist.
//
// Each token comes from the environment; any of the three may be left out:
//
//	READ_TOKEN=r WRITE_TOKEN=w FULL_TOKEN=f go run ./examples/http
package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// maxTasks bounds the list, so that a caller who may only add cannot use
// up the server's memory.
const maxTasks = 1000

// tasks is the server's data: each task's title, by id.
type tasks struct {
	mu     sync.Mutex
	last   int
	titles map[string]string
}

type taskID struct {
	ID string `json:"id" jsonschema:"the task's id"`
}

type newTask struct {
	Title string `json:"title" jsonschema:"what is to be done"`
}

type task struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

func (ts *tasks) get(ctx context.Context, req *mcp.CallToolRequest, in taskID) (*mcp.CallToolResult, task, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	title, ok := ts.titles[in.ID]
	if !ok {
		return nil, task{}, fmt.Errorf("no task %q", in.ID)
	}
	return nil, task{ID: in.ID, Title: title}, nil
}

func (ts *tasks) add(ctx context.Context, req *mcp.CallToolRequest, in newTask) (*mcp.CallToolResult, task, error) {
	if in.Title == "" || len(in.Title) > 200 {
		return nil, task{}, errors.New("a title has 1 to 200 bytes")
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.titles) >= maxTasks {
		return nil, task{}, fmt.Errorf("the list is full (%d tasks)", maxTasks)
	}
	ts.last++
	id := strconv.Itoa(ts.last)
	ts.titles[id] = in.Title
	return nil, task{ID: id, Title: in.Title}, nil
}

func (ts *tasks) remove(ctx context.Context, req *mcp.CallToolRequest, in taskID) (*mcp.CallToolResult, any, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.titles, in.ID)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted " + in.ID}}}, nil, nil
}

// tokensFromEnv maps each token of the environment to the scope string of
// its level; a token of a level holds the levels below. A real server
// asks its authorization server instead.
func tokensFromEnv() (map[string]string, error) {
	tokens := map[string]string{}
	for _, t := range []struct {
		env   string
		scope mcpeffect.Scope
	}{{"READ_TOKEN", mcpeffect.ReadOnly}, {"WRITE_TOKEN", mcpeffect.NonDestructive}, {"FULL_TOKEN", mcpeffect.Full}} {
		secret := os.Getenv(t.env)
		if secret == "" {
			continue
		}
		if _, dup := tokens[secret]; dup {
			return nil, fmt.Errorf("%s is the same as another token", t.env)
		}
		tokens[secret] = mcpeffect.ScopeNames{}.Name(t.scope)
	}
	if len(tokens) == 0 {
		return nil, errors.New("no tokens: set READ_TOKEN, WRITE_TOKEN or FULL_TOKEN")
	}
	return tokens, nil
}

func main() {
	addr := flag.String("http", "localhost:8080", "serve at `ADDR`")
	public := flag.String("url", "", "the server's public `URL`, for its metadata (default http://ADDR)")
	flag.Parse()
	tokens, err := tokensFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	// verify is go-sdk's auth.TokenVerifier: it finds the token's scope,
	// comparing in constant time.
	verify := func(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
		for secret, scope := range tokens {
			if subtle.ConstantTimeCompare([]byte(token), []byte(secret)) == 1 {
				return &auth.TokenInfo{Scopes: []string{scope}, Expiration: time.Now().Add(time.Hour)}, nil
			}
		}
		return nil, auth.ErrInvalidToken
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	base := strings.TrimSuffix(*public, "/")
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	metadata := base + "/.well-known/oauth-protected-resource"

	ts := &tasks{titles: map[string]string{}}
	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "get_task", Description: "Get a task."}, mcpeffect.Read, ts.get)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "add_task", Description: "Add a task."}, mcpeffect.Write, ts.add)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_task", Description: "Delete a task."}, mcpeffect.Destructive|mcpeffect.Idempotent, ts.remove)

	// One Enforcer gives both the check that counts, the middleware, and
	// the early answer over HTTP, so that they share one configuration:
	// here the defaults, the scope of each request's token.
	enforcer := r.Enforcer(nil)
	server.AddReceivingMiddleware(enforcer.Middleware())

	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               base + "/mcp",
		ScopesSupported:        mcpeffect.ScopeNames{}.Strings(),
		BearerMethodsSupported: []string{"header"},
	}))
	// No valid token: 401, and where the metadata is. A valid token whose
	// scope does not allow the call: 403, and the scope it needs.
	bearer := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metadata})
	challenge := enforcer.Challenge(&mcpeffect.ChallengeOptions{ResourceMetadataURL: metadata})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux.Handle("/mcp", bearer(challenge(handler)))

	log.Printf("serving MCP at %s/mcp", base)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}
