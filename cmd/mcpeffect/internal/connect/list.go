package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpeffect/mcpeffect/host"
	"github.com/mcpeffect/mcpeffect/resolution"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server describes a server as it introduced itself.
type Server struct {
	Name            string `json:"name"`
	Title           string `json:"title,omitempty"`
	Version         string `json:"version"`
	ProtocolVersion string `json:"protocolVersion"`
	// Idempotency says that the server declared
	// capabilities.tools.idempotency (SEP-3182) when the session began:
	// that a tools/call carrying an idempotency key runs at most once.
	Idempotency bool `json:"idempotency,omitempty"`
}

// A Listed is a tool as a server listed it: its name, title and
// description, and its input and output schemas, annotations object and
// _meta object exactly as received (nil if it had none).
type Listed struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// List connects to the server over t and returns how it introduced
// itself and every tool it lists, following pagination, with each tool's
// annotations exactly as sent. It closes the session before it returns.
// It bounds the tools and pages listed by [DefaultLimits]; the messages
// read are bounded by t (a [Target] bounds them all).
//
// go-sdk decodes readOnlyHint and idempotentHint into plain bools, which
// cannot tell a hint the server left out from one it sent as false. So
// List reads the results of tools/list as they arrive on the connection,
// before go-sdk decodes them.
//
// List declares the experimental tool-resolution extension
// (resolution.Extension), so that a server that serves it
// marks the tools whose calls it resolves; it sends no tools/resolve.
func List(ctx context.Context, t mcp.Transport) (Server, []Listed, error) {
	rec := &recordingTransport{Transport: t}
	cs, server, err := connect(ctx, rec, false)
	if err != nil {
		return Server{}, nil, err
	}
	defer closeSession(ctx, cs)
	tools, err := listTools(ctx, cs, rec, DefaultLimits, func(string) {})
	if err != nil {
		return server, nil, err
	}
	return server, tools, nil
}

