package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// List connects to the server over t and returns how it introduced
// itself and every tool it lists, following pagination, with each tool's
// annotations exactly as sent. It closes the session before it returns.
//
// go-sdk decodes readOnlyHint and idempotentHint into plain bools, which
// cannot tell a hint the server left out from one it sent as false. So
// List reads the results of tools/list as they arrive on the connection,
// before go-sdk decodes them.
//
// List declares the experimental tool-resolution extension
// (mcpeffect.ToolResolutionExtension), so that a server that serves it
// marks the tools whose calls it resolves; it sends no tools/resolve.
func List(ctx context.Context, t mcp.Transport) (Server, []Listed, error) {
	cs, server, tools, err := listOpen(ctx, t)
	if cs != nil {
		closeSession(ctx, cs)
	}
	return server, tools, err
}

// listOpen is [List] that leaves the session open, for the caller to
// close, even when listing fails; cs is nil when connecting failed.
func listOpen(ctx context.Context, t mcp.Transport) (cs *mcp.ClientSession, _ Server, _ []Listed, _ error) {
	rec := &recordingTransport{Transport: t}
	// Capabilities given replace go-sdk's default, roots, which the roots
	// feature's deprecation does not change: it is kept, since some
	// servers list tools by what the client can do (server-everything
	// lists get-roots-list only to a client with roots).
	//lint:ignore SA1019 the audit must declare what go-sdk's default client declares.
	caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	caps.AddExtension(mcpeffect.ToolResolutionExtension, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpeffect-audit", Version: "v0"}, &mcp.ClientOptions{Capabilities: caps})
	cs, err := client.Connect(ctx, rec, nil)
	if err != nil {
		return nil, Server{}, nil, &stageError{stageInitialize, err}
	}

	var server Server
	if res := cs.InitializeResult(); res != nil {
		server.ProtocolVersion = res.ProtocolVersion
		if info := res.ServerInfo; info != nil {
			server.Name, server.Title, server.Version = info.Name, info.Title, info.Version
		}
	}

	var tools []Listed
	cursors := make(map[string]bool)
	for cursor := ""; ; {
		if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor}); err != nil {
			return cs, server, nil, &stageError{stageList, err}
		}
		raw := rec.takeToolsList()
		if raw == nil {
			// Each cursor is asked for once, so go-sdk cannot have
			// answered from its cache: this cannot happen.
			return cs, server, nil, errors.New("listing tools: the tools/list response was not seen on the connection")
		}
		var page struct {
			Tools      []Listed `json:"tools"`
			NextCursor string   `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return cs, server, nil, fmt.Errorf("listing tools: %w", err)
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == "" {
			return cs, server, tools, nil
		}
		if cursors[page.NextCursor] {
			return cs, server, nil, fmt.Errorf("listing tools: the server returned cursor %q twice", page.NextCursor)
		}
		cursors[page.NextCursor] = true
		cursor = page.NextCursor
	}
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

// A stage is a step of [List] that can fail.
type stage uint8

const (
	stageInitialize stage = iota + 1 // the initialize handshake
	stageList                        // tools/list, any page
)

// doing says what List was doing at stage s, for people.
func (s stage) doing() string {
	if s == stageList {
		return "listing its tools"
	}
	return "waiting for the answer to initialize"
}

// done says what the server had not done when List failed at stage s.
func (s stage) done() string {
	if s == stageList {
		return "listed its tools"
	}
	return "answered initialize"
}

// A stageError is an error of List at a stage.
type stageError struct {
	stage stage
	err   error
}

func (e *stageError) Error() string {
	if e.stage == stageList {
		return "listing tools: " + e.err.Error()
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
// result of the last tools/list response it reads.
type recordingTransport struct {
	mcp.Transport

	mu        sync.Mutex
	toolsList map[jsonrpc.ID]bool // ids of tools/list requests not yet answered
	last      json.RawMessage     // result of the last tools/list response
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

type recordingConn struct {
	mcp.Connection
	t *recordingTransport
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "tools/list" {
		c.t.mu.Lock()
		if c.t.toolsList == nil {
			c.t.toolsList = make(map[jsonrpc.ID]bool)
		}
		c.t.toolsList[req.ID] = true
		c.t.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.t.mu.Lock()
		if c.t.toolsList[resp.ID] {
			delete(c.t.toolsList, resp.ID)
			if resp.Error == nil {
				c.t.last = bytes.Clone(resp.Result)
			}
		}
		c.t.mu.Unlock()
	}
	return msg, err
}
