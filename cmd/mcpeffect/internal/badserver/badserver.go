// Package badserver is a deliberately bad MCP server, for testing the
// audit: among its tools, each rule of the audit about one tool's hints,
// name, outcomes or undo is broken by exactly one tool, and four tools
// break none (two of them a destructive tool and its undo, published
// where SEP-3172 puts it, in annotations.recovery). (Two tools of the same name, which break a rule about the list,
// are the hostile package's.) Its tools are in tools.json, sent on the
// wire exactly as written there.
//
// It is written by hand rather than with go-sdk because go-sdk always
// sends readOnlyHint and idempotentHint: a server built with it cannot
// leave them out, as many servers built otherwise do. It speaks only what
// an audit needs: initialize, ping and tools/list, over stdio or over
// Streamable HTTP with JSON responses and no sessions.
package badserver

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
)

//go:embed tools.json
var toolsJSON []byte

// Tools returns the tools the server lists, each as its JSON object.
func Tools() []json.RawMessage {
	var tools []json.RawMessage
	if err := json.Unmarshal(toolsJSON, &tools); err != nil {
		panic("badserver: tools.json: " + err.Error())
	}
	return tools
}

// The name and version the server gives in its initialize result.
const (
	Name    = "badserver"
	Version = "1.0.0"
)

// A Server answers MCP requests with the tools of [Tools].
type Server struct {
	// PageSize is how many tools a page of tools/list holds; 0 or less
	// lists them all at once.
	PageSize int
}

// The protocol versions the server speaks, newest first.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// JSON-RPC error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// answer returns the response to the JSON-RPC message msg, or nil for a
// notification, which gets none.
func (s *Server) answer(msg []byte) *response {
	var req request
	if err := json.Unmarshal(msg, &req); err != nil {
		return &response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{codeParseError, err.Error()}}
	}
	if len(req.ID) == 0 {
		return nil
	}
	resp := &response{JSONRPC: "2.0", ID: req.ID}
	if req.JSONRPC != "2.0" || req.Method == "" {
		resp.Error = &rpcError{codeInvalidRequest, "not a JSON-RPC 2.0 request"}
		return resp
	}
	resp.Result, resp.Error = s.call(req.Method, req.Params)
	return resp
}

func (s *Server) call(method string, params json.RawMessage) (any, *rpcError) {
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if err := unmarshalParams(params, &p); err != nil {
			return nil, err
		}
		version := protocolVersions[0]
		if slices.Contains(protocolVersions, p.ProtocolVersion) {
			version = p.ProtocolVersion
		}
		return map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": Name, "version": Version},
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		var p struct {
			Cursor string `json:"cursor"`
		}
		if err := unmarshalParams(params, &p); err != nil {
			return nil, err
		}
		return s.page(p.Cursor)
	}
	return nil, &rpcError{codeMethodNotFound, fmt.Sprintf("method %q not found", method)}
}

func unmarshalParams(params json.RawMessage, v any) *rpcError {
	if len(params) == 0 {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return &rpcError{codeInvalidParams, err.Error()}
	}
	return nil
}

// page returns the page of tools/list that starts at cursor, the offset of
// its first tool in decimal.
func (s *Server) page(cursor string) (any, *rpcError) {
	tools := Tools()
	start := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n <= 0 || n >= len(tools) {
			return nil, &rpcError{codeInvalidParams, fmt.Sprintf("invalid cursor %q", cursor)}
		}
		start = n
	}
	end := len(tools)
	if s.PageSize > 0 {
		end = min(start+s.PageSize, end)
	}
	result := map[string]any{"tools": tools[start:end]}
	if end < len(tools) {
		result["nextCursor"] = strconv.Itoa(end)
	}
	return result, nil
}

// ServeStdio answers the newline-delimited JSON-RPC messages read from r
// on w, until r ends.
func (s *Server) ServeStdio(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		resp := s.answer(line)
		if resp == nil {
			continue
		}
		data, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(data, '\n')); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Handler returns a Streamable HTTP handler of the server. If token is not
// empty, every request must carry it as a bearer token, or is refused with
// 401 Unauthorized.
func (s *Server) Handler(token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodPost {
			// Without sessions there is no stream to open with GET and
			// nothing to end with DELETE.
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "only POST is served", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp := s.answer(body)
		if resp == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if resp.Error != nil && resp.Error.Code == codeParseError {
			w.WriteHeader(http.StatusBadRequest)
		}
		json.NewEncoder(w).Encode(resp)
	})
}
