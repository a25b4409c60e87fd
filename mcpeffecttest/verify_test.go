package mcpeffecttest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tasks is the state of a small task server, kept in Go memory. Ids are
// random, as in a real server, so that examples must learn them at run
// time.
type tasks struct {
	mu      sync.Mutex
	byID    map[string]*task
	entries []entry          // time logged, in order
	stars   map[string]bool  // starred task ids
	trash   map[string]*task // tasks in the Trash, by id
	seed    string           // the id of the task every instance starts with
}

type task struct {
	title, note, status string
	priority, views     int
}

type entry struct {
	task    string
	minutes int
}

func newID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// state is the tasks as their users see them: nothing is bookkeeping here.
func (s *tasks) state(context.Context) (mcpeffecttest.State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := make(mcpeffecttest.State)
	for id, t := range s.byID {
		st["task/"+id] = mcpeffecttest.Record{
			"title": t.title, "note": t.note, "status": t.status,
			"priority": t.priority, "views": t.views,
		}
	}
	for i, e := range s.entries {
		st[fmt.Sprintf("entry/%d", i)] = mcpeffecttest.Record{"task": e.task, "minutes": e.minutes}
	}
	for id := range s.stars {
		st["star/"+id] = nil
	}
	for id, t := range s.trash {
		st["trash/"+id] = mcpeffecttest.Record{"title": t.title, "note": t.note, "status": t.status, "priority": t.priority}
	}
	return st, nil
}

type taskArgs struct {
	ID      string `json:"id,omitempty"`
	Title   string `json:"title,omitempty"`
	Note    string `json:"note,omitempty"`
	Minutes int    `json:"minutes,omitempty"`
}

// A toolDef is a tool of the task server: its effect, as classified,
// and what it really does to s.
type toolDef struct {
	effect mcpeffect.Effect
	do     func(s *tasks, a taskArgs) (any, error)
}

// withTask runs f on the task a.ID, or fails when there is none.
func withTask(f func(s *tasks, t *task, a taskArgs) (any, error)) func(*tasks, taskArgs) (any, error) {
	return func(s *tasks, a taskArgs) (any, error) {
		t, ok := s.byID[a.ID]
		if !ok {
			return nil, fmt.Errorf("no task %q", a.ID)
		}
		return f(s, t, a)
	}
}

