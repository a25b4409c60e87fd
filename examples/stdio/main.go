// The stdio server keeps a list of tasks in memory, with three tools: one
// that reads, one that only adds, and one that deletes. Each is added with
// its effect, from which mcpeffect derives both the hints that hosts read
// before a call and the check of every call.
//
// Over stdio there is no token: the connection has one scope, set with
// -scope. With the default, non-destructive, add_task runs and delete_task
// is refused before its handler runs; with -scope read-only, add_task is
// refused too; with -scope full, everything runs.
//
//	go run ./examples/stdio -scope read-only
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"strconv"
	"sync"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxTasks bounds the list, so that a caller who may only add cannot use
// up the server's memory.
const maxTasks = 1000

// tasks is the server's data: each task's title, by id.
type tasks struct {
	mu     sync.Mutex
	last   int
	titles map[string]string
}

type taskID struct {
	ID string `json:"id" jsonschema:"the task's id"`
}

type newTask struct {
	Title string `json:"title" jsonschema:"what is to be done"`
}

type task struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// get reads a task: it changes nothing, so it is a Read.
func (ts *tasks) get(ctx context.Context, req *mcp.CallToolRequest, in taskID) (*mcp.CallToolResult, task, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	title, ok := ts.titles[in.ID]
	if !ok {
		return nil, task{}, fmt.Errorf("no task %q", in.ID)
	}
	return nil, task{ID: in.ID, Title: title}, nil
}

// add adds a task and changes none that exists: a Write, not destructive.
func (ts *tasks) add(ctx context.Context, req *mcp.CallToolRequest, in newTask) (*mcp.CallToolResult, task, error) {
	if in.Title == "" || len(in.Title) > 200 {
		return nil, task{}, errors.New("a title has 1 to 200 bytes")
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.titles) >= maxTasks {
		return nil, task{}, fmt.Errorf("the list is full (%d tasks)", maxTasks)
	}
	ts.last++
	id := strconv.Itoa(ts.last)
	ts.titles[id] = in.Title
	return nil, task{ID: id, Title: in.Title}, nil
}

// remove deletes a task: destructive, and idempotent, since deleting it
// again changes nothing more.
func (ts *tasks) remove(ctx context.Context, req *mcp.CallToolRequest, in taskID) (*mcp.CallToolResult, any, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.titles, in.ID)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted " + in.ID}}}, nil, nil
}

func main() {
	var scope mcpeffect.Scope
	flag.TextVar(&scope, "scope", mcpeffect.NonDestructive, "the connection's `scope`: read-only, non-destructive or full")
	flag.Parse()

	ts := &tasks{titles: map[string]string{}}
	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)

	// One classification per tool: the four hints are derived from it...
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "get_task", Description: "Get a task."}, mcpeffect.Read, ts.get)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "add_task", Description: "Add a task."}, mcpeffect.Write, ts.add)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "delete_task", Description: "Delete a task."}, mcpeffect.Destructive|mcpeffect.Idempotent, ts.remove)

	// ...and so is the check of every call, made by the middleware before
	// any handler runs.
	server.AddReceivingMiddleware(r.Middleware(nil))

	// Every request of this connection has its scope.
	ctx := mcpeffect.WithConnectionScope(context.Background(), scope)
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
