package mcpgo_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSubscribeAndComplete holds resources/subscribe and
// completion/complete, which no handler middleware of mcp-go sees, to the
// scope that reads what they name, as the go-sdk integration does: a
// subscriber is told of each change to the resource, and a completion
// tells what the arguments of a prompt or a resource template may be.
func TestSubscribeAndComplete(t *testing.T) {
	r := mcpeffect.NewRegistry()
	var (
		mu      sync.Mutex
		refused []*mcpeffect.DeniedError
	)
	opts := &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{OnDenied: func(_ context.Context, d *mcpeffect.DeniedError) {
		mu.Lock()
		defer mu.Unlock()
		refused = append(refused, d)
	}}}
	s := server.NewMCPServer("subscribe-test", "v1", append(mcpgo.ServerOptions(r, opts),
		server.WithResourceCapabilities(true, true), server.WithPromptCapabilities(true), server.WithCompletions())...)
	read := func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: "text"}}, nil
	}
	mcpgo.AddResource(s, r, mcp.NewResource("notes://payroll", "payroll"), mcpeffect.Full, read)
	mcpgo.AddResource(s, r, mcp.NewResource("notes://public", "public"), mcpeffect.ReadOnly, read)
	mcpgo.AddResourceTemplate(s, r, mcp.NewResourceTemplate("notes://{id}", "note"), mcpeffect.NonDestructive, read)
	mcpgo.AddPrompt(s, r, mcp.NewPrompt("audit", mcp.WithArgument("year")), mcpeffect.Full,
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("audit", nil), nil
		})

	subscribe := func(cs *sdk.ClientSession, uri string) error {
		return cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: uri})
	}
	complete := func(cs *sdk.ClientSession, ref *sdk.CompleteReference) error {
		_, err := cs.Complete(context.Background(), &sdk.CompleteParams{Ref: ref, Argument: sdk.CompleteParamsArgument{Name: "year", Value: "20"}})
		return err
	}
	// On 2026-07-28, go-sdk's client subscribes with subscriptions/listen
	// and does not wait for its answer: the refusals that OnDenied saw
	// say what the server refused.
	for _, tt := range []struct {
		name             string
		call             func(*sdk.ClientSession) error
		need             mcpeffect.Scope
		resource, prompt string
		waits            bool // the call returns the server's answer
	}{
		{"subscribe to a full-scope resource", func(cs *sdk.ClientSession) error { return subscribe(cs, "notes://payroll") }, mcpeffect.Full, "notes://payroll", "", false},
		{"subscribe to a resource of a template", func(cs *sdk.ClientSession) error { return subscribe(cs, "notes://7") }, mcpeffect.NonDestructive, "notes://7", "", false},
		{"subscribe to a read-only resource", func(cs *sdk.ClientSession) error { return subscribe(cs, "notes://public") }, mcpeffect.ReadOnly, "", "", false},
		{"complete a full-scope prompt", func(cs *sdk.ClientSession) error {
			return complete(cs, &sdk.CompleteReference{Type: "ref/prompt", Name: "audit"})
		}, mcpeffect.Full, "", "audit", true},
		{"complete a template", func(cs *sdk.ClientSession) error {
			return complete(cs, &sdk.CompleteReference{Type: "ref/resource", URI: "notes://{id}"})
		}, mcpeffect.NonDestructive, "notes://{id}", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, scope := range []mcpeffect.Scope{mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full} {
				cs, closeFn, err := dialStdio(mcpeffect.WithConnectionScope(context.Background(), scope), s, nil)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				refused = nil
				mu.Unlock()
				err = tt.call(cs)
				closeFn()
				mu.Lock()
				got := refused
				mu.Unlock()
				if scope >= tt.need {
					if err != nil || len(got) > 0 {
						t.Errorf("scope %v: %v, refused %+v, want it allowed", scope, err, got)
					}
					continue
				}
				if len(got) != 1 {
					t.Errorf("scope %v: refused %+v, want one refusal", scope, got)
					continue
				}
				if d := got[0]; d.Required != tt.need || d.Granted != scope || d.Resource != tt.resource || d.Prompt != tt.prompt {
					t.Errorf("scope %v: refusal %+v, want it to need %v for %q %q", scope, d, tt.need, tt.resource, tt.prompt)
				}
				if _, ok := mcpeffect.AsDeniedError(err); !ok && (err != nil || tt.waits) {
					t.Errorf("scope %v: %v, want a refusal of code %d with a DeniedError", scope, err, mcpeffect.CodeDenied)
				}
			}
		})
	}
}