// toolDefs are the tools a test server may have. Those that tell the
// truth come first; the lies after them each say what they hide.
var toolDefs = map[string]toolDef{
	"get_task": {mcpeffect.Read, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		return map[string]any{"title": t.title, "status": t.status}, nil
	})},
	"create_task": {mcpeffect.Write, func(s *tasks, a taskArgs) (any, error) {
		id := newID()
		s.byID[id] = &task{title: a.Title, status: "open"}
		return map[string]any{"id": id}, nil
	}},
	// add_note fills an empty note: an addition, which converges.
	"add_note": {mcpeffect.Idempotent, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		switch t.note {
		case "":
			t.note = a.Note
		case a.Note:
		default:
			return nil, errors.New("the task already has another note")
		}
		return nil, nil
	})},
	"log_time": {mcpeffect.Write, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		s.entries = append(s.entries, entry{a.ID, a.Minutes})
		return nil, nil
	})},
	"complete_task": {mcpeffect.Destructive | mcpeffect.Idempotent, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		t.status = "done"
		return nil, nil
	})},
	"bump_priority": {mcpeffect.Destructive, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		t.priority++
		return nil, nil
	})},
	// delete_task fails on its repeat, when the task is gone: that is
	// still idempotent, since the repeat changes nothing.
	"delete_task": {mcpeffect.Destructive | mcpeffect.Idempotent, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		delete(s.byID, a.ID)
		return nil, nil
	})},

	// trash_task moves the task to the Trash, and restore_task brings it
	// back: its undo, which empties a place in the Trash, so destroys.
	"trash_task": {mcpeffect.Destructive | mcpeffect.Idempotent, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		delete(s.byID, a.ID)
		s.trash[a.ID] = t
		return nil, nil
	})},
	"restore_task": {mcpeffect.Destructive | mcpeffect.Idempotent, func(s *tasks, a taskArgs) (any, error) {
		t, ok := s.trash[a.ID]
		if !ok {
			return nil, fmt.Errorf("no task %q in the Trash", a.ID)
		}
		delete(s.trash, a.ID)
		s.byID[a.ID] = t
		return nil, nil
	}},

	// A read that counts its views.
	"peek_task": {mcpeffect.Read, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		t.views++
		return map[string]any{"title": t.title}, nil
	})},
	// A "non-destructive" write that overwrites.
	"rename_task": {mcpeffect.Write | mcpeffect.Idempotent, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		t.title = a.Title
		return nil, nil
	})},
	// A "non-destructive" write that deletes.
	"purge_task": {mcpeffect.Write, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		delete(s.byID, a.ID)
		return nil, nil
	})},
	// A "non-destructive" write that fills an empty note, and on its
	// repeat overwrites the note it filled.
	"append_note": {mcpeffect.Write, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		t.note += a.Note
		return nil, nil
	})},
	// An "idempotent" write that appends again on its repeat.
	"track_time": {mcpeffect.Idempotent, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		s.entries = append(s.entries, entry{a.ID, a.Minutes})
		return nil, nil
	})},
	// A "destructive" write that only adds.
	"star_task": {mcpeffect.Destructive | mcpeffect.Idempotent, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		s.stars[a.ID] = true
		return nil, nil
	})},
	// A write "not idempotent" that converges.
	"archive_task": {mcpeffect.Destructive, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		t.status = "archived"
		return nil, nil
	})},
	// A "write" that writes nothing.
	"ping_task": {mcpeffect.Idempotent, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		return nil, nil
	})},
	// An undo that does not restore: the task goes to the Trash without
	// its title.
	"discard_task": {mcpeffect.Destructive | mcpeffect.Idempotent, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		delete(s.byID, a.ID)
		t.title = ""
		s.trash[a.ID] = t
		return nil, nil
	})},
	// An undo that cannot work: the task is gone for good.
	"shred_task": {mcpeffect.Destructive | mcpeffect.Idempotent, withTask(func(s *tasks, t *task, a taskArgs) (any, error) {
		delete(s.byID, a.ID)
		return nil, nil
	})},
	// A write that fails halfway, leaving what it did.
	"import_tasks": {mcpeffect.Write, func(s *tasks, a taskArgs) (any, error) {
		s.byID[newID()] = &task{title: a.Title, status: "open"}
		return nil, errors.New("import failed at the second task")
	}},
}

// undos are the recoveries the test server declares, for the tools it
// has: each undone by restore_task with the task's id.
var undos = map[string]string{"trash_task": "restore_task", "discard_task": "restore_task", "shred_task": "restore_task"}

// taskServer returns a function that makes a fresh task server with the
// named tools, which Verify calls once per example.
func taskServer(names ...string) func(testing.TB) mcpeffecttest.Instance[*tasks] {
	return func(t testing.TB) mcpeffecttest.Instance[*tasks] {
		st := &tasks{byID: make(map[string]*task), stars: make(map[string]bool), trash: make(map[string]*task), seed: newID()}
		st.byID[st.seed] = &task{title: "Buy milk", status: "open"}
		r := mcpeffect.NewRegistry()
		s := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "v1"}, nil)
		for _, name := range names {
			def, ok := toolDefs[name]
			if !ok {
				t.Fatalf("no tool %q", name)
			}
			mcpeffect.AddTool(s, r, &mcp.Tool{Name: name}, def.effect,
				func(_ context.Context, _ *mcp.CallToolRequest, a taskArgs) (*mcp.CallToolResult, any, error) {
					st.mu.Lock()
					defer st.mu.Unlock()
					out, err := def.do(st, a)
					return nil, out, err
				})
		}
		for _, name := range names {
			if undo, ok := undos[name]; ok {
				if err := r.DeclareRecovery(name, mcpeffect.Compensation(undo, map[string]string{"id": "$request.body#/id"})); err != nil {
					t.Fatal(err)
				}
			}
		}
		s.AddReceivingMiddleware(r.Middleware(nil))
		return mcpeffecttest.Instance[*tasks]{Server: s, Registry: r, State: st.state, Env: st}
	}
}

// onSeed is a Setup that calls the tool on the task the instance starts
// with, whose id is only known at run time.
func onSeed(a taskArgs) func(testing.TB, *tasks, *mcpeffecttest.Session) any {
	return func(_ testing.TB, s *tasks, _ *mcpeffecttest.Session) any {
		a.ID = s.seed
		return a
	}
}

