package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// trashServer keeps notes as files of dir/notes, with a Trash in
// dir/trash, and publishes the undo of each write (SEP-3172, in the _meta
// of its tools, as mcpeffect does): create_note is undone by purge_note,
// bound from its result; trash_note by restore_note, which restores the
// note whole; shred_note by unshred_note, which restores only its first
// line: an undo that lies. Its calls with an idempotency key run once,
// and it declares so (SEP-3182), on a transport that its enforcer
// returns, given the server's own.
func trashServer(dir string) (*mcp.Server, func(mcp.Transport) mcp.Transport, error) {
	for _, d := range []string{"notes", "trash"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, nil, err
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "trash", Version: "1.0.0"}, nil)
	r := mcpeffect.NewRegistry()
	note := func(name string) string { return filepath.Join(dir, "notes", filepath.Base(name)) }
	trashed := func(name string) string { return filepath.Join(dir, "trash", filepath.Base(name)) }
	ok := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	type created struct {
		ID string `json:"id"`
	}
	type newNote struct {
		Name string `json:"name"`
		Text string `json:"text"`
	}
	type named struct {
		Name string `json:"name"`
	}
	type byID struct {
		ID string `json:"id"`
	}
	// move moves the file from to to: done already if from is gone and to
	// is there, so that a repeat changes nothing.
	move := func(from, to string) error {
		err := os.Rename(from, to)
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(to); serr == nil {
				return nil
			}
			return fmt.Errorf("no note %s", filepath.Base(from))
		}
		return err
	}
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "create_note", Description: "Make a new note, NAME-1, NAME-2..."}, mcpeffect.Write,
		func(_ context.Context, _ *mcp.CallToolRequest, in newNote) (*mcp.CallToolResult, created, error) {
			for n := 1; ; n++ {
				id := fmt.Sprintf("%s-%d", filepath.Base(in.Name), n)
				f, err := os.OpenFile(note(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if errors.Is(err, fs.ErrExist) {
					continue
				}
				if err != nil {
					return nil, created{}, err
				}
				_, err = f.WriteString(in.Text)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				return nil, created{id}, err
			}
		})
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "purge_note", Description: "Delete a note for good."}, mcpeffect.Destructive|mcpeffect.Idempotent,
		func(_ context.Context, _ *mcp.CallToolRequest, in byID) (*mcp.CallToolResult, any, error) {
			if err := os.Remove(note(in.ID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, nil, err
			}
			return ok, nil, nil
		})
	for _, t := range []struct {
		name, description string
		from, to          func(string) string
	}{
		{"trash_note", "Move a note to the Trash.", note, trashed},
		{"restore_note", "Take a note out of the Trash.", trashed, note},
		{"shred_note", "Move a note to the Trash, to be restored by unshred_note.", note, trashed},
	} {
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: t.name, Description: t.description}, mcpeffect.Destructive|mcpeffect.Idempotent,
			func(_ context.Context, _ *mcp.CallToolRequest, in named) (*mcp.CallToolResult, any, error) {
				return ok, nil, move(t.from(in.Name), t.to(in.Name))
			})
	}
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "unshred_note", Description: "Take a shredded note out of the Trash: its first line."}, mcpeffect.Destructive|mcpeffect.Idempotent,
		func(_ context.Context, _ *mcp.CallToolRequest, in named) (*mcp.CallToolResult, any, error) {
			text, err := os.ReadFile(trashed(in.Name))
			if errors.Is(err, fs.ErrNotExist) {
				return ok, nil, move(trashed(in.Name), note(in.Name))
			}
			if err != nil {
				return nil, nil, err
			}
			first, _, _ := strings.Cut(string(text), "\n")
			if err := os.WriteFile(note(in.Name), []byte(first), 0o644); err != nil {
				return nil, nil, err
			}
			return ok, nil, os.Remove(trashed(in.Name))
		})
	for tool, rec := range map[string]mcpeffect.Recovery{
		"create_note": mcpeffect.Compensation("purge_note", map[string]string{"id": "$response.body#/id"}),
		"trash_note":  mcpeffect.Compensation("restore_note", map[string]string{"name": "$request.body#/name"}),
		"shred_note":  mcpeffect.Compensation("unshred_note", map[string]string{"name": "$request.body#/name"}),
	} {
		if err := r.DeclareRecovery(tool, rec); err != nil {
			return nil, nil, err
		}
	}
	e := r.Enforcer(&mcpeffect.MiddlewareOptions{Idempotency: &mcpeffect.IdempotencyOptions{}})
	s.AddReceivingMiddleware(e.Middleware())
	return s, e.IdempotencyTransport, nil
}

