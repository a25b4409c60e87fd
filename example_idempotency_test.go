package mcpeffect_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A write called twice with one idempotency key runs once: the retry of a
// call whose answer was lost gets the first call's answer. The server
// configures Idempotency and wraps its transport with the carrier, which
// brings the draft's params.idempotencyKey to the middleware; the client
// sets the key with host.WithIdempotencyKey, and a host.Transport sends
// it where the draft puts it.
func Example_idempotency() {
	ctx := context.Background()
	r := mcpeffect.NewRegistry()
	enforcer := r.Enforcer(&mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{}})
	server := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)
	created := 0
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "create_task"}, mcpeffect.Write,
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Title string `json:"title"`
		}) (*mcp.CallToolResult, any, error) {
			created++
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("task %d: %s", created, in.Title)}}}, nil, nil
		})
	server.AddReceivingMiddleware(enforcer.Middleware())

	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(mcpeffect.WithConnectionScope(ctx, mcpeffect.Full), enforcer.IdempotencyTransport(st), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	transport := host.NewTransport(ct)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	fmt.Println("the server honors keys:", transport.IdempotencyAdvertised())

	key := host.NewIdempotencyKey()
	for range 2 {
		res, err := cs.CallTool(ctx, host.WithIdempotencyKey(&mcp.CallToolParams{Name: "create_task", Arguments: map[string]any{"title": "ship"}}, key))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	}
	_, err = cs.CallTool(ctx, host.WithIdempotencyKey(&mcp.CallToolParams{Name: "create_task", Arguments: map[string]any{"title": "other"}}, key))
	if ie, ok := mcpeffect.AsIdempotencyError(err); ok {
		fmt.Println("refused:", ie.Type)
	}
	fmt.Println("tasks created:", created)
	// Output:
	// the server honors keys: true
	// task 1: ship
	// task 1: ship
	// refused: idempotency_key_conflict
	// tasks created: 1
}

// A write declares the tool that undoes it; the listing publishes it, and
// a host reads it and binds the undo's arguments from the call.
func ExampleRegistry_DeclareRecovery() {
	ctx := context.Background()
	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)
	type taskID struct {
		TaskID string `json:"task_id"`
	}
	type itemID struct {
		ItemID string `json:"item_id"`
	}
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_task", Description: "Move a task to the Trash."}, mcpeffect.Destructive|mcpeffect.Idempotent,
		func(context.Context, *mcp.CallToolRequest, taskID) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "restore_from_trash", Description: "Take an item back from the Trash."}, mcpeffect.Destructive|mcpeffect.Idempotent,
		func(context.Context, *mcp.CallToolRequest, itemID) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	if err := r.DeclareRecovery("delete_task", mcpeffect.Compensation("restore_from_trash",
		map[string]string{"item_id": "$request.body#/task_id"})); err != nil {
		log.Fatal(err)
	}
	server.AddReceivingMiddleware(r.Middleware(nil))

	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly), st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, tool := range list.Tools {
		rec, err := host.RecoveryOf(tool)
		if err != nil || rec == nil {
			continue
		}
		args, err := rec.Bind([]byte(`{"task_id":"t42"}`), nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s is undone by %s with item_id=%s\n", tool.Name, rec.CompensatingOperation.OperationID, args["item_id"])
	}
	// Output:
	// delete_task is undone by restore_from_trash with item_id="t42"
}