// onNewTask is a Setup that first files a task through the server's own
// create_task, then calls the tool on it.
func onNewTask(a taskArgs) func(testing.TB, *tasks, *mcpeffecttest.Session) any {
	return func(_ testing.TB, _ *tasks, s *mcpeffecttest.Session) any {
		var created struct{ ID string }
		s.CallTool("create_task", map[string]any{"title": "Call Bob"}, &created)
		a.ID = created.ID
		return a
	}
}

// onTrashedSeed is a Setup that moves the task the instance starts with
// to the Trash, and then calls the tool on it.
func onTrashedSeed(_ testing.TB, st *tasks, _ *mcpeffecttest.Session) any {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.trash[st.seed] = st.byID[st.seed]
	delete(st.byID, st.seed)
	return taskArgs{ID: st.seed}
}

func readOnly(ctx context.Context, _ *tasks) context.Context {
	return mcpeffect.WithConnectionScope(ctx, mcpeffect.ReadOnly)
}

// honest holds an example that passes for each tool that tells the truth.
var honest = []mcpeffecttest.Example[*tasks]{
	{Tool: "get_task", Name: "the seed", Setup: onSeed(taskArgs{})},
	{Tool: "create_task", Name: "a title", Args: map[string]any{"title": "Buy bread"}},
	{Tool: "add_note", Name: "fills the empty note", Setup: onSeed(taskArgs{Note: "semi-skimmed"})},
	{Tool: "log_time", Name: "half an hour", Setup: onSeed(taskArgs{Minutes: 30})},
	{Tool: "complete_task", Name: "the seed", Setup: onSeed(taskArgs{})},
	{Tool: "complete_task", Name: "refused to a read-only caller", Setup: onSeed(taskArgs{}), Caller: readOnly, WantError: `tool "complete_task" is refused`},
	{Tool: "bump_priority", Name: "a new task", Setup: onNewTask(taskArgs{})},
	{Tool: "delete_task", Name: "the seed", Setup: onSeed(taskArgs{})},
}

func honestTools() []string {
	var names []string
	for _, ex := range honest {
		if !slices.Contains(names, ex.Tool) {
			names = append(names, ex.Tool)
		}
	}
	return names
}

// A verifyRecorder also keeps what Verify logs.
type verifyRecorder struct {
	recorder
	logs []string
}

