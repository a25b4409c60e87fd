package mcpgo_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpgo"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConfirm checks confirmation through mcp-go's elicitation, with
// go-sdk's client answering as a person would, in process and over HTTP:
// a destructive call runs only on the person's accept; a decline, a
// cancel, or a client that cannot ask refuses it before the handler,
// with mcpeffect's NotConfirmedError; other calls are not asked about.
func TestConfirm(t *testing.T) {
	for _, transport := range []string{"in process", "HTTP"} {
		for _, c := range []struct {
			answer string // "": the client cannot ask
			runs   bool
			detail string
		}{
			{"accept", true, ""},
			{"decline", false, "the person declined it"},
			{"cancel", false, "the person dismissed the confirmation"},
			{"", false, "the client cannot ask one"},
		} {
			t.Run(transport+"/"+c.answer, func(t *testing.T) {
				var mu sync.Mutex
				var told []string
				record := func(_ context.Context, d mcpeffect.Decision) {
					mu.Lock()
					defer mu.Unlock()
					switch {
					case d.Answer != "":
						told = append(told, d.Operation.Name+" answered "+d.Answer)
					case d.Confirm:
						told = append(told, d.Operation.Name+" confirm")
					default:
						told = append(told, d.Operation.Name+" allow")
					}
				}
				ts := newTestServer(t, &mcpgo.Options{MiddlewareOptions: mcpeffect.MiddlewareOptions{Confirm: &mcpeffect.ConfirmOptions{}, OnDecision: record}}, false)
				var asked atomic.Int32
				var question atomic.Value
				opts := &sdk.ClientOptions{}
				if c.answer != "" {
					opts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
						asked.Add(1)
						question.Store(req.Params.Message)
						return &sdk.ElicitResult{Action: c.answer}, nil
					}
				}
				var cs *sdk.ClientSession
				if transport == "HTTP" {
					cs = connectHTTP(t, serveHTTP(t, ts.s, ts.r, nil).URL+"/mcp", "full-token", opts)
				} else {
					cs = connectStdio(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), ts.s, opts)
				}
				// Not destructive: not asked.
				if _, err := callTool(cs, "create_task"); err != nil || asked.Load() != 0 {
					t.Fatalf("create_task: %v, asked %d times", err, asked.Load())
				}
				_, err := callTool(cs, "delete_task")
				ran := ts.calls.count("delete_task")
				// OnDecision is told of the call that needs no confirmation,
				// and of each round of the one that does (mcp-go asks with a
				// second call), then of the answer.
				answer := c.answer
				if answer == "" {
					answer = "unsupported"
				}
				mu.Lock()
				got := slices.Compact(slices.Clone(told))
				mu.Unlock()
				if want := []string{"create_task allow", "delete_task confirm", "delete_task answered " + answer}; !slices.Equal(got, want) {
					t.Errorf("OnDecision was told %q, want %q", got, want)
				}
				if c.answer != "" {
					if asked.Load() != 1 {
						t.Fatalf("delete_task: asked %d times, want once (%v)", asked.Load(), err)
					}
					if q, _ := question.Load().(string); !strings.Contains(q, "delete_task") {
						t.Errorf("the question %q does not name the tool", q)
					}
				}
				if c.runs {
					if err != nil || ran != 1 {
						t.Errorf("delete_task, %q: %v, ran %d times; want it run once", c.answer, err, ran)
					}
					return
				}
				if ran != 0 {
					t.Errorf("delete_task, %q: ran %d times", c.answer, ran)
				}
				n, ok := mcpeffect.AsNotConfirmedError(err)
				if !ok || n.Tool != "delete_task" || !strings.Contains(n.Error(), c.detail) {
					t.Errorf("delete_task, %q: %v; want a NotConfirmedError that says %q", c.answer, err, c.detail)
				}
			})
		}
	}
}
