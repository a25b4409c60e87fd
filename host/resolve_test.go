package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/mcpeffect/mcpeffect/resolution"
)

type podArgs struct {
	Action string `json:"action"`
}

// podsServer returns a server with a tool whose effect depends on its
// action, serving tool resolution, and the recorder of its requests.
func podsServer(t *testing.T) (*mcp.Server, *recorder) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "cluster", Version: "1"}, nil)
	r := mcpeffect.NewRegistry()
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods"}, mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
		"get":    mcpeffect.Read,
		"create": mcpeffect.Write,
		"delete": mcpeffect.Destructive | mcpeffect.Idempotent,
	}), func(context.Context, *mcp.CallToolRequest, podArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	rec := &recorder{}
	s.AddReceivingMiddleware(rec.middleware, r.Middleware(nil))
	if err := resolution.Serve(s, r); err != nil {
		t.Fatal(err)
	}
	return s, rec
}

// connectResolving connects a client prepared for tool resolution (when
// prepare is set) that applies a to s, speaking protocol.
func connectResolving(t *testing.T, s *mcp.Server, a *host.Approver, prepare bool, protocol string) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(mcpeffect.WithConnectionScope(t.Context(), mcpeffect.Full), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	opts := &mcp.ClientOptions{ToolListChangedHandler: a.ToolListChanged}
	if prepare {
		opts.Capabilities = &mcp.ClientCapabilities{}
		opts.Capabilities.AddExtension(resolution.Extension, nil)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts)
	if prepare {
		if err := host.EnableToolResolution(client); err != nil {
			t.Fatal(err)
		}
	}
	client.AddSendingMiddleware(a.Middleware())
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestApproverResolvesCalls: with ResolveCalls, a trusted server's tool
// whose static hints are the worst case of its calls runs a read without
// asking and asks about a deletion; without it, or without the client
// prepared, every call is asked about.
func TestApproverResolvesCalls(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		for _, tt := range []struct {
			name    string
			resolve bool
			prepare bool
			askGet  bool
		}{
			{"resolving", true, true, false},
			{"static hints", false, true, true},
			{"client not prepared", true, false, true},
		} {
			t.Run(protocol+"/"+tt.name, func(t *testing.T) {
				s, rec := podsServer(t)
				p := &person{answer: true}
				a := host.NewApprover(host.Policy{Trusted: true, ResolveCalls: tt.resolve}, p.confirm)
				cs := connectResolving(t, s, a, tt.prepare, protocol)
				for _, action := range []string{"get", "delete"} {
					before := len(p.asked)
					if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "pods", Arguments: podArgs{Action: action}}); err != nil {
						t.Fatalf("%s: %v", action, err)
					}
					asked := len(p.asked) > before
					if want := action == "delete" || tt.askGet; asked != want {
						t.Errorf("%s: asked %t, want %t", action, asked, want)
					}
					if asked {
						c := p.asked[len(p.asked)-1]
						want := mcpeffect.Destructive // the static hints: the worst case, not idempotent
						if tt.resolve && tt.prepare {
							want = mcpeffect.Destructive | mcpeffect.Idempotent // this call's
						}
						if c.Effect != want {
							t.Errorf("%s: the person is shown %s, want %s", action, c.Effect, want)
						}
					}
				}
				if got := rec.called(); len(got) != 2 {
					t.Errorf("calls that reached the server: %q", got)
				}
			})
		}
	}
}

// liar is a tools/resolve result a test server makes up.
type liar struct {
	mcp.ResultBase
	ResultType  string          `json:"resultType"`
	Name        string          `json:"name"`
	Annotations json.RawMessage `json:"annotations"`
}

// TestApproverRefusesBadResolutions: a server whose resolution breaks the
// extension's rules is not believed: the static hints decide.
func TestApproverRefusesBadResolutions(t *testing.T) {
	yes, no := true, false
	marker := mcp.Meta{resolution.Extension: map[string]any{"resolvable": true}}
	for _, tt := range []struct {
		name   string
		static *mcp.ToolAnnotations
		answer liar
		asked  bool
	}{
		// A read-only tool whose call resolves to a deletion: the bound
		// is broken, and the static hints (a read) decide.
		{"less careful than static", &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no, OpenWorldHint: &no},
			liar{ResultType: "complete", Name: "t", Annotations: json.RawMessage(`{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false}`)}, false},
		// A destructive tool whose call resolves to a read, but with a
		// hint missing, or for another tool, or not complete: not
		// believed, so the person is asked.
		{"a hint missing", &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no},
			liar{ResultType: "complete", Name: "t", Annotations: json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true}`)}, true},
		{"another tool", &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no},
			liar{ResultType: "complete", Name: "u", Annotations: json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`)}, true},
		{"not complete", &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no},
			liar{ResultType: "input_required", Name: "t", Annotations: json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`)}, true},
		// The control: a sound resolution is believed.
		{"sound", &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no},
			liar{ResultType: "complete", Name: "t", Annotations: json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`)}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "liar", Version: "1"}, &mcp.ServerOptions{
				Capabilities: func() *mcp.ServerCapabilities {
					c := &mcp.ServerCapabilities{}
					c.AddExtension(resolution.Extension, nil)
					return c
				}(),
			})
			mcp.AddTool(s, &mcp.Tool{Name: "t", Annotations: tt.static, Meta: marker}, noop)
			answer := tt.answer
			if err := mcp.AddReceivingCustomMethod(s, resolution.Method, func(context.Context, *mcp.ServerSession, *resolution.Params) (*liar, error) {
				return &answer, nil
			}); err != nil {
				t.Fatal(err)
			}
			p := &person{answer: true}
			cs := connectResolving(t, s, host.NewApprover(host.Policy{Trusted: true, ResolveCalls: true}, p.confirm), true, "2025-11-25")
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "t", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			if asked := len(p.asked) > 0; asked != tt.asked {
				t.Errorf("asked %t, want %t", asked, tt.asked)
			}
		})
	}
}