func (r *verifyRecorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

// A record key of the test server, whose ids are random.
const taskKey = `record "task/[0-9a-f]{8}"`

func TestVerify(t *testing.T) {
	tests := []struct {
		name     string
		tools    []string
		examples []mcpeffecttest.Example[*tasks]
		opts     *mcpeffecttest.VerifyOptions
		want     []string // a regular expression for each failure, in order
		wantLogs []string // a regular expression for each line logged, in order
	}{
		{
			name:  "every correct classification",
			tools: honestTools(), examples: honest,
			// delete_task's repeat finds no task, which changes nothing.
			wantLogs: []string{`^tool "delete_task", example "the seed": the repeat failed: no task "[0-9a-f]{8}"$`},
		},
		{
			name: "a read that writes", tools: []string{"peek_task"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "peek_task", Name: "the seed", Setup: onSeed(taskArgs{})}},
			want: []string{`^tool "peek_task" is classified read, but example "the seed" changed the state on its first call, which a read must not:\n\t` +
				taskKey + `, field "views": 0 → 1$`},
		},
		{
			name: "a non-destructive write that overwrites", tools: []string{"rename_task"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "rename_task", Name: "to bread", Setup: onSeed(taskArgs{Title: "Buy bread"})}},
			want: []string{`^tool "rename_task" is classified write\|idempotent, not destructive, but example "to bread" changed or removed existing values on its first call, which only a destructive write may:\n\t` +
				taskKey + `, field "title": "Buy milk" → "Buy bread"$`},
		},
		{
			name: "a non-destructive write that deletes", tools: []string{"purge_task"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "purge_task", Name: "the seed", Setup: onSeed(taskArgs{})}},
			want: []string{`^tool "purge_task" is classified write, not destructive, but example "the seed" changed or removed existing values on its first call, which only a destructive write may:\n\t` +
				taskKey + ` removed; it was \{"priority":0,"status":"open","title":"Buy milk","views":0\}$`},
			wantLogs: []string{`^tool "purge_task", example "the seed": the repeat failed: no task "[0-9a-f]{8}"$`},
		},
		{
			name: "a non-destructive write that overwrites on its repeat", tools: []string{"append_note"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "append_note", Name: "twice", Setup: onSeed(taskArgs{Note: "ask Bob"})}},
			want: []string{`^tool "append_note" is classified write, not destructive, but example "twice" changed or removed existing values on its repeat, which only a destructive write may:\n\t` +
				taskKey + `, field "note": "ask Bob" → "ask Bobask Bob"$`},
		},
		{
			name: "an idempotent write that appends on its repeat", tools: []string{"track_time"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "track_time", Name: "an hour", Setup: onSeed(taskArgs{Minutes: 60})}},
			want: []string{`^tool "track_time" is classified write\|idempotent, but example "an hour", repeated with the same arguments, changed the state again, which an idempotent write must not:\n\t` +
				`record "entry/1" added: \{"minutes":60,"task":"[0-9a-f]{8}"\}$`},
		},
		{
			name: "a destructive write that never destroys", tools: []string{"star_task"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "star_task", Setup: onSeed(taskArgs{})}},
			want:     []string{`^tool "star_task" is classified write\|destructive\|idempotent, but no example changed or removed an existing value: hosts will ask people before calls that destroy nothing\. Give an example that shows it`},
		},
		{
			name: "a write not idempotent whose repeat changes nothing", tools: []string{"archive_task"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "archive_task", Setup: onSeed(taskArgs{})}},
			want:     []string{`^tool "archive_task" is classified write\|destructive, not idempotent, but no example's repeat changed anything: hosts will warn people against retrying calls that are safe to retry\. Give an example`},
		},
		{
			name: "a write that changes nothing", tools: []string{"ping_task"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "ping_task", Setup: onSeed(taskArgs{})}},
			want:     []string{`^tool "ping_task" is classified write\|idempotent, but no example changed anything: either the examples do not reach its write or it is a read\. `},
		},
		{
			name: "over-cautious, waived with a reason", tools: []string{"star_task", "archive_task"},
			examples: []mcpeffecttest.Example[*tasks]{
				{Tool: "star_task", Setup: onSeed(taskArgs{})},
				{Tool: "archive_task", Setup: onSeed(taskArgs{})},
			},
			opts: &mcpeffecttest.VerifyOptions{Overcautious: map[string]string{
				"star_task":    "a star will soon replace the last one",
				"archive_task": "archiving will soon record when, each time",
			}},
			wantLogs: []string{
				`^tool "archive_task" is classified write\|destructive, not idempotent, but no example's repeat changed anything: .*; waived: archiving will soon record when, each time$`,
				`^tool "star_task" is classified write\|destructive\|idempotent, but no example changed or removed an existing value: .*; waived: a star will soon replace the last one$`,
			},
		},
		{
			name: "waivers that are not true", tools: []string{"get_task", "complete_task", "star_task"},
			examples: []mcpeffecttest.Example[*tasks]{
				{Tool: "get_task", Setup: onSeed(taskArgs{})},
				{Tool: "complete_task", Setup: onSeed(taskArgs{})},
				{Tool: "star_task", Setup: onSeed(taskArgs{})},
			},
			opts: &mcpeffecttest.VerifyOptions{Overcautious: map[string]string{
				"complete_task": "it might not destroy",
				"get_task":      "reads are cheap",
				"nope":          "no such tool",
				"star_task":     "  ",
			}},
			want: []string{
				`^VerifyOptions.Overcautious waives tool "get_task", a read, which claims nothing to waive$`,
				`^VerifyOptions.Overcautious waives tool "nope", which is not a classified tool of the server$`,
				`^VerifyOptions.Overcautious waives tool "star_task" without a reason$`,
				`^tool "complete_task" is waived in VerifyOptions.Overcautious \("it might not destroy"\), but its examples show all its classification write\|destructive\|idempotent claims: remove the waiver$`,
			},
			wantLogs: []string{`^tool "star_task" is classified .*; waived:   $`},
		},
		{
			name: "a tool with no example", tools: []string{"get_task", "create_task"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "get_task", Setup: onSeed(taskArgs{})}},
			want:     []string{`^tool "create_task", classified write, has no example: its effect is not proved$`},
		},
		{
			name: "arguments the schema refuses", tools: []string{"get_task"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "get_task", Name: "a number", Args: map[string]any{"id": 5}}},
			want:     []string{`^tool "get_task", example "a number": the tool's input schema refuses the example's arguments \{"id":5\}: .*id.*string`},
		},
		{
			name: "arguments that are not an object", tools: []string{"get_task"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "get_task", Name: "a list", Args: []string{"x"}}},
			want:     []string{`^tool "get_task", example "a list": the example's arguments: they must marshal to a JSON object, not \["x"\]$`},
		},
		{
			name: "examples that only meet errors", tools: []string{"get_task", "create_task"},
			examples: []mcpeffecttest.Example[*tasks]{
				{Tool: "get_task", Name: "missing", Args: taskArgs{ID: "nope"}},
				{Tool: "create_task", Name: "as a reader", Caller: readOnly, Args: taskArgs{Title: "x"}},
			},
			want: []string{
				`^tool "create_task", example "as a reader": the example did not reach the tool's work: .*mcpeffect: tool "create_task" is refused: it needs the non-destructive scope`,
				`^tool "get_task", example "missing": the example did not reach the tool's work: no task "nope"$`,
			},
		},
		{
			name: "every example expects an error", tools: []string{"complete_task"},
			examples: []mcpeffecttest.Example[*tasks]{{Tool: "complete_task", Setup: onSeed(taskArgs{}), Caller: readOnly, WantError: "refused"}},
			want:     []string{`^tool "complete_task", classified write\|destructive\|idempotent, has no example that reaches its work: every one expects an error$`},
		},
		{
			name: "expected errors that are not as expected", tools: []string{"get_task", "import_tasks"},
			examples: []mcpeffecttest.Example[*tasks]{
				{Tool: "get_task", Name: "succeeds", Setup: onSeed(taskArgs{}), WantError: "no task"},
				{Tool: "get_task", Name: "another error", Args: taskArgs{ID: "nope"}, WantError: "permission"},
				{Tool: "get_task", Name: "the seed", Setup: onSeed(taskArgs{})},
				{Tool: "import_tasks", Name: "half done", Args: taskArgs{Title: "Imported"}, WantError: "import failed"},
			},
			want: []string{
				`^tool "get_task", example "succeeds": the example expects an error containing "no task", but its first call succeeded$`,
				`^tool "get_task", example "another error": the example expects an error containing "permission", but its first call failed with another: no task "nope"$`,
				`^tool "import_tasks", example "half done": its first call failed, as expected, but changed the state, which a refused call must not:\n\t` +
					taskKey + ` added: \{"priority":0,"status":"open","title":"Imported","views":0\}$`,
			},
		},
		{
			name: "an undo that restores", tools: []string{"trash_task", "restore_task"},
			examples: []mcpeffecttest.Example[*tasks]{
				{Tool: "trash_task", Name: "the seed", Setup: onSeed(taskArgs{}), Undo: true},
				{Tool: "restore_task", Name: "the seed, trashed", Setup: onTrashedSeed},
			},
			wantLogs: []string{
				`^tool "restore_task", example "the seed, trashed": the repeat failed: no task "[0-9a-f]{8}" in the Trash$`,
				`^tool "trash_task", example "the seed": the repeat failed: no task "[0-9a-f]{8}"$`,
			},
		},
		{
			name: "undos that do not restore", tools: []string{"discard_task", "shred_task", "delete_task", "restore_task"},
			examples: []mcpeffecttest.Example[*tasks]{
				{Tool: "discard_task", Name: "the seed", Setup: onSeed(taskArgs{}), Undo: true},
				{Tool: "shred_task", Name: "the seed", Setup: onSeed(taskArgs{}), Undo: true},
				{Tool: "delete_task", Name: "no undo", Setup: onSeed(taskArgs{}), Undo: true},
				{Tool: "delete_task", Name: "refused", Setup: onSeed(taskArgs{}), Caller: readOnly, WantError: "refused", Undo: true},
				{Tool: "restore_task", Name: "the seed, trashed", Setup: onTrashedSeed},
			},
			want: []string{
				`^tool "delete_task", example "refused": Undo checks the undo of a call that succeeds, and WantError says this one fails: give the undo an example of its own$`,
				`^tool "delete_task", example "no undo": the example checks its undo, but the tool publishes none \(see Registry.DeclareRecovery\)$`,
				`^tool "discard_task" publishes "restore_task" as its undo, but in example "the seed", "restore_task" called with \{"id":"[0-9a-f]{8}"\} after the call did not restore the state the call changed \(before the call → after the undo\):\n\t` +
					taskKey + `, field "title": "Buy milk" → empty$`,
				`^tool "shred_task", example "the seed": its undo, "restore_task" with \{"id":"[0-9a-f]{8}"\}, failed: no task "[0-9a-f]{8}" in the Trash$`,
			},
			wantLogs: []string{
				`^tool "delete_task", example "no undo": the repeat failed: no task "[0-9a-f]{8}"$`,
				`^tool "discard_task", example "the seed": the repeat failed: no task "[0-9a-f]{8}"$`,
				`^tool "restore_task", example "the seed, trashed": the repeat failed: no task "[0-9a-f]{8}" in the Trash$`,
				`^tool "shred_task", example "the seed": the repeat failed: no task "[0-9a-f]{8}"$`,
			},
		},
		{
			name:  "tools and examples that do not match",
			tools: []string{"get_task"},
			examples: []mcpeffecttest.Example[*tasks]{
				{Tool: "get_task", Name: "twice", Setup: onSeed(taskArgs{})},
				{Tool: "get_task", Name: "twice", Setup: onSeed(taskArgs{})},
				{Tool: "get_tasks", Name: "a typo"},
			},
			want: []string{
				`^tool "get_task" has two examples named "twice"$`,
				`^example 2 \("a typo"\) calls tool "get_tasks", which is not on the server$`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &verifyRecorder{recorder: recorder{TB: t}}
			mcpeffecttest.Verify(rec, taskServer(tt.tools...), tt.examples, tt.opts)
			matchAll(t, "failure", rec.errs, tt.want)
			matchAll(t, "log", rec.logs, tt.wantLogs)
		})
	}
}

