package mcpgo_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests run a real mcp-go server, with go-sdk's client in process
// (over pipes, through mcp-go's stdio server) and over Streamable HTTP
// (httptest, bearer tokens checked by go-sdk's auth.RequireBearerToken),
// and with the TypeScript SDK's client over HTTP.

// calls counts the runs of each handler, to prove that a refused call
// ran none.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) ran(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

func (c *calls) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// A testServer is an mcp-go server of a few tools, resources and prompts
// of each kind, with the registry that classifies them.
type testServer struct {
	s     *server.MCPServer
	r     *mcpeffect.Registry
	calls *calls
}

// textHandler returns a handler that records its run under name and
// answers text.
func (c *calls) tool(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c.ran(name)
		return mcp.NewToolResultText(name + " ran"), nil
	}
}

// read is the handler of every resource: it records "read URI".
func (c *calls) read(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	c.ran("read " + req.Params.URI)
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: "the text of " + req.Params.URI}}, nil
}

// prompt is the handler of every prompt: it records "get NAME".
func (c *calls) prompt(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	c.ran("get " + req.Params.Name)
	return mcp.NewGetPromptResult(req.Params.Name, []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("the prompt "+req.Params.Name))}), nil
}

// The tools of newTestServer, with their effects.
var testTools = []struct {
	name   string
	effect mcpeffect.Effect
}{
	{"get_task", mcpeffect.Read},
	{"create_task", mcpeffect.Write},
	{"tag_task", mcpeffect.Write | mcpeffect.Idempotent},
	{"delete_task", mcpeffect.Destructive | mcpeffect.Idempotent},
	{"fetch_url", mcpeffect.Read | mcpeffect.OpenWorld},
}

// newTestServer returns a server with the tools of testTools, a tool
// added with mcp-go alone (unclassified), a resource and a prompt, built
// with ServerOptions(r, opts) unless bare, and with extra options after
// them.
func newTestServer(t testing.TB, opts *mcpgo.Options, bare bool, extra ...server.ServerOption) *testServer {
	t.Helper()
	ts := &testServer{r: mcpeffect.NewRegistry(), calls: &calls{}}
	var so []server.ServerOption
	if !bare {
		so = mcpgo.ServerOptions(ts.r, opts)
	}
	so = append(so, server.WithToolCapabilities(true), server.WithResourceCapabilities(false, true), server.WithPromptCapabilities(true), server.WithElicitation())
	so = append(so, extra...)
	ts.s = server.NewMCPServer("mcpgo-test", "v1", so...)
	for _, tool := range testTools {
		mcpgo.AddTool(ts.s, ts.r, mcp.NewTool(tool.name,
			mcp.WithDescription("A tool of the test."),
			mcp.WithTitleAnnotation("Title of "+tool.name),
			mcp.WithString("id"),
		), tool.effect, ts.calls.tool(tool.name))
	}
	// A tool whose effect depends on its argument "action".
	mcpgo.AddTool(ts.s, ts.r, mcp.NewTool("pods", mcp.WithString("action"), mcp.WithString("name")),
		mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
			"get":    mcpeffect.Read,
			"create": mcpeffect.Write,
			"delete": mcpeffect.Destructive | mcpeffect.Idempotent,
		}),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			action := req.GetString("action", "")
			ts.calls.ran("pods " + action)
			return mcp.NewToolResultText("pods " + action + " ran"), nil
		})
	// Resources and a prompt that need more than read-only.
	mcpgo.AddResource(ts.s, ts.r, mcp.NewResource("notes://payroll", "payroll"), mcpeffect.Full, ts.calls.read)
	mcpgo.AddResourceTemplate(ts.s, ts.r, mcp.NewResourceTemplate("notes://{id}", "note"), mcpeffect.NonDestructive, ts.calls.read)
	mcpgo.AddPrompt(ts.s, ts.r, mcp.NewPrompt("audit"), mcpeffect.Full, ts.calls.prompt)
	// Added with mcp-go alone: no classification, so no scope may call it.
	ts.s.AddTool(mcp.NewTool("unclassified_tool"), ts.calls.tool("unclassified_tool"))
	// A resource and a prompt added with mcp-go alone need read-only.
	ts.s.AddResource(mcp.NewResource("docs://readme", "readme"), ts.calls.read)
	ts.s.AddPrompt(mcp.NewPrompt("summarize"), ts.calls.prompt)
	return ts
}

