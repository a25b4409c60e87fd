package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/admit"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// askedPerson answers each question with the next of its answers
// ("accept", "decline", "cancel"), and keeps the questions.
type askedPerson struct {
	mu      sync.Mutex
	answers []string
	asked   []string
}

func (p *askedPerson) answer(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Params.Message)
	if len(p.answers) == 0 {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	return &mcp.ElicitResult{Action: a}, nil
}

func (p *askedPerson) questions() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// TestConfirmFlag runs done-server -confirm destructive as a process,
// as a host starts it: the person is asked before a deletion, in words
// that name what goes; a decline loses nothing; an accept deletes; an
// additive write is not asked about.
func TestConfirmFlag(t *testing.T) {
	dir := t.TempDir()
	cmd := ownerCommand(t, dir, "", "serve", "-confirm", "destructive")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	p := &askedPerson{answers: []string{"decline", "accept"}}
	client := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: p.answer})
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, &stderr)
	}
	defer cs.Close()

	task := must[store.Task](t, cs, "create_task", args{"title": "ship v2"})
	must[store.Decomposition](t, cs, "decompose_task", args{"task_id": task.ID, "steps": []string{"tag", "announce"}, "subtasks": []args{{"title": "changelog"}}})
	if q := p.questions(); len(q) != 0 {
		t.Fatalf("asked before additive writes: %q", q)
	}

	_, err = call[store.TrashItem](t, cs, "delete_task", args{"task_id": task.ID})
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "decline" || n.Tool != "delete_task" {
		t.Fatalf("delete_task declined: err = %v, want a NotConfirmedError with the answer decline", err)
	}
	if got := must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); got.Status == "" || len(got.Steps) != 2 {
		t.Errorf("after a decline, the task is %+v: want it whole", got)
	}
	must[store.TrashItem](t, cs, "delete_task", args{"task_id": task.ID})
	if _, err := call[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); err == nil {
		t.Error("after an accept, the task is still there")
	}
	want := `Delete task "ship v2", with its 2 steps and 1 subtask?`
	if q := p.questions(); len(q) != 2 || q[0] != want || q[1] != want {
		t.Errorf("questions %q, want %q twice", q, want)
	}
}

// TestConfirmModes: which calls each mode asks about, on both ways of
// asking (an elicitation request before 2026-07-28, an input request
// from it); a client that cannot ask has them refused, never run; and
// what an agent wrote in a title cannot disguise the question.
func TestConfirmModes(t *testing.T) {
	e := newEnv(t)
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	setup := e.connect(secret)
	task := must[store.Task](t, setup, "create_task", args{"title": "ship v2"})
	// U+202E shows what follows it reversed: "ship v2" + "txt.exe" would
	// read as "ship v2exe.txt".
	hostile := must[store.Task](t, setup, "create_task", args{"title": "ship v2\u202etxt.exe"})
	other := must[store.Task](t, setup, "create_task", args{"title": "runs unasked"})
	project := must[store.Project](t, setup, "create_project", args{"name": "Launch"})
	steps := must[store.Decomposition](t, setup, "decompose_task", args{"task_id": task.ID, "steps": []string{"tag"}})

	for _, c := range []struct {
		mode     string
		tool     string
		args     args
		question string // "" for none asked
	}{
		{"off", "close_task", args{"task_id": other.ID}, ""},
		{"destructive", "comment_on_task", args{"task_id": task.ID, "body": "hello"}, ""},
		{"destructive", "get_task", args{"task_id": task.ID}, ""},
		{"destructive", "close_task", args{"task_id": task.ID}, `Close task "ship v2"?`},
		{"destructive", "archive_project", args{"project_id": project.ID}, `Archive project "Launch"?`},
		{"destructive", "set_step_status", args{"step_id": steps.Steps[0].ID, "status": "done"}, `Set step status, on step "tag"?`},
		{"destructive", "delete_step", args{"step_id": steps.Steps[0].ID}, `Delete step "tag"?`},
		{"destructive", "close_task", args{"task_id": hostile.ID}, `Close task "ship v2\u202etxt.exe"?`},
		{"destructive", "close_task", args{"task_id": "t-none"}, `Allow the tool "close_task" to run?`},
		{"writes", "comment_on_task", args{"task_id": task.ID, "body": "hello"}, `Comment on task "ship v2"?`},
		{"writes", "create_task", args{"title": "more"}, `Allow the tool "create_task" to run? It adds data.`},
		{"writes", "get_task", args{"task_id": task.ID}, ""},
	} {
		d := newDone(e.store, e.logger, config{confirm: confirmModes[c.mode]})
		server, _ := d.newServer()
		for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(c.mode+"/"+c.tool+"/"+protocol, func(t *testing.T) {
				for _, elicits := range []bool{true, false} {
					// Every answer is a cancel: what runs was not asked about.
					p := &askedPerson{}
					opts := &mcp.ClientOptions{}
					if elicits {
						opts.ElicitationHandler = p.answer
					}
					cs := connectServer(t, e, server, secret, opts, protocol)
					_, err := cs.CallTool(t.Context(), callParams(c.tool, c.args))
					n, refused := mcpeffect.AsNotConfirmedError(err)
					q := p.questions()
					switch {
					case c.question == "":
						if err != nil || len(q) != 0 {
							t.Errorf("elicits %v: err = %v, questions %q: want it run without a question", elicits, err, q)
						}
					case !refused:
						t.Errorf("elicits %v: err = %v, want it refused unconfirmed", elicits, err)
					case elicits && (n.Answer != "cancel" || len(q) != 1 || !strings.HasPrefix(q[0], visibleEscapes(c.question))):
						t.Errorf("answer %q, questions %q: want one, starting %q", n.Answer, q, visibleEscapes(c.question))
					case !elicits && n.Answer != "unsupported":
						t.Errorf("without elicitation: answer %q, want unsupported", n.Answer)
					}
				}
			})
		}
	}
	// Nothing that was asked about ran: every answer was a cancel.
	if got := must[store.TaskDetail](t, setup, "get_task", args{"task_id": task.ID}); got.Status != store.StatusOpen {
		t.Errorf("task %s is %s, want it open", task.ID, got.Status)
	}
}