// matchAll fails t unless each of got matches the expression of want at
// the same place.
func matchAll(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("Verify reported %d %ss, want %d:\n%s", len(got), what, len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(got[i]) {
			t.Errorf("%s %d =\n%s\nwant it to match\n%s", what, i, got[i], w)
		}
	}
}

// TestVerifyRegistry shows Verify failing a server and a registry that do
// not hold the same tools.
func TestVerifyRegistry(t *testing.T) {
	newInstance := func(t testing.TB) mcpeffecttest.Instance[*tasks] {
		inst := taskServer("get_task")(t)
		inst.Registry.Add("ghost", mcpeffect.Write)
		mcp.AddTool(inst.Server, &mcp.Tool{Name: "sneaky"}, func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
		return inst
	}
	examples := []mcpeffecttest.Example[*tasks]{
		{Tool: "get_task", Setup: onSeed(taskArgs{})},
		{Tool: "sneaky"},
	}
	rec := &verifyRecorder{recorder: recorder{TB: t}}
	mcpeffecttest.Verify(rec, newInstance, examples, nil)
	matchAll(t, "failure", rec.errs, []string{
		`^tool "sneaky" is on the server but has no effect classification: there is nothing to verify$`,
		`^tool "ghost" is classified write but is not on the server$`,
	})
}

// TestVerifyUnreadableSchema shows Verify leaving to the server the
// arguments of a tool whose advertised schema it cannot resolve, and
// saying so.
func TestVerifyUnreadableSchema(t *testing.T) {
	newInstance := func(t testing.TB) mcpeffecttest.Instance[*tasks] {
		inst := taskServer()(t)
		schema := map[string]any{"type": "object", "$ref": "https://schemas.example/task.json"}
		mcpeffect.AddToolHandler(inst.Server, inst.Registry, &mcp.Tool{Name: "remote", InputSchema: schema}, mcpeffect.Read,
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		return inst
	}
	rec := &verifyRecorder{recorder: recorder{TB: t}}
	mcpeffecttest.Verify(rec, newInstance, []mcpeffecttest.Example[*tasks]{{Tool: "remote"}}, nil)
	matchAll(t, "failure", rec.errs, nil)
	matchAll(t, "log", rec.logs, []string{`^tool "remote": its input schema cannot be read \(.+\); only the server will check the examples' arguments$`})
}

// TestVerifyUnstableRegistry shows Verify failing an example whose
// instance classifies its tool otherwise than the first instance did.
func TestVerifyUnstableRegistry(t *testing.T) {
	made := 0
	newInstance := func(t testing.TB) mcpeffecttest.Instance[*tasks] {
		made++
		inst := taskServer()(t)
		e := mcpeffect.Read
		if made > 1 {
			e = mcpeffect.Write
		}
		mcpeffect.AddTool(inst.Server, inst.Registry, &mcp.Tool{Name: "flaky"}, e,
			func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
				return nil, nil, nil
			})
		return inst
	}
	rec := &verifyRecorder{recorder: recorder{TB: t}}
	mcpeffecttest.Verify(rec, newInstance, []mcpeffecttest.Example[*tasks]{{Tool: "flaky"}}, nil)
	matchAll(t, "failure", rec.errs, []string{`^tool "flaky", example "#1": the example's instance classifies the tool write, but the first instance Verify made classified it read$`})
}

// TestVerifyNilCaller shows a Caller that returns no context failing its
// example rather than the test.
func TestVerifyNilCaller(t *testing.T) {
	rec := &verifyRecorder{recorder: recorder{TB: t}}
	mcpeffecttest.Verify(rec, taskServer("get_task"), []mcpeffecttest.Example[*tasks]{
		{Tool: "get_task", Setup: onSeed(taskArgs{}), Caller: func(context.Context, *tasks) context.Context { return nil }},
	}, nil)
	matchAll(t, "failure", rec.errs, []string{`^tool "get_task", example "#1": the example's Caller returned a nil context$`})
}

// TestVerifyCallers shows who calls: the instance's caller by default, an
// example's own where it has one, and whoever makes a fixture, which is
// not measured.
func TestVerifyCallers(t *testing.T) {
	type caller struct{}
	as := func(ctx context.Context, name string, s mcpeffect.Scope) context.Context {
		return mcpeffect.WithConnectionScope(context.WithValue(ctx, caller{}, name), s)
	}
	// whoami is a "read" that records its caller as a record of its own,
	// so that Verify's failure names who called.
	newInstance := func(t testing.TB) mcpeffecttest.Instance[*tasks] {
		inst := taskServer("get_task")(t)
		var mu sync.Mutex
		seen := make(map[string]bool)
		mcpeffect.AddTool(inst.Server, inst.Registry, &mcp.Tool{Name: "whoami"}, mcpeffect.Read,
			func(ctx context.Context, _ *mcp.CallToolRequest, _ taskArgs) (*mcp.CallToolResult, any, error) {
				mu.Lock()
				defer mu.Unlock()
				name, _ := ctx.Value(caller{}).(string)
				seen[name] = true
				return nil, nil, nil
			})
		state := inst.State
		inst.State = func(ctx context.Context) (mcpeffecttest.State, error) {
			st, err := state(ctx)
			mu.Lock()
			defer mu.Unlock()
			for name := range seen {
				st["caller/"+name] = nil
			}
			return st, err
		}
		inst.Caller = func(ctx context.Context) context.Context { return as(ctx, "person", mcpeffect.Full) }
		return inst
	}
	examples := []mcpeffecttest.Example[*tasks]{
		{Tool: "get_task", Setup: onSeed(taskArgs{})},
		{Tool: "whoami", Name: "the instance's caller"},
		{Tool: "whoami", Name: "an agent, after fixtures by others",
			Setup: func(t testing.TB, _ *tasks, s *mcpeffecttest.Session) any {
				s.CallTool("whoami", nil, nil)
				s.Connect(as(t.Context(), "admin", mcpeffect.Full)).CallTool("whoami", nil, nil)
				return nil
			},
			Caller: func(ctx context.Context, _ *tasks) context.Context { return as(ctx, "agent", mcpeffect.ReadOnly) },
		},
	}
	rec := &verifyRecorder{recorder: recorder{TB: t}}
	mcpeffecttest.Verify(rec, newInstance, examples, nil)
	matchAll(t, "failure", rec.errs, []string{
		`^tool "whoami" is classified read, but example "the instance's caller" changed the state on its first call, which a read must not:\n\trecord "caller/person" added: \{\}$`,
		`^tool "whoami" is classified read, but example "an agent, after fixtures by others" changed the state on its first call, which a read must not:\n\trecord "caller/agent" added: \{\}$`,
	})
}

// TestVerifyParallel runs the honest examples in parallel subtests of a
// real *testing.T, for the race detector: a failure here fails the test.
func TestVerifyParallel(t *testing.T) {
	mcpeffecttest.Verify(t, taskServer(honestTools()...), honest, &mcpeffecttest.VerifyOptions{Parallel: true})
}

// TestVerifySubtests runs Verify in a child process on a *testing.T whose
// lying tools must fail, and reads the failures in the subtests named
// after each tool and example.
func TestVerifySubtests(t *testing.T) {
	if os.Getenv("MCPEFFECTTEST_CHILD") == "1" {
		mcpeffecttest.Verify(t, taskServer("get_task", "peek_task", "star_task"), []mcpeffecttest.Example[*tasks]{
			{Tool: "get_task", Name: "the seed", Setup: onSeed(taskArgs{})},
			{Tool: "peek_task", Name: "the seed", Setup: onSeed(taskArgs{})},
			{Tool: "star_task", Name: "the seed", Setup: onSeed(taskArgs{})},
		}, &mcpeffecttest.VerifyOptions{Parallel: true})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestVerifySubtests$", "-test.v")
	cmd.Env = append(os.Environ(), "MCPEFFECTTEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child test passed, want it to fail:\n%s", out)
	}
	for _, want := range []string{
		"--- PASS: TestVerifySubtests/get_task/the_seed",
		"--- FAIL: TestVerifySubtests/peek_task/the_seed",
		`tool "peek_task" is classified read, but example "the seed" changed the state`,
		"--- PASS: TestVerifySubtests/star_task/the_seed",
		"--- FAIL: TestVerifySubtests/star_task ",
		`tool "star_task" is classified write|destructive|idempotent, but no example changed or removed an existing value`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
		}
	}
}