// serveTrash serves trashServer over stdio, on the directory shelfDirEnv
// names: the "trash" server of TestMain.
func serveTrash() error {
	s, carry, err := trashServer(os.Getenv(shelfDirEnv))
	if err != nil {
		return err
	}
	return s.Run(mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), carry(&mcp.StdioTransport{}))
}

// TestAuditTrashServer audits the trash server over stdio: each undo it
// publishes is shown, with no finding, and its idempotency is declared.
func TestAuditTrashServer(t *testing.T) {
	code, r := auditJSON(t, append([]string{"-fail-on", "warning"}, stdioServer(t, "trash")...)...)
	if code != exitOK || len(r.Findings) != 0 {
		t.Errorf("exit %d, findings %+v; want a clean audit", code, r.Findings)
	}
	if !r.Summary.Idempotency || !r.Server.Idempotency || r.Summary.Recoveries != 3 {
		t.Errorf("summary %+v, server %+v: want idempotency and 3 undos", r.Summary, r.Server)
	}
	want := map[string]string{
		"create_note": "purge_note(id: $response.body#/id)",
		"trash_note":  "restore_note(name: $request.body#/name)",
		"shred_note":  "unshred_note(name: $request.body#/name)",
	}
	for _, tool := range r.Tools {
		got := ""
		if tool.Recovery != nil {
			got = audit.RecoveryText(*tool.Recovery)
		}
		if got != want[tool.Name] {
			t.Errorf("%s: undo %q, want %q", tool.Name, got, want[tool.Name])
		}
	}
	res := runCommand(t, append([]string{"audit"}, stdioServer(t, "trash")...)...)
	for _, line := range []string{
		"trash_note   restore_note  name = $request.body#/name  _meta",
		"create_note  purge_note    id = $response.body#/id     _meta",
		"Retries: the server declares capabilities.tools.idempotency (SEP-3182)",
	} {
		if !strings.Contains(res.stdout, line) {
			t.Errorf("the audit does not say %q:\n%s", line, res.stdout)
		}
	}
}

