// Package hostile is an MCP server that attacks its client, for testing
// that the audit bounds what it reads and holds its deadline. It answers
// initialize and ping as a server should, and tools/list by its
// [Attack]: an answer too large to hold, one that never ends, one that
// never comes, an error, pages without end, entries of the wrong type.
//
// It writes its answers as it makes them, a few kilobytes at a time, so
// that a gigabyte answer costs the server no memory, and a test that
// measures the memory of the client measures the client's.
package hostile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An Attack is how the server answers tools/list, and tools/call.
type Attack string

// The attacks.
const (
	// Huge answers with one tool whose description runs to Size bytes.
	Huge Attack = "huge"
	// Flood sends notifications without end, Size bytes each, and never
	// answers.
	Flood Attack = "flood"
	// Trickle starts an answer and sends a byte of it every few
	// milliseconds, without end: over HTTP, an event stream of comments.
	Trickle Attack = "trickle"
	// Silent never answers.
	Silent Attack = "silent"
	// RPCError answers with a JSON-RPC error whose message holds a
	// terminal escape: ErrorMessage.
	RPCError Attack = "rpc-error"
	// RepeatCursor answers every page with the same nextCursor.
	RepeatCursor Attack = "repeat-cursor"
	// EndlessPages answers every page with Size tools (at least one),
	// each of a name of its own, and a new nextCursor.
	EndlessPages Attack = "endless-pages"
	// Mistyped answers with a tool whose name is a number.
	Mistyped Attack = "mistyped"
	// Duplicate lists two tools of the same name, DuplicateName: one
	// read-only, one destructive. It is not an attack on the client but
	// on the person who reads the list.
	Duplicate Attack = "duplicate"
)

// ErrorMessage is the message of the error that RPCError answers, with
// an escape that clears a terminal.
const ErrorMessage = "no tools for you\x1b[2J"

// DuplicateName is the name of the two tools of Duplicate.
const DuplicateName = "sync_files"

// RepeatedCursor is the cursor that RepeatCursor answers every page with.
const RepeatedCursor = "page-2"

// A Server is a hostile MCP server.
type Server struct {
	Attack Attack
	// Size is the size of the attack, in bytes or tools: see each Attack.
	Size int64
	// SSE makes the HTTP handler answer every request with an event
	// stream rather than a JSON body.
	SSE bool
}

// ParseAttack reads "attack" or "attack:size", as a test names a server
// in an environment variable.
func ParseAttack(s string) (*Server, error) {
	name, size, _ := strings.Cut(s, ":")
	srv := &Server{Attack: Attack(name)}
	if size != "" {
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("hostile: size %q: %v", size, err)
		}
		srv.Size = n
	}
	if !slices.Contains([]Attack{Huge, Flood, Trickle, Silent, RPCError, RepeatCursor, EndlessPages, Mistyped, Duplicate}, srv.Attack) {
		return nil, fmt.Errorf("hostile: unknown attack %q", name)
	}
	return srv, nil
}

type request struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Cursor          string `json:"cursor"`
	} `json:"params"`
}

// An output is where one answer goes: a line over stdio, a JSON body or
// an event stream over HTTP.
type output struct {
	w     io.Writer
	flush func()
	sse   bool
	done  <-chan struct{} // closed when the client has gone
}

// message writes one whole message.
func (o *output) message(data []byte) error {
	if o.sse {
		if _, err := fmt.Fprintf(o.w, "event: message\ndata: %s\n\n", data); err != nil {
			return err
		}
	} else if _, err := o.w.Write(append(data, '\n')); err != nil {
		return err
	}
	o.flush()
	return nil
}