// TestVerifyHostileUndo holds Verify to what a listing may say of a
// tool's undo when it was not published by the registry (a server in
// another process, reached through Instance.Connect, publishes what it
// likes): an undo that is not an object, one whose tool name holds a
// terminal escape and a right-to-left override, and one that names a
// tool the server does not list. Each fails its example, and no failure
// carries the server's control or format characters as they are.
func TestVerifyHostileUndo(t *testing.T) {
	hostile := "gone\x1b[2J\u202e"
	newInstance := func(t testing.TB) mcpeffecttest.Instance[*tasks] {
		inst := taskServer()(t)
		st := inst.Env
		wipe := func(_ context.Context, _ *mcp.CallToolRequest, a taskArgs) (*mcp.CallToolResult, any, error) {
			st.mu.Lock()
			defer st.mu.Unlock()
			if _, ok := st.byID[a.ID]; !ok {
				return nil, nil, fmt.Errorf("no task %q", a.ID)
			}
			delete(st.byID, a.ID)
			return nil, nil, nil
		}
		for name, published := range map[string]any{
			"wipe_task":  hostile,
			"smash_task": map[string]any{"strategy": "compensation", "compensatingOperation": map[string]any{"operationId": hostile, "parameters": map[string]any{}}},
			"drop_task":  map[string]any{"strategy": "compensation", "compensatingOperation": map[string]any{"operationId": "restore_nowhere", "parameters": map[string]any{}}},
		} {
			tool := &mcp.Tool{Name: name, Meta: mcp.Meta{mcpeffect.RecoveryMetaKey: published}}
			mcpeffect.AddTool(inst.Server, inst.Registry, tool, mcpeffect.Destructive|mcpeffect.Idempotent, wipe)
		}
		return inst
	}
	examples := []mcpeffecttest.Example[*tasks]{
		{Tool: "wipe_task", Name: "the seed", Setup: onSeed(taskArgs{}), Undo: true},
		{Tool: "smash_task", Name: "the seed", Setup: onSeed(taskArgs{}), Undo: true},
		{Tool: "drop_task", Name: "the seed", Setup: onSeed(taskArgs{}), Undo: true},
	}
	rec := &verifyRecorder{recorder: recorder{TB: t}}
	mcpeffecttest.Verify(rec, newInstance, examples, nil)
	matchAll(t, "failure", rec.errs, []string{
		`^tool "drop_task", example "the seed": its undo, "restore_nowhere", is not a tool the server lists$`,
		`^tool "smash_task", example "the seed": the example checks its undo, but the undo the tool publishes cannot be used: .*invalid recovery: operationId: .*tool name "gone\\x1b\[2J\\u202e": character '\\x1b' at byte 4 is not allowed`,
		`^tool "wipe_task", example "the seed": the example checks its undo, but the undo the tool publishes cannot be used: .*not a recovery object`,
	})
	for _, e := range rec.errs {
		if strings.ContainsAny(e, "\x1b\u202e") {
			t.Errorf("a failure carries the server's control or format characters: %q", e)
		}
	}
}
