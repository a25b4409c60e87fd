package mcpeffect_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that insists that a person confirm every destructive call,
// whatever the host does with the hints. The client here answers as its
// person would: it accepts the first question and declines the second.
// Remember that this relies on the client relaying the person's answer
// honestly: it puts a person in the loop; the scope is what limits a
// caller.
func ExampleConfirmOptions() {
	ctx := context.Background()
	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, nil)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_note"}, mcpeffect.Destructive|mcpeffect.Idempotent, deleteNote)
	server.AddReceivingMiddleware(r.Middleware(&mcpeffect.MiddlewareOptions{
		Confirm: &mcpeffect.ConfirmOptions{
			Message: func(ctx context.Context, call *mcpeffect.ConfirmCall) string {
				return fmt.Sprintf("Delete the note with %s?", call.Arguments)
			},
		},
	}))

	answers := []string{"accept", "decline"}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			answer := answers[0]
			answers = answers[1:]
			fmt.Printf("asked %q: %s\n", req.Params.Message, answer)
			return &mcp.ElicitResult{Action: answer}, nil
		},
	})
	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	if _, err := server.Connect(mcpeffect.WithConnectionScope(ctx, mcpeffect.Full), serverTransport, nil); err != nil {
		log.Fatal(err)
	}
	session, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	for _, id := range []string{"n1", "n2"} {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "delete_note", Arguments: noteArgs{ID: id}})
		if n, ok := mcpeffect.AsNotConfirmedError(err); ok {
			fmt.Println("not run:", n.Answer)
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// asked "Delete the note with {\"id\":\"n1\"}?": accept
	// deleted n1
	// asked "Delete the note with {\"id\":\"n2\"}?": decline
	// not run: decline
}