// TestVerifyUndo verifies the trash server with the undo of each write
// checked: the undos that restore are proven, the one that restores only
// a part is a lie naming the record and field it left changed, in every
// format, and an example that asks for the undo of a tool that publishes
// none fails. Through mcpeffect run in this process, and as a process of
// its own.
func TestVerifyUndo(t *testing.T) {
	// Its examples: each write asks for its undo to be checked, and
	// purge_note too, which publishes none.
	path := filepath.Join("testdata", "verify", "trash.json")
	args := append([]string{"verify", "-json", "-timeout", "2m", "-examples", path}, stdioServer(t, "trash")...)
	res := runCommand(t, args...)
	var r verify.Report
	if err := decodeReport(res.stdout, &r); err != nil {
		t.Fatalf("exit %d, %s: %v", res.code, res.stderr, err)
	}
	if res.code != exitFindings {
		t.Errorf("exit %d, want %d", res.code, exitFindings)
	}
	checkVerdicts(t, &r, map[string]verify.Verdict{
		"create_note": verify.Proven, "trash_note": verify.Proven, "shred_note": verify.Lie,
		"restore_note": verify.Proven, "unshred_note": verify.Proven, "purge_note": verify.Failed,
	}, nil)

	undo := func(tool string) *verify.UndoReport {
		t.Helper()
		tr := r.Tool(tool)
		if tr == nil || len(tr.Examples) != 1 || tr.Examples[0].Undo == nil {
			t.Fatalf("%s: no undo checked: %s", tool, mustJSON(t, tr))
		}
		return tr.Examples[0].Undo
	}
	for tool, want := range map[string]verify.UndoReport{
		"create_note": {Tool: "purge_note", Arguments: `{"id":"milk-1"}`, Result: verify.UndoRestored},
		"trash_note":  {Tool: "restore_note", Arguments: `{"name":"milk-1"}`, Result: verify.UndoRestored},
		"shred_note":  {Tool: "unshred_note", Arguments: `{"name":"milk-1"}`, Result: verify.UndoNotRestored},
	} {
		u := undo(tool)
		if u.Tool != want.Tool || u.Arguments != want.Arguments || u.Result != want.Result || u.Error != "" {
			t.Errorf("%s: undo %s, want %s", tool, mustJSON(t, u), mustJSON(t, want))
		}
		if u.Call == nil || u.Call.Count == 0 {
			t.Errorf("%s: the call on the undo's instance changed nothing: %s", tool, mustJSON(t, u))
		}
	}

	// The lie names the record and the field, before the call and after
	// the undo.
	shred := r.Tool("shred_note")
	if shred.Reason != "its undo did not restore what its call changed" {
		t.Errorf("shred_note: reason %q", shred.Reason)
	}
	left := undo("shred_note").Left
	wantLeft := verify.ChangeReport{Kind: "field changed", Record: "notes/milk-1", Field: "content", Before: `"Milk\nbuy 2"`, After: `"Milk"`}
	if left == nil || left.Count != 1 || left.Changes[0] != wantLeft {
		t.Errorf("shred_note: left %s, want %s", mustJSON(t, left), mustJSON(t, wantLeft))
	}
	lies := shred.Examples[0].Lies
	if len(lies) != 1 || lies[0].Rule != "undo" || lies[0].When != "its undo" ||
		!strings.Contains(lies[0].Message, `tool "shred_note" publishes "unshred_note" as its undo, but in example "milk", "unshred_note" called with {"name":"milk-1"} after the call did not restore the state the call changed (before the call → after the undo):`+
			"\n\t"+`record "notes/milk-1", field "content": "Milk\nbuy 2" → "Milk"`) {
		t.Errorf("shred_note: lies %s", mustJSON(t, lies))
	}
	// Its first call and repeat were proven as always: the undo is
	// checked on an instance of its own.
	if ex := shred.Examples[0]; ex.First == nil || ex.First.Count == 0 || ex.Repeat == nil || ex.Repeat.Count != 0 {
		t.Errorf("shred_note: first %s, repeat %s", mustJSON(t, ex.First), mustJSON(t, ex.Repeat))
	}
	purge := r.Tool("purge_note")
	if u := undo("purge_note"); u.Result != verify.UndoFailed || !strings.Contains(purge.Examples[0].Error, "the example checks its undo, but it publishes none") {
		t.Errorf("purge_note: %s", mustJSON(t, purge))
	}

	// Every format says it, the text and the justification with the
	// record and the field.
	for format, want := range map[string][]string{
		"text": {
			`example "milk", undo restore_note with {"name":"milk-1"}: restored the state its call changed`,
			`"unshred_note" called with {"name":"milk-1"} after the call did not restore the state`,
			`record "notes/milk-1", field "content": "Milk\nbuy 2" → "Milk"`,
		},
		"markdown": {"shred\\_note", "its undo did not restore what its call changed"},
		"sarif":    {`its undo did not restore what its call changed`, `record notes/milk-1, field content: \"Milk\\nbuy 2\" -\u003e \"Milk\"`},
		"justification": {
			"**Undo (SEP-3172): `restore_note`.** After the call of example “milk”, which changed 2 records and fields, `restore_note` called with `{\"name\":\"milk-1\"}` restored the state as it was before the call.",
			"**No justification: lie.** its undo did not restore what its call changed: after the call of example “milk”, its undo left field `content` of record `notes/milk-1` at `\"Milk\"`, which was `\"Milk\\nbuy 2\"` before the call, which its undo must restore.",
		},
	} {
		res := runCommand(t, append([]string{"verify", "-format", format, "-timeout", "2m", "-examples", path}, stdioServer(t, "trash")...)...)
		if res.code != exitFindings {
			t.Errorf("-format %s: exit %d: %s", format, res.code, res.stderr)
		}
		if format == "sarif" {
			checkSARIF(t, res.stdout)
		}
		if format == "text" {
			// What the README quotes of it.
			readme, err := os.ReadFile("README.md")
			if err != nil {
				t.Fatal(err)
			}
			_, section, _ := strings.Cut(string(readme), "`TestVerifyUndo` verifies the trash server")
			section, _, _ = strings.Cut(section, "\n### ")
			quoted := 0
			for _, block := range strings.Split(section, "```text\n")[1:] {
				block, _, _ = strings.Cut(block, "```")
				quoted++
				if !strings.Contains(res.stdout, block) {
					t.Errorf("README.md quotes what verify does not print:\n%s\nit prints:\n%s", block, res.stdout)
				}
			}
			if quoted != 2 {
				t.Errorf("README.md quotes %d blocks of the trash server's verify, want 2", quoted)
			}
		}
		for _, w := range want {
			if !strings.Contains(res.stdout, w) {
				t.Errorf("-format %s does not say %q:\n%s", format, w, res.stdout)
			}
		}
	}

	// The same, from mcpeffect as a process of its own.
	child := runChild(t, args...)
	var again verify.Report
	if err := decodeReport(child.stdout, &again); err != nil {
		t.Fatalf("exit %d, %s: %v", child.code, child.stderr, err)
	}
	if child.code != exitFindings || mustJSON(t, again.Summary) != mustJSON(t, r.Summary) {
		t.Errorf("as a process: exit %d, summary %s; in this one %s", child.code, mustJSON(t, again.Summary), mustJSON(t, r.Summary))
	}
}