// connect opens a session over rec as the audit's client, and returns
// how the server introduced itself; with confirm, as a client that
// accepts what a form elicitation asks (see [Target] Confirm).
func connect(ctx context.Context, rec *recordingTransport, confirm bool) (*mcp.ClientSession, Server, error) {
	// Capabilities given replace go-sdk's default, roots, which the roots
	// feature's deprecation does not change: it is kept, since some
	// servers list tools by what the client can do (server-everything
	// lists get-roots-list only to a client with roots).
	//lint:ignore SA1019 the audit must declare what go-sdk's default client declares.
	caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	caps.AddExtension(resolution.Extension, nil)
	opts := &mcp.ClientOptions{Capabilities: caps}
	if confirm {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "" && req.Params.Mode != "form" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpeffect-audit", Version: "v0"}, opts)
	cs, err := client.Connect(ctx, rec, nil)
	if err != nil {
		return nil, Server{}, &stageError{stageInitialize, err}
	}
	var server Server
	if res := cs.InitializeResult(); res != nil {
		server.ProtocolVersion = res.ProtocolVersion
		if info := res.ServerInfo; info != nil {
			server.Name, server.Title, server.Version = info.Name, info.Title, info.Version
		}
	}
	server.Idempotency = host.DeclaresIdempotency(rec.takeIntroduction())
	return cs, server, nil
}

// listTools lists every tool of cs, page after page, within the tools and
// pages of limits.
func listTools(ctx context.Context, cs *mcp.ClientSession, rec *recordingTransport, limits Limits, tell func(string)) ([]Listed, error) {
	limits = limits.withDefaults()
	var tools []Listed
	cursors := make(map[string]bool)
	for page, cursor := 1, ""; ; page++ {
		tell(fmt.Sprintf("listing tools: %d so far, page %d", len(tools), page))
		if page > limits.Pages {
			return nil, &stageError{stageList, &LimitError{LimitPages, int64(limits.Pages)}}
		}
		_, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		raw := rec.takeToolsList()
		if err != nil {
			// go-sdk could not decode the page: say what is wrong with
			// it, where it says only which Go field it could not fill.
			if raw != nil {
				if _, _, perr := readPage(raw, page); perr != nil {
					err = perr
				}
			}
			return nil, &stageError{stageList, err}
		}
		if raw == nil {
			// Each cursor is asked for once, so go-sdk cannot have
			// answered from its cache: this cannot happen.
			return nil, &stageError{stageList, errors.New("the tools/list response was not seen on the connection")}
		}
		listed, next, err := readPage(raw, page)
		if err != nil {
			return nil, &stageError{stageList, err}
		}
		if len(tools)+len(listed) > limits.Tools {
			return nil, &stageError{stageList, &LimitError{LimitTools, int64(limits.Tools)}}
		}
		tools = append(tools, listed...)
		if next == "" {
			return tools, nil
		}
		if cursors[next] {
			return nil, &stageError{stageList, &ProtocolError{fmt.Sprintf("the server gave the cursor %s twice: its pages never end", quoteShort(next))}}
		}
		cursors[next] = true
		cursor = next
	}
}

// A ProtocolError is an answer of the server that breaks the MCP
// specification: the error says how.
type ProtocolError struct {
	What string
}

func (e *ProtocolError) Error() string { return e.What }

// readPage reads the tools and the next cursor of a tools/list result,
// the page-th, and says what is wrong with it, if anything, with the
// server's text escaped.
func readPage(raw json.RawMessage, page int) ([]Listed, string, error) {
	bad := func(format string, args ...any) ([]Listed, string, error) {
		return nil, "", &ProtocolError{"the server's tools/list answer is not valid: " + fmt.Sprintf(format, args...)}
	}
	var result map[string]json.RawMessage
	if err := json.Unmarshal(raw, &result); err != nil || result == nil {
		return bad("page %d is not a JSON object", page)
	}
	var next string
	if v, ok := result["nextCursor"]; ok && !isNull(v) {
		if json.Unmarshal(v, &next) != nil {
			return bad("page %d: \"nextCursor\" is %s, want a string", page, jsonKind(v))
		}
	}
	var entries []json.RawMessage
	if v, ok := result["tools"]; ok && !isNull(v) {
		if json.Unmarshal(v, &entries) != nil {
			return bad("page %d: \"tools\" is %s, want an array", page, jsonKind(v))
		}
	}
	tools := make([]Listed, 0, len(entries))
	for i, e := range entries {
		var obj map[string]json.RawMessage
		if json.Unmarshal(e, &obj) != nil || obj == nil {
			return bad("tool %d of page %d is %s, want an object", i+1, page, jsonKind(e))
		}
		for _, f := range []struct {
			name   string
			object bool
		}{{"name", false}, {"title", false}, {"description", false}, {"inputSchema", true}, {"outputSchema", true}, {"annotations", true}, {"_meta", true}} {
			v, ok := obj[f.name]
			switch {
			case !ok && f.name == "name":
				return bad("tool %d of page %d has no \"name\"", i+1, page)
			case !ok, f.name != "name" && isNull(v):
			case f.object && jsonKind(v) != "an object":
				return bad("tool %d of page %d: %q is %s, want an object", i+1, page, f.name, jsonKind(v))
			case !f.object && jsonKind(v) != "a string":
				return bad("tool %d of page %d: %q is %s, want a string", i+1, page, f.name, jsonKind(v))
			}
		}
		var l Listed
		if err := json.Unmarshal(e, &l); err != nil {
			return bad("tool %d of page %d: %v", i+1, page, err)
		}
		if l.Name == "" {
			return bad("tool %d of page %d: \"name\" is empty", i+1, page)
		}
		tools = append(tools, l)
	}
	return tools, next, nil
}

// jsonKind says what kind of JSON value v is: "a string", "a number".
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// closeSession closes cs, waiting no longer than ctx allows: go-sdk's
// Streamable HTTP transport may spend five seconds asking a server that
// does not answer to end the session.
func closeSession(ctx context.Context, cs *mcp.ClientSession) {
	done := make(chan struct{})
	go func() {
		cs.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// A stage is a step of a session that can fail.
type stage uint8

const (
	stageInitialize stage = iota + 1 // the initialize handshake
	stageList                        // tools/list, any page
	stageCall                        // tools/call
)

// doing says what the session was doing at stage s, for people.
func (s stage) doing() string {
	switch s {
	case stageList:
		return "listing its tools"
	case stageCall:
		return "calling a tool"
	}
	return "waiting for the answer to initialize"
}

// done says what the server had not done when the session failed at
// stage s.
func (s stage) done() string {
	switch s {
	case stageList:
		return "listed its tools"
	case stageCall:
		return "answered the call of a tool"
	}
	return "answered initialize"
}

// method is the MCP method of stage s.
func (s stage) method() string {
	switch s {
	case stageList:
		return "tools/list"
	case stageCall:
		return "tools/call"
	}
	return "initialize"
}

// A stageError is an error of List at a stage.
type stageError struct {
	stage stage
	err   error
}

func (e *stageError) Error() string {
	switch e.stage {
	case stageList:
		return "listing tools: " + e.err.Error()
	case stageCall:
		return "calling a tool: " + e.err.Error()
	}
	return "connecting: " + e.err.Error()
}

func (e *stageError) Unwrap() error { return e.err }

// stageOf returns the stage at which err happened: initialize, unless err
// says otherwise.
func stageOf(err error) stage {
	var se *stageError
	if errors.As(err, &se) {
		return se.stage
	}
	return stageInitialize
}

// A recordingTransport is a [mcp.Transport] whose connection keeps the raw
// result of the last tools/list response it reads, and the last error the
// server answered to a call.
type recordingTransport struct {
	mcp.Transport

	mu      sync.Mutex
	calls   map[jsonrpc.ID]string // the method of each call not yet answered
	last    json.RawMessage       // result of the last tools/list response
	intro   json.RawMessage       // result of the last initialize or server/discover
	errorOf string                // the method of the last call answered with an error
	lastErr *jsonrpc.Error        // that error
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: conn, t: t}, nil
}

// takeToolsList returns the result of the last tools/list response read,
// and forgets it; nil if none was read since the last call.
func (t *recordingTransport) takeToolsList() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	raw := t.last
	t.last = nil
	return raw
}

// takeIntroduction returns the result of the last initialize or
// server/discover response read, and forgets it; nil if none was read.
func (t *recordingTransport) takeIntroduction() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	raw := t.intro
	t.intro = nil
	return raw
}