// serve writes the answer to req, if it gets one.
func (s *Server) serve(req *request, o *output) error {
	if len(req.ID) == 0 {
		return nil // a notification
	}
	id := string(req.ID)
	result := func(v any) error {
		data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": v})
		if err != nil {
			return err
		}
		return o.message(data)
	}
	switch req.Method {
	case "initialize":
		return result(map[string]any{
			"protocolVersion": cmpOr(req.Params.ProtocolVersion, "2025-06-18"),
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "hostile", "version": "1.0.0"},
		})
	case "tools/list", "tools/call":
	default:
		return result(map[string]any{})
	}

	tool := func(name string, readOnly, destructive bool) map[string]any {
		return map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"},
			"annotations": map[string]any{"readOnlyHint": readOnly, "destructiveHint": destructive, "idempotentHint": readOnly, "openWorldHint": false}}
	}
	switch s.Attack {
	case Huge:
		return s.huge(id, o)
	case Flood:
		note, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
			"params": map[string]any{"level": "info", "data": strings.Repeat("x", int(max(s.Size, 1)))}})
		if err != nil {
			return err
		}
		for {
			select {
			case <-o.done:
				return nil
			default:
			}
			if err := o.message(note); err != nil {
				return err
			}
		}
	case Trickle:
		prefix := `{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[{"name":"`
		if o.sse {
			prefix = ":"
		}
		if _, err := io.WriteString(o.w, prefix); err != nil {
			return err
		}
		for {
			o.flush()
			select {
			case <-o.done:
				return nil
			case <-time.After(5 * time.Millisecond):
			}
			b := "x"
			if o.sse {
				b = "\n:"
			}
			if _, err := io.WriteString(o.w, b); err != nil {
				return err
			}
		}
	case Silent:
		<-o.done
		return nil
	case RPCError:
		data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32603, "message": ErrorMessage}})
		if err != nil {
			return err
		}
		return o.message(data)
	case RepeatCursor:
		return result(map[string]any{"tools": []any{tool("page_"+cmpOr(req.Params.Cursor, "1"), true, false)}, "nextCursor": RepeatedCursor})
	case EndlessPages:
		page, _ := strconv.Atoi(req.Params.Cursor)
		var tools []any
		for i := range max(s.Size, 1) {
			tools = append(tools, tool(fmt.Sprintf("get_%d_%d", page, i), true, false))
		}
		return result(map[string]any{"tools": tools, "nextCursor": strconv.Itoa(page + 1)})
	case Mistyped:
		return result(map[string]any{"tools": []any{tool("list_things", true, false), map[string]any{"name": 7, "inputSchema": map[string]any{"type": "object"}}}})
	case Duplicate:
		return result(map[string]any{"tools": []any{tool(DuplicateName, true, false), tool(DuplicateName, false, true)}})
	}
	return fmt.Errorf("hostile: unknown attack %q", s.Attack)
}

// huge writes the answer of Huge, a chunk at a time.
func (s *Server) huge(id string, o *output) error {
	head := `{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[{"name":"huge","inputSchema":{"type":"object"},"description":"`
	tail := `"}]}}`
	if o.sse {
		head = "event: message\ndata: " + head
		tail += "\n\n"
	} else {
		tail += "\n"
	}
	if _, err := io.WriteString(o.w, head); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for left := s.Size; left > 0; left -= int64(len(chunk)) {
		if _, err := o.w.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(o.w, tail); err != nil {
		return err
	}
	o.flush()
	return nil
}

// ServeStdio answers the newline-delimited JSON-RPC messages read from r
// on w, until r ends or an answer cannot be written.
func (s *Server) ServeStdio(r io.Reader, w io.Writer) error {
	done := make(chan struct{})
	requests := make(chan *request)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var req request
			if json.Unmarshal(sc.Bytes(), &req) == nil {
				requests <- &req
			}
		}
	}()
	bw := bufio.NewWriterSize(w, 64<<10)
	o := &output{w: bw, flush: func() { bw.Flush() }, done: done}
	for {
		select {
		case req := <-requests:
			if err := s.serve(req, o); err != nil {
				return err
			}
		case <-done:
			return nil
		}
	}
}

// Handler returns a Streamable HTTP handler of the server, without
// sessions.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "only POST is served", http.StatusMethodNotAllowed)
			return
		}
		var req request
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		rc := http.NewResponseController(w)
		o := &output{w: w, flush: func() { rc.Flush() }, sse: s.SSE, done: r.Context().Done()}
		if s.SSE {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		s.serve(&req, o)
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
