package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// Confirmation that Done insists on (serve -confirm): the middleware asks
// the person, through MCP elicitation, before each call of the chosen
// effects, whatever the host does with the hints. It adds a person to
// the loop; it is not a boundary. The client relays the question and the
// answer, and a client that makes up an "accept" defeats it. What guards
// the data whatever the client says are the token's scope, the approval
// gate and the Trash.

// confirmModes are the values of serve -confirm: which calls a person
// must confirm. "off" is the default: the hosts ask, as they choose.
var confirmModes = map[string]func(mcpeffect.Effect) bool{
	"off": nil,
	// Destructive calls: what changes or deletes what exists.
	"destructive": func(e mcpeffect.Effect) bool { return e&mcpeffect.Destructive == mcpeffect.Destructive },
	// Every write, additive ones too (create_task, add_comment...).
	"writes": func(e mcpeffect.Effect) bool { return e&mcpeffect.Write != 0 },
}

// confirmOptions returns the options of the Enforcer's confirmation:
// those of d.confirm, or of d.confirmURL, which asks on the page (see
// [done.askOnPage]); nil for neither (off). A client that cannot ask a
// person (it declared no form elicitation, or for the page no URL
// elicitation) has those calls refused: the safe default, which a server
// that people copy keeps.
func (d *done) confirmOptions() *mcpeffect.ConfirmOptions {
	if d.confirmURL != nil {
		return &mcpeffect.ConfirmOptions{
			Ask:       func(_ string, e mcpeffect.Effect) bool { return d.confirmURL(e) },
			AskPerson: d.askOnPage,
		}
	}
	if d.confirm == nil {
		return nil
	}
	return &mcpeffect.ConfirmOptions{
		Ask:     func(_ string, e mcpeffect.Effect) bool { return d.confirm(e) },
		Message: d.question,
		Key:     d.confirmKey,
		// An answer is accepted once in the whole store, whichever
		// process served it: replicas share the record.
		Answers: usedAnswers{d.store},
	}
}

// question words what the person is asked before call: the tool's title
// and, by name, the task, project or step it acts on, such as
//
//	Delete task "ship v2", with its 3 steps and 1 subtask?
//
// or "" (mcpeffect's wording, which shows the arguments) when the call
// names nothing Done can find. Names are quoted with %q, so that what an
// agent wrote in a title shows as written; the middleware escapes any
// control or format character left in the question.
func (d *done) question(ctx context.Context, call *mcpeffect.ConfirmCall) string {
	var args struct {
		TaskID    string `json:"task_id"`
		ProjectID string `json:"project_id"`
		StepID    string `json:"step_id"`
	}
	if call.Title == "" || json.Unmarshal(call.Arguments, &args) != nil {
		return ""
	}
	var kind, name, more string
	switch {
	case args.TaskID != "":
		t, err := d.store.GetTask(ctx, args.TaskID)
		if err != nil {
			return ""
		}
		kind, name = "task", t.Title
		if call.Tool == "delete_task" {
			more = contents(t)
		}
	case args.ProjectID != "":
		p, err := d.store.GetProject(ctx, args.ProjectID)
		if err != nil {
			return ""
		}
		kind, name = "project", p.Name
	case args.StepID != "":
		st, err := d.store.GetStep(ctx, args.StepID)
		if err != nil {
			return ""
		}
		kind, name = "step", st.Text
	default:
		return ""
	}
	q := fmt.Sprintf("%s, on %s %q", call.Title, kind, name)
	if strings.HasSuffix(strings.ToLower(call.Title), " "+kind) {
		// "Delete task" + "ship v2": the title already says what it is.
		q = fmt.Sprintf("%s %q", call.Title, name)
	}
	if more != "" {
		q += ", with " + more
	}
	return q + "?"
}

// contents says what a task holds besides itself: "its 3 steps and 1
// subtask", "its 50 steps or more", or "" for nothing.
func contents(t store.TaskDetail) string {
	var parts []string
	if len(t.Steps) > 0 {
		s := count(len(t.Steps), "step")
		if t.MoreSteps {
			s += " or more"
		}
		parts = append(parts, s)
	}
	if t.Subtasks > 0 {
		parts = append(parts, count(t.Subtasks, "subtask"))
	}
	if len(parts) == 0 {
		return ""
	}
	return "its " + strings.Join(parts, " and ")
}

// count returns "1 step", "3 steps".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// usedAnswers is the store as the record of the answers that
// confirmations accepted ([mcpeffect.AnswerStore]): a table every process
// of the store shares, so that an answer cannot be replayed to another.
type usedAnswers struct{ st *store.Store }

func (u usedAnswers) Use(ctx context.Context, nonce []byte, expires time.Time) (bool, error) {
	fresh, err := u.st.UseAnswer(ctx, nonce, expires)
	if store.Transient(err) {
		// The middleware refuses the call with this error's text: it
		// says to try again, not how the database was reached.
		return false, errUnavailable
	}
	return fresh, err
}
