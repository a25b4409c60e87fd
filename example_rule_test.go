package mcpeffect_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type podArgs struct {
	Action string `json:"action" jsonschema:"get, list or delete"`
	Name   string `json:"name,omitempty" jsonschema:"the pod, for get and delete"`
}

func pods(ctx context.Context, req *mcp.CallToolRequest, in podArgs) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Action + " " + in.Name + ": done"}}}, nil, nil
}

// One tool folds several operations into one, selected by its "action"
// argument. It advertises the worst case, as hosts must assume before
// they see the arguments, but a read-only caller may still make the
// calls that only read.
func ExampleAddTool_rule() {
	ctx := context.Background()
	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "cluster", Version: "v1"}, nil)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "pods", Description: "Get, list or delete pods."},
		mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
			"get":    mcpeffect.Read,
			"list":   mcpeffect.Read,
			"delete": mcpeffect.Destructive | mcpeffect.Idempotent,
		}), pods)
	server.AddReceivingMiddleware(r.Middleware(nil))

	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	if _, err := server.Connect(mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), serverTransport, nil); err != nil {
		log.Fatal(err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1"}, nil).Connect(ctx, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	e, _ := r.Effect("pods")
	fmt.Println("advertised:", e)

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "pods", Arguments: podArgs{Action: "get", Name: "web-1"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)

	_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "pods", Arguments: podArgs{Action: "delete", Name: "web-1"}})
	if d, ok := mcpeffect.AsDeniedError(err); ok {
		fmt.Printf("refused: %s with %s needs %s\n", d.Tool, d.Selected, d.Required)
	}
	// Output:
	// advertised: write|destructive|idempotent
	// get web-1: done
	// refused: pods with action="delete" needs full
}

type issueUpdate struct {
	Issue   int    `json:"issue"`
	Comment string `json:"comment,omitempty" jsonschema:"a comment to add"`
	State   string `json:"state,omitempty" jsonschema:"open or closed; empty leaves it"`
}

// The general form: a function computes the effect of each call from the
// arguments the handler receives, and lists every effect it may return.
// Adding a comment only adds; changing the state overwrites it.
func ExampleEffectByFunc() {
	rule := mcpeffect.EffectByFunc(func(in issueUpdate) mcpeffect.Effect {
		if in.State != "" {
			return mcpeffect.Destructive | mcpeffect.Idempotent
		}
		return mcpeffect.Write
	}, mcpeffect.Write, mcpeffect.Destructive|mcpeffect.Idempotent)

	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "issues", Version: "v1"}, nil)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "update_issue"}, rule,
		func(ctx context.Context, req *mcp.CallToolRequest, in issueUpdate) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "updated"}}}, nil, nil
		})
	server.AddReceivingMiddleware(r.Middleware(nil))

	ctx := context.Background()
	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	if _, err := server.Connect(mcpeffect.WithConnectionScope(ctx, mcpeffect.NonDestructive), serverTransport, nil); err != nil {
		log.Fatal(err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1"}, nil).Connect(ctx, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	for _, args := range []issueUpdate{{Issue: 7, Comment: "Fixed in v2."}, {Issue: 7, State: "closed"}} {
		_, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "update_issue", Arguments: args})
		fmt.Printf("%+v: allowed %t\n", args, err == nil)
	}
	fmt.Println("advertised:", rule.Worst())
	// Output:
	// {Issue:7 Comment:Fixed in v2. State:}: allowed true
	// {Issue:7 Comment: State:closed}: allowed false
	// advertised: write|destructive
}