// takeAnsweredError returns the last error the server answered to a
// call, and the method of the call, and forgets them; nil if it answered
// none since the last time. go-sdk makes errors of the same type itself,
// for failures of its own: only this one is the server's.
func (t *recordingTransport) takeAnsweredError() (string, *jsonrpc.Error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	method, err := t.errorOf, t.lastErr
	t.errorOf, t.lastErr = "", nil
	return method, err
}

type recordingConn struct {
	mcp.Connection
	t *recordingTransport
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.t.mu.Lock()
		if c.t.calls == nil {
			c.t.calls = make(map[jsonrpc.ID]string)
		}
		c.t.calls[req.ID] = req.Method
		c.t.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.t.mu.Lock()
		if method, ok := c.t.calls[resp.ID]; ok {
			delete(c.t.calls, resp.ID)
			var wire *jsonrpc.Error
			switch {
			case errors.As(resp.Error, &wire):
				c.t.errorOf, c.t.lastErr = method, wire
			case resp.Error != nil:
				c.t.errorOf, c.t.lastErr = method, &jsonrpc.Error{Message: resp.Error.Error()}
			case method == "tools/list":
				c.t.last = bytes.Clone(resp.Result)
			case method == "initialize" || method == "server/discover":
				c.t.intro = bytes.Clone(resp.Result)
			}
		}
		c.t.mu.Unlock()
	}
	return msg, err
}
