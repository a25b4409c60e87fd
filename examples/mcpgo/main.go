// The mcpgo server is the http example's list of tasks built on
// github.com/mark3labs/mcp-go, through mcpeffect's adapter: the same one
// effect per tool, from which both the hints and the check of every call
// are derived, the same bearer tokens (go-sdk's auth package, in front of
// mcp-go's Streamable HTTP server), the same step-up challenge and the
// same protected resource metadata.
//
//	READ_TOKEN=r WRITE_TOKEN=w FULL_TOKEN=f go run .
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

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	"github.com/modelcontextprotocol/go-sdk/auth"
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

type task struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

func (ts *tasks) get(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id := req.GetString("id", "")
	ts.mu.Lock()
	defer ts.mu.Unlock()
	title, ok := ts.titles[id]
	if !ok {
		return mcp.NewToolResultError(fmt.Sprintf("no task %q", id)), nil
	}
	return mcp.NewToolResultStructured(task{id, title}, id+": "+title), nil
}

func (ts *tasks) add(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	title := req.GetString("title", "")
	if title == "" || len(title) > 200 {
		return mcp.NewToolResultError("a title has 1 to 200 bytes"), nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.titles) >= maxTasks {
		return mcp.NewToolResultError(fmt.Sprintf("the list is full (%d tasks)", maxTasks)), nil
	}
	ts.last++
	id := strconv.Itoa(ts.last)
	ts.titles[id] = title
	return mcp.NewToolResultStructured(task{id, title}, id+": "+title), nil
}

func (ts *tasks) remove(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id := req.GetString("id", "")
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.titles, id)
	return mcp.NewToolResultText("deleted " + id), nil
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

	// One Options for both the check of every call (ServerOptions) and
	// the early answer over HTTP (Handler), so that they agree.
	opts := &mcpgo.Options{Challenge: &mcpeffect.ChallengeOptions{ResourceMetadataURL: metadata}}
	r := mcpeffect.NewRegistry()
	s := server.NewMCPServer("tasks", "v1", mcpgo.ServerOptions(r, opts)...)

	ts := &tasks{titles: map[string]string{}}
	mcpgo.AddTool(s, r, mcp.NewTool("get_task", mcp.WithDescription("Get a task."), mcp.WithString("id", mcp.Required())), mcpeffect.Read, ts.get)
	mcpgo.AddTool(s, r, mcp.NewTool("add_task", mcp.WithDescription("Add a task."), mcp.WithString("title", mcp.Required())), mcpeffect.Write, ts.add)
	mcpgo.AddTool(s, r, mcp.NewTool("delete_task", mcp.WithDescription("Delete a task."), mcp.WithString("id", mcp.Required())),
		mcpeffect.Destructive|mcpeffect.Idempotent, ts.remove)

	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               base + "/mcp",
		ScopesSupported:        mcpeffect.ScopeNames{}.Strings(),
		BearerMethodsSupported: []string{"header"},
	}))
	// No valid token: 401. A token whose scope does not allow the call:
	// 403 and the scope it needs. mcpgo.Handler also gives a refusal its
	// code and data on the wire, which mcp-go alone would send as an
	// internal error.
	bearer := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metadata})
	mux.Handle("/mcp", bearer(mcpgo.Handler(r, opts, server.NewStreamableHTTPServer(s))))

	log.Printf("serving MCP at %s/mcp", base)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}
