// The rules server has two tools whose effect depends on their arguments,
// and asks a person before every destructive call.
//
// The tasks tool folds four operations into one, chosen by its action
// argument, and declares the effect of each (mcpeffect.EffectByArgument):
// a read-only caller may list and get, but not add or delete. edit_task
// computes its effect from its input (mcpeffect.EffectByFunc): a comment
// only adds, a new title overwrites the old one. Hosts see the worst case
// of each tool; each call is checked by its own effect.
//
// Whatever the host does with the hints, the server asks the person,
// through the client (MCP elicitation), to confirm each destructive call,
// and runs it only on an explicit accept.
//
//	go run ./examples/rules -scope non-destructive
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"strconv"
	"sync"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxTasks and maxComments bound the data, so that a caller who may only
// add cannot use up the server's memory.
const maxTasks, maxComments = 1000, 100

type task struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Comments []string `json:"comments,omitempty"`
}

// store is the server's data: the tasks, in the order they were added.
type store struct {
	mu    sync.Mutex
	last  int
	tasks []*task
}

func (s *store) find(id string) (*task, int, error) {
	for i, t := range s.tasks {
		if t.ID == id {
			return t, i, nil
		}
	}
	return nil, -1, fmt.Errorf("no task %q", id)
}

type tasksArgs struct {
	Action string `json:"action" jsonschema:"list, get, add or delete"`
	ID     string `json:"id,omitempty" jsonschema:"the task, to get or delete"`
	Title  string `json:"title,omitempty" jsonschema:"the title of the task to add"`
}

type taskList struct {
	Tasks []task `json:"tasks"`
}

func (s *store) do(ctx context.Context, req *mcp.CallToolRequest, in tasksArgs) (*mcp.CallToolResult, taskList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := taskList{Tasks: []task{}}
	switch in.Action {
	case "list":
		for _, t := range s.tasks {
			out.Tasks = append(out.Tasks, *t)
		}
	case "get":
		t, _, err := s.find(in.ID)
		if err != nil {
			return nil, out, err
		}
		out.Tasks = append(out.Tasks, *t)
	case "add":
		if in.Title == "" || len(in.Title) > 200 {
			return nil, out, errors.New("a title has 1 to 200 bytes")
		}
		if len(s.tasks) >= maxTasks {
			return nil, out, fmt.Errorf("the list is full (%d tasks)", maxTasks)
		}
		s.last++
		t := &task{ID: strconv.Itoa(s.last), Title: in.Title}
		s.tasks = append(s.tasks, t)
		out.Tasks = append(out.Tasks, *t)
	case "delete":
		if _, i, err := s.find(in.ID); err == nil {
			s.tasks = append(s.tasks[:i], s.tasks[i+1:]...)
		}
	default:
		return nil, out, fmt.Errorf("unknown action %q: want list, get, add or delete", in.Action)
	}
	return nil, out, nil
}

type editArgs struct {
	ID      string `json:"id" jsonschema:"the task"`
	Title   string `json:"title,omitempty" jsonschema:"a new title, replacing the old one"`
	Comment string `json:"comment,omitempty" jsonschema:"a comment to add"`
}

// editEffect is the effect of an edit: a comment only adds, and adding it
// again adds another; a title overwrites, and writing it again changes
// nothing more.
func editEffect(in editArgs) mcpeffect.Effect {
	switch {
	case in.Title != "" && in.Comment != "":
		return mcpeffect.Destructive
	case in.Title != "":
		return mcpeffect.Destructive | mcpeffect.Idempotent
	}
	return mcpeffect.Write
}

func (s *store) edit(ctx context.Context, req *mcp.CallToolRequest, in editArgs) (*mcp.CallToolResult, task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, _, err := s.find(in.ID)
	switch {
	case err != nil:
		return nil, task{}, err
	case len(in.Title) > 200 || len(in.Comment) > 1000:
		return nil, task{}, errors.New("a title has up to 200 bytes, a comment up to 1000")
	case in.Comment != "" && len(t.Comments) >= maxComments:
		return nil, task{}, fmt.Errorf("task %s has %d comments already", t.ID, maxComments)
	}
	if in.Title != "" {
		t.Title = in.Title
	}
	if in.Comment != "" {
		t.Comments = append(t.Comments, in.Comment)
	}
	return nil, *t, nil
}

// question is what the person is asked before a destructive call: what
// goes, in words.
func (s *store) question(ctx context.Context, call *mcpeffect.ConfirmCall) string {
	var in struct{ Action, ID, Title string } // of either tool
	if json.Unmarshal(call.Arguments, &in) != nil {
		return "" // the default question, which shows the arguments
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, _, err := s.find(in.ID)
	switch {
	case err != nil:
		return ""
	case call.Tool == "tasks" && in.Action == "delete":
		return fmt.Sprintf("Delete task %s, %q?", t.ID, t.Title)
	case call.Tool == "edit_task":
		return fmt.Sprintf("Rename task %s from %q to %q?", t.ID, t.Title, in.Title)
	}
	return ""
}

func main() {
	var scope mcpeffect.Scope
	flag.TextVar(&scope, "scope", mcpeffect.Full, "the connection's `scope`: read-only, non-destructive or full")
	flag.Parse()

	s := &store{}
	r := mcpeffect.NewRegistry()
	server := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "tasks", Description: "List, get, add or delete tasks."},
		mcpeffect.EffectByArgument("action", map[string]mcpeffect.Effect{
			"list":   mcpeffect.Read,
			"get":    mcpeffect.Read,
			"add":    mcpeffect.Write,
			"delete": mcpeffect.Destructive | mcpeffect.Idempotent,
		}), s.do)
	mcpeffect.AddTool(server, r, &mcp.Tool{Name: "edit_task", Description: "Rename a task, or comment on it."},
		mcpeffect.EffectByFunc(editEffect, mcpeffect.Write, mcpeffect.Destructive|mcpeffect.Idempotent, mcpeffect.Destructive), s.edit)

	// Confirm asks before the destructive calls (the default of Ask), in
	// the words of question.
	server.AddReceivingMiddleware(r.Middleware(&mcpeffect.MiddlewareOptions{
		Confirm: &mcpeffect.ConfirmOptions{Message: s.question},
	}))

	ctx := mcpeffect.WithConnectionScope(context.Background(), scope)
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
