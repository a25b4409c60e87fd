package mcpeffect_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/resolution"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resolvingClient returns the options of a client that declares the
// tool-resolution extension with settings (nil: {}), or none at all
// when declare is false, and can send tools/resolve.
func resolvingClient(declare bool, settings map[string]any) *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{}
	if declare {
		caps.AddExtension(resolution.Extension, settings)
	}
	return &mcp.ClientOptions{Capabilities: caps}
}

func connectResolving(t *testing.T, ctx context.Context, s *mcp.Server, opts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
	t.Helper()
	return connectAs(t, ctx, s, opts, protocol, func(c *mcp.Client) {
		if err := mcp.AddSendingCustomMethod[*resolution.Params, *resolution.Result](c, resolution.Method); err != nil {
			t.Fatal(err)
		}
	})
}

func resolve(cs *mcp.ClientSession, tool, args string) (*resolution.Result, error) {
	p := &resolution.Params{Name: tool}
	if args != "" {
		p.Arguments = json.RawMessage(args)
	}
	return mcp.CallCustomMethod[*resolution.Params, *resolution.Result](context.Background(), cs, resolution.Method, p)
}

// TestToolResolution serves the extension and resolves calls between a
// go-sdk client and server, on both kinds of protocol: the extension
// advertised, the marker on the tools it resolves and only those, the
// hints of each call, the errors the extension defines, and the same
// answers whatever the caller's scope.
func TestToolResolution(t *testing.T) {
	for _, protocol := range []string{legacyProtocol, modernProtocol} {
		t.Run(protocol, func(t *testing.T) {
			s, r, sn := newRuleServer(t, nil)
			if err := resolution.Serve(s, r); err != nil {
				t.Fatal(err)
			}
			// No scope at all: resolution reports hints, not permission.
			ctx := context.Background()
			cs := connectResolving(t, ctx, s, resolvingClient(true, nil), protocol)
			if _, ok := cs.InitializeResult().Capabilities.Extensions[resolution.Extension]; !ok {
				t.Errorf("the server does not advertise the extension: %+v", cs.InitializeResult().Capabilities)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var marked []string
			for _, tool := range tools.Tools {
				if resolution.Marked(tool) {
					marked = append(marked, tool.Name)
				}
			}
			slices.Sort(marked)
			// update_issue's effect comes from its decoded input alone:
			// not resolvable from raw arguments, so not marked.
			if want := []string{"docs", "files", "raw_issue", "resources"}; !slices.Equal(marked, want) {
				t.Errorf("marked %q, want %q", marked, want)
			}
			for _, tt := range []struct {
				tool, args string
				want       mcpeffect.Effect
			}{
				{"resources", `{"action":"get"}`, mcpeffect.Read},
				{"resources", `{"action":"create","name":"x"}`, mcpeffect.Write},
				{"resources", `{"action":"delete"}`, mcpeffect.Destructive | mcpeffect.Idempotent},
				{"docs", `{"action":"purge"}`, mcpeffect.Destructive},            // undeclared: the worst case
				{"docs", `{"action":"get","Action":"x"}`, mcpeffect.Destructive}, // uncertain
				{"docs", `{}`, mcpeffect.Destructive},                            // no default applied
				{"raw_issue", `{"comment":"x"}`, mcpeffect.Write},
				{"raw_issue", `{"state":"closed"}`, mcpeffect.Destructive},
			} {
				res, err := resolve(cs, tt.tool, tt.args)
				if err != nil {
					t.Errorf("%s %s: %v", tt.tool, tt.args, err)
					continue
				}
				want := tt.want.Hints()
				if res.ResultType != "complete" || res.Name != tt.tool || res.Annotations != want {
					t.Errorf("%s %s: %+v, want %+v", tt.tool, tt.args, res, want)
				}
			}
			for _, tt := range []struct {
				tool, args, want string
			}{
				{"update_issue", `{}`, `tool "update_issue" is not a tool this server resolves`},
				{"get_task", `{}`, "not a tool this server resolves"},
				{"no_such_tool", `{}`, "not a tool this server resolves"},
				{"", `{}`, "no tool name"},
				{"resources", ``, "the arguments must be the complete arguments of the call"},
				{"resources", `[]`, "a JSON object"},
				{"resources", `{"action":5}`, "the tool's input schema refuses the arguments"},
				{"resources", `{"action":"get","extra":1}`, "the tool's input schema refuses the arguments"},
			} {
				_, err := resolve(cs, tt.tool, tt.args)
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, tt.want) {
					t.Errorf("%q %s: %v, want invalid params: %s", tt.tool, tt.args, err, tt.want)
				}
			}
			// Nothing ran.
			for _, tool := range []string{"resources", "docs", "files", "raw_issue", "update_issue"} {
				if got := sn.take(tool); len(got) != 0 {
					t.Errorf("%s ran: %q", tool, got)
				}
			}
		})
	}
}

// TestToolResolutionNeedsTheCapability: a client that does not declare the
// extension, or declares settings it does not define, sees no marker and
// gets -32021 with the capability it lacks.
func TestToolResolutionNeedsTheCapability(t *testing.T) {
	for _, protocol := range []string{legacyProtocol, modernProtocol} {
		for name, opts := range map[string]*mcp.ClientOptions{
			"undeclared":     resolvingClient(false, nil),
			"other settings": resolvingClient(true, map[string]any{"partial": true}),
		} {
			t.Run(protocol+"/"+name, func(t *testing.T) {
				s, r, _ := newRuleServer(t, nil)
				if err := resolution.Serve(s, r); err != nil {
					t.Fatal(err)
				}
				cs := connectResolving(t, context.Background(), s, opts, protocol)
				tools, err := cs.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, tool := range tools.Tools {
					if resolution.Marked(tool) {
						t.Errorf("%s is marked for a client that did not declare the extension", tool.Name)
					}
				}
				_, err = resolve(cs, "resources", `{"action":"get"}`)
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapabilities {
					t.Fatalf("err %v, want -32021", err)
				}
				var data mcp.MissingRequiredClientCapabilityData
				if err := json.Unmarshal(rpcErr.Data, &data); err != nil || data.RequiredCapabilities == nil {
					t.Fatalf("data %s: %v", rpcErr.Data, err)
				}
				if v, ok := data.RequiredCapabilities.Extensions[resolution.Extension].(map[string]any); !ok || len(v) != 0 {
					t.Errorf("data %s", rpcErr.Data)
				}
			})
		}
	}
}