// stdioSlot serializes the in-process connections of the whole test
// binary: mcp-go's stdio server keeps its one session in a package
// variable, so two of them at once would share it.
var stdioSlot = make(chan struct{}, 1)

// connectStdio connects a go-sdk client with opts to s, served in
// process by mcp-go's stdio server through mcpgo.Listen, over pipes;
// every request of the connection sees ctx. It closes at the test's end.
func connectStdio(t testing.TB, ctx context.Context, s *server.MCPServer, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	cs, closeFn, err := dialStdio(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	return cs
}

// dialStdio is connectStdio, returning what to call to close it.
func dialStdio(ctx context.Context, s *server.MCPServer, opts *sdk.ClientOptions) (*sdk.ClientSession, func(), error) {
	select {
	case stdioSlot <- struct{}{}:
	case <-time.After(30 * time.Second):
		return nil, nil, errors.New("another in-process connection is still open: close it first (mcp-go serves one stdio session a process)")
	}
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		defer func() { <-stdioSlot }()
		err := mcpgo.Listen(ctx, server.NewStdioServer(s), serverIn, serverOut)
		serverOut.Close()
		done <- err
	}()
	var once sync.Once
	closeFn := func() {
		once.Do(func() {
			clientOut.Close()
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				panic("mcp-go's stdio server did not stop")
			}
		})
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "v1"}, opts)
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		closeFn()
		return nil, nil, fmt.Errorf("connecting a go-sdk client to the mcp-go server: %w", err)
	}
	return cs, func() { cs.Close(); closeFn() }, nil
}

// The bearer tokens of the HTTP tests, and the scope strings each holds.
var testTokens = map[string][]string{
	"read-token":  {mcpeffect.DefaultReadOnlyScope},
	"write-token": {mcpeffect.DefaultNonDestructiveScope},
	"full-token":  {mcpeffect.DefaultFullScope},
	"no-scope":    {"profile"},
}

func verifyToken(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	scopes, ok := testTokens[token]
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
}

const metadataPath = "/.well-known/oauth-protected-resource/mcp"

// serveHTTP serves s over Streamable HTTP at /mcp, behind go-sdk's
// bearer token check and mcpgo.Handler with opts; httpOpts configure
// mcp-go's Streamable HTTP server.
func serveHTTP(t testing.TB, s *server.MCPServer, r *mcpeffect.Registry, opts *mcpgo.Options, httpOpts ...server.StreamableHTTPOption) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	h := mcpgo.Handler(r, opts, server.NewStreamableHTTPServer(s, httpOpts...))
	mux.Handle("/mcp", auth.RequireBearerToken(verifyToken, &auth.RequireBearerTokenOptions{ResourceMetadataURL: hs.URL + metadataPath})(h))
	return hs
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(req)
}

// connectHTTP connects a go-sdk client with opts to url with the bearer
// token.
func connectHTTP(t testing.TB, url, token string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	cs, err := dialHTTP(url, token, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func dialHTTP(url, token string, opts *sdk.ClientOptions) (*sdk.ClientSession, error) {
	transport := &sdk.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}
	return sdk.NewClient(&sdk.Implementation{Name: "go-sdk-http-client", Version: "v1"}, opts).Connect(context.Background(), transport, nil)
}

// callTool calls name on cs with arguments {"id": "7"}.
func callTool(cs *sdk.ClientSession, name string) (*sdk.CallToolResult, error) {
	return cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{"id": "7"}})
}

// denied returns the refusal of err, failing t unless err is one, by
// mcpeffect's code and data, for tool.
func denied(t testing.TB, err error, tool string) *mcpeffect.DeniedError {
	t.Helper()
	d, ok := mcpeffect.AsDeniedError(err)
	if !ok {
		t.Fatalf("call of %s: want a refusal with code %d and a DeniedError as data, got %v", tool, mcpeffect.CodeDenied, err)
	}
	if d.Tool != tool {
		t.Fatalf("the refusal names tool %q, want %q", d.Tool, tool)
	}
	return d
}

// toolNamed returns a tool called name, as mcp.NewTool makes it.
func toolNamed(name string) mcp.Tool { return mcp.NewTool(name) }
