// Package e2e builds the server that the end-to-end tests of mcpeffect
// call over every transport, in process and as a program of its own
// (testdata/e2eserver): a tool whose effect depends on its arguments in
// each form, a destructive tool behind confirmation, resources and
// prompts with scopes, and tool resolution.
package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/resolution"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tokens are the bearer tokens the HTTP server accepts, with the scope
// strings each carries.
var Tokens = map[string][]string{
	"read-token":  {"tools:read"},
	"write-token": {"tools:write"},
	"full-token":  {"tools:destructive"},
	"no-scope":    {"openid"},
}

// Verify is the token verifier of the HTTP server.
func Verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	scopes, ok := Tokens[token]
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: scopes, UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
}

// PodArgs are the arguments of the pods tool.
type PodArgs struct {
	Action string `json:"action" jsonschema:"get, list, create or delete"`
	Name   string `json:"name,omitempty"`
}

// IssueArgs are the arguments of update_issue.
type IssueArgs struct {
	Issue   int    `json:"issue"`
	Comment string `json:"comment,omitempty"`
	State   string `json:"state,omitempty"`
}

type noteArgs struct {
	ID string `json:"id"`
}

// PodEffects are the outcomes of the pods tool.
var PodEffects = map[string]mcpeffect.Effect{
	"get":    mcpeffect.Read,
	"list":   mcpeffect.Read,
	"create": mcpeffect.Write,
	"delete": mcpeffect.Destructive | mcpeffect.Idempotent,
}

// A Server is the MCP server of the end-to-end tests, with its registry.
type Server struct {
	*mcp.Server
	Registry *mcpeffect.Registry
	// Enforcer is the one configuration of its middleware and its
	// challenge.
	Enforcer *mcpeffect.Enforcer

	dir string // where its data is kept, if anywhere

	mu  sync.Mutex
	ran []string
}

// NewServer returns the server. Its middleware asks a person to confirm
// destructive calls, refusing where the client cannot ask. Its tools
// keep nothing but the record of what ran, which history shows.
func NewServer() *Server {
	s, _ := NewServerIn("")
	return s
}

// NewServerIn returns the server of NewServer, with its data kept in the
// directory dir, made if needed, where its tools do what their effects
// say, so that mcpeffect verify and mcpeffecttest.Verify can prove them:
// a pod is the file pods/NAME, and create makes a new one each call
// (NAME-1, NAME-2...), delete removes it; an issue's comments are files
// of issues/N/comments, one more each call, and its state the file
// issues/N/state, which a change of state overwrites; a note is the file
// notes/ID, readme and payroll there from the start, and delete_note
// removes it. With dir "", it is NewServer.
func NewServerIn(dir string) (*Server, error) {
	s := &Server{
		Server:   mcp.NewServer(&mcp.Implementation{Name: "e2e", Version: "v1"}, nil),
		Registry: mcpeffect.NewRegistry(),
		dir:      dir,
	}
	if dir != "" {
		if err := s.seed(); err != nil {
			return nil, err
		}
	}
	r := s.Registry
	mcpeffect.AddTool(s.Server, r, &mcp.Tool{Name: "pods", Description: "Get, list, create or delete pods."},
		mcpeffect.EffectByArgument("action", PodEffects),
		func(_ context.Context, _ *mcp.CallToolRequest, in PodArgs) (*mcp.CallToolResult, any, error) {
			if err := s.pods(in); err != nil {
				return nil, nil, err
			}
			return s.done("pods " + in.Action)
		})
	mcpeffect.AddTool(s.Server, r, &mcp.Tool{Name: "update_issue", Description: "Comment on an issue, or change its state."},
		mcpeffect.EffectByFunc(func(in IssueArgs) mcpeffect.Effect {
			if in.State != "" {
				return mcpeffect.Destructive | mcpeffect.Idempotent
			}
			return mcpeffect.Write
		}, mcpeffect.Write, mcpeffect.Destructive|mcpeffect.Idempotent),
		func(_ context.Context, _ *mcp.CallToolRequest, in IssueArgs) (*mcp.CallToolResult, any, error) {
			if err := s.updateIssue(in); err != nil {
				return nil, nil, err
			}
			return s.done(fmt.Sprintf("update_issue %d", in.Issue))
		})
	mcpeffect.AddTool(s.Server, r, &mcp.Tool{Name: "delete_note", Description: "Delete a note."}, mcpeffect.Destructive|mcpeffect.Idempotent,
		func(_ context.Context, _ *mcp.CallToolRequest, in noteArgs) (*mcp.CallToolResult, any, error) {
			if err := s.deleteNote(in.ID); err != nil {
				return nil, nil, err
			}
			return s.done("delete_note " + in.ID)
		})
	// history tells what ran, so that a test of a server in another
	// process sees which handlers its calls reached.
	mcpeffect.AddTool(s.Server, r, &mcp.Tool{Name: "history", Description: "What ran."}, mcpeffect.Read,
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(s.ran, "\n")}}}, nil, nil
		})

	read := func(name string) mcp.ResourceHandler {
		return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			s.record("read " + req.Params.URI)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name}}}, nil
		}
	}
	mcpeffect.AddResource(s.Server, r, &mcp.Resource{URI: "notes://readme", Name: "readme"}, mcpeffect.ReadOnly, read("readme"))
	mcpeffect.AddResource(s.Server, r, &mcp.Resource{URI: "notes://payroll", Name: "payroll"}, mcpeffect.Full, read("payroll"))
	mcpeffect.AddResourceTemplate(s.Server, r, &mcp.ResourceTemplate{URITemplate: "notes://{id}", Name: "note"}, mcpeffect.NonDestructive, read("note"))
	get := func(name string) mcp.PromptHandler {
		return func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			s.record("get " + name)
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: name}}}}, nil
		}
	}
	mcpeffect.AddPrompt(s.Server, r, &mcp.Prompt{Name: "summarize"}, mcpeffect.ReadOnly, get("summarize"))
	mcpeffect.AddPrompt(s.Server, r, &mcp.Prompt{Name: "audit"}, mcpeffect.Full, get("audit"))

	s.Enforcer = r.Enforcer(&mcpeffect.MiddlewareOptions{
		Confirm: &mcpeffect.ConfirmOptions{
			Message: func(_ context.Context, c *mcpeffect.ConfirmCall) string {
				return fmt.Sprintf("Run %s (%s) with %s?", c.Tool, c.Effect, c.Arguments)
			},
		},
	})
	s.AddReceivingMiddleware(s.Enforcer.Middleware())
	if err := resolution.Serve(s.Server, r); err != nil {
		panic(err)
	}
	return s, nil
}

func (s *Server) record(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ran = append(s.ran, what)
}

func (s *Server) done(what string) (*mcp.CallToolResult, any, error) {
	s.record(what)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: what + ": done"}}}, nil, nil
}

// HTTPHandler serves s over Streamable HTTP behind the bearer tokens of
// Verify and the challenge; stateless serves the 2026-07-28 protocol,
// stateful the ones before it. metadataURL is the resource metadata URL
// the challenges name.
func (s *Server) HTTPHandler(stateless bool, metadataURL string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	challenge := s.Enforcer.Challenge(&mcpeffect.ChallengeOptions{ResourceMetadataURL: metadataURL})
	return auth.RequireBearerToken(Verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metadataURL})(challenge(h))
}