// visibleEscapes writes U+202E as the middleware shows it to a person.
func visibleEscapes(s string) string {
	return strings.ReplaceAll(s, "\u202e", `\u202e`)
}

// TestConfirmOverHTTP: over Streamable HTTP, on both ways of asking, a
// declined deletion loses nothing and an accepted one deletes.
func TestConfirmOverHTTP(t *testing.T) {
	e := newEnv(t)
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	d := newDone(e.store, e.logger, config{confirm: confirmModes["destructive"]})
	server, registry := d.newServer()
	srv := httptest.NewServer(d.httpHandler(server, registry))
	defer srv.Close()
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			p := &askedPerson{answers: []string{"decline", "accept"}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "done-test", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: p.answer}).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: srv.URL + mcpPath, HTTPClient: &http.Client{Transport: bearerTransport{secret: secret}}, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			task := must[store.Task](t, cs, "create_task", args{"title": "ship v2"})
			if _, err := call[store.TrashItem](t, cs, "delete_task", args{"task_id": task.ID}); err == nil {
				t.Fatal("declined, and deleted")
			}
			must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID})
			must[store.TrashItem](t, cs, "delete_task", args{"task_id": task.ID})
			if _, err := call[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); err == nil {
				t.Error("accepted, and still there")
			}
			if q := p.questions(); len(q) != 2 || q[0] != `Delete task "ship v2"?` {
				t.Errorf("questions %q", q)
			}
		})
	}
}

// TestConfirmWaitHoldsNoTurn: a call waiting for a person's answer, through
// the host (an elicitation request) or on the page, holds no turn of the
// admission queue, so that other calls run meanwhile, with one turn in
// all; it takes a turn again once answered, and runs.
func TestConfirmWaitHoldsNoTurn(t *testing.T) {
	for _, mode := range []string{"destructive", "url"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			d := newDone(e.store, e.logger, config{baseURL: e.httpURL, confirm: confirmModes[mode], confirmURL: urlConfirmModes[mode], writeRate: rate.Inf, schemas: testSchemas})
			d.queue = admit.New(1, true)
			server, _ := d.newServer()
			secret := e.mint("alice", store.Human, mcpeffect.Full)
			alice, _ := e.store.Authenticate(t.Context(), secret)
			asked := make(chan string, 1)
			answer := make(chan struct{})
			opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked <- req.Params.URL
				<-answer // the person takes their time
				return &mcp.ElicitResult{Action: "accept"}, nil
			}}
			if mode == "url" {
				opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}
			}
			cs := connectServer(t, e, server, secret, opts, "2025-11-25")
			task := must[store.Task](t, cs, "create_task", args{"title": "old"})
			deleted := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": task.ID}})
				deleted <- err
			}()
			page := <-asked
			// The one turn is free while the person is asked.
			for range 3 {
				must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID})
			}
			close(answer)
			if mode == "url" {
				// The page's question, once the host has opened it: the call
				// waits for the answer there, and holds no turn either.
				waitFor(t, func() bool { return d.waits.count() == 1 })
				must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID})
				if _, err := e.store.AnswerConfirmation(t.Context(), alice.Actor(), page[strings.LastIndex(page, "/")+1:], true); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-deleted; err != nil {
				t.Fatalf("the confirmed call: %v", err)
			}
			if _, err := call[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); err == nil {
				t.Error("confirmed, and the task is still there")
			}
		})
	}
}
