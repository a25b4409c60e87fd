package mcpeffect_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// decisions records what OnDecision is told, one line a decision.
type decisions struct {
	mu    sync.Mutex
	lines []string
}

func (ds *decisions) record(ctx context.Context, d mcpeffect.Decision) {
	what := d.Operation.Name
	if what == "" {
		what = d.Operation.URI
	}
	line := fmt.Sprintf("%s %s %s scope=%s effect=%s", d.Operation.Method, what, verdict(d), d.Scope, d.Effect)
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.lines = append(ds.lines, line)
}

// take returns the lines recorded since the last take.
func (ds *decisions) take() []string {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	out := ds.lines
	ds.lines = nil
	return out
}

func verdict(d mcpeffect.Decision) string {
	switch {
	case d.Denied != nil:
		return "deny(needs " + d.Denied.Required.String() + ")"
	case d.Answer != "":
		return "answered(" + d.Answer + ")"
	case d.Confirm:
		return "confirm"
	}
	return "allow"
}

// TestOnDecision checks that OnDecision is told of every decision once it
// is final, and once only: allowed and refused calls, a call of a tool
// with a rule decided by its raw arguments in the middleware, one that
// the wrapper decides from its handler's input, a read of a resource,
// and a confirmation asked and answered.
func TestOnDecision(t *testing.T) {
	ds := &decisions{}
	var denied []string
	s, r, _ := newTestServer(t, &mcpeffect.MiddlewareOptions{
		OnDecision: ds.record,
		OnDenied:   func(_ context.Context, d *mcpeffect.DeniedError) { denied = append(denied, d.Tool+d.Resource) },
		Confirm:    &mcpeffect.ConfirmOptions{},
	})
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "resources"}, mcpeffect.EffectByArgument("action", resourceEffects),
		func(context.Context, *mcp.CallToolRequest, resourceArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "update_issue"}, mcpeffect.EffectByFunc(func(in issueArgs) mcpeffect.Effect {
		if in.State != "" {
			return mcpeffect.Destructive
		}
		return mcpeffect.Write
	}, mcpeffect.Write, mcpeffect.Destructive), func(context.Context, *mcp.CallToolRequest, issueArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://payroll", Name: "payroll"}, mcpeffect.Full,
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	call := func(cs *mcp.ClientSession, tool string, args any) {
		t.Helper()
		cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	}
	writer := connect(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.NonDestructive), s)
	p := &person{answer: "accept"}
	full := connectAs(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s, &mcp.ClientOptions{ElicitationHandler: p.handler}, legacyProtocol)
	for _, step := range []struct {
		do   func()
		want []string
	}{
		{func() { call(writer, "get_task", taskArgs{ID: "1"}) }, []string{"tools/call get_task allow scope=non-destructive effect=read"}},
		{func() { call(writer, "delete_task", taskArgs{ID: "1"}) }, []string{"tools/call delete_task deny(needs full) scope=non-destructive effect=write|destructive|idempotent"}},
		{func() { call(writer, "resources", resourceArgs{Action: "create"}) }, []string{"tools/call resources allow scope=non-destructive effect=write"}},
		{func() { call(writer, "resources", resourceArgs{Action: "delete"}) }, []string{"tools/call resources deny(needs full) scope=non-destructive effect=write|destructive|idempotent"}},
		// Decided by the wrapper, from the handler's input: reported once,
		// when it is final.
		{func() { call(writer, "update_issue", issueArgs{Comment: "hi"}) }, []string{"tools/call update_issue allow scope=non-destructive effect=write"}},
		{func() { call(writer, "update_issue", issueArgs{State: "closed"}) }, []string{"tools/call update_issue deny(needs full) scope=non-destructive effect=write|destructive"}},
		{func() { writer.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "notes://payroll"}) }, []string{"resources/read notes://payroll deny(needs full) scope=non-destructive effect=none"}},
		// Asked, then answered.
		{func() { call(full, "delete_task", taskArgs{ID: "1"}) }, []string{
			"tools/call delete_task confirm scope=full effect=write|destructive|idempotent",
			"tools/call delete_task answered(accept) scope=full effect=write|destructive|idempotent",
		}},
		{func() { p.answer = "decline"; call(full, "update_issue", issueArgs{State: "closed"}) }, []string{
			"tools/call update_issue confirm scope=full effect=write|destructive",
			"tools/call update_issue answered(decline) scope=full effect=write|destructive",
		}},
	} {
		step.do()
		if got := ds.take(); !slices.Equal(got, step.want) {
			t.Errorf("told\n\t%q\nwant\n\t%q", got, step.want)
		}
	}
	if want := []string{"delete_task", "resources", "update_issue", "notes://payroll"}; !slices.Equal(denied, want) {
		t.Errorf("OnDenied saw %q, want %q", denied, want)
	}
}
