package mcpeffect_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRecoveryValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  mcpeffect.Recovery
		want string // in the error; "" for none
	}{
		{"response body", mcpeffect.Compensation("restore", map[string]string{"id": "$response.body#/id"}), ""},
		{"request body", mcpeffect.Compensation("restore", map[string]string{"id": "$request.body#/task_id"}), ""},
		{"whole body", mcpeffect.Compensation("restore", map[string]string{"doc": "$response.body#"}), ""},
		{"escaped pointer", mcpeffect.Compensation("restore", map[string]string{"id": "$response.body#/a~1b/~0c/0"}), ""},
		{"no parameters", mcpeffect.Compensation("restore", nil), ""},
		{"other strategy", mcpeffect.Recovery{Strategy: "manual-only", CompensatingOperation: mcpeffect.CompensatingOperation{OperationID: "restore"}}, `strategy "manual-only"`},
		{"no undo", mcpeffect.Compensation("", nil), "operationId"},
		{"bad undo name", mcpeffect.Compensation("restore trash", nil), "operationId"},
		{"unnamed parameter", mcpeffect.Compensation("restore", map[string]string{"": "$response.body#/id"}), "has no name"},
		{"header", mcpeffect.Compensation("restore", map[string]string{"id": "$response.header.X-Id"}), "is not"},
		{"literal", mcpeffect.Compensation("restore", map[string]string{"id": "42"}), "is not"},
		{"no slash", mcpeffect.Compensation("restore", map[string]string{"id": "$response.body#id"}), "does not begin with /"},
		{"bad escape", mcpeffect.Compensation("restore", map[string]string{"id": "$response.body#/a~2"}), "~0 or ~1"},
		{"trailing tilde", mcpeffect.Compensation("restore", map[string]string{"id": "$request.body#/a~"}), "~0 or ~1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rec.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate: %v, want an error with %q", err, tc.want)
			case err != nil && !errors.Is(err, mcpeffect.ErrInvalidRecovery):
				t.Fatalf("Validate: %v does not wrap ErrInvalidRecovery", err)
			}
		})
	}
}

func TestRecoveryBind(t *testing.T) {
	rec := mcpeffect.Compensation("restore", map[string]string{
		"item_id": "$response.body#/trashed/0/id",
		"project": "$request.body#/project",
		"odd":     "$response.body#/a~1b",
		"big":     "$response.body#/n",
	})
	request := json.RawMessage(`{"project": {"id": "p1", "name": "x"}}`)
	response := json.RawMessage(`{"trashed": [{"id": "t9"}], "a/b": true, "n": 12345678901234567890}`)
	got, err := rec.Bind(request, response)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"item_id": `"t9"`, "project": `{"id":"p1","name":"x"}`, "odd": "true", "big": "12345678901234567890"}
	if len(got) != len(want) {
		t.Fatalf("Bind = %s", got)
	}
	for k, v := range want {
		if string(got[k]) != v {
			t.Errorf("Bind[%q] = %s, want %s", k, got[k], v)
		}
	}
	for _, tc := range []struct {
		name              string
		request, response string
		want              string
	}{
		{"missing member", `{}`, `{"trashed": []}`, `parameter "item_id"`},
		{"no structured content", `{"project": 1}`, ``, "nothing to read it from"},
		{"index out of range", `{"project": 1}`, `{"trashed": []}`, `no element "0" in an array of 0`},
		{"index with a leading zero", `{"project": 1}`, `{"trashed": {"00": 1}}`, `no member "0"`},
		{"through a string", `{"project": 1}`, `{"trashed": "x"}`, "not an object or an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var resp json.RawMessage
			if tc.response != "" {
				resp = json.RawMessage(tc.response)
			}
			one := mcpeffect.Compensation("restore", map[string]string{"item_id": "$response.body#/trashed/0/id"})
			got, err := one.Bind(json.RawMessage(tc.request), resp)
			if err == nil || !strings.Contains(err.Error(), tc.want) || got != nil {
				t.Fatalf("Bind = %s, %v; want no arguments and an error with %q", got, err, tc.want)
			}
			if !strings.Contains(err.Error(), "unavailable") {
				t.Errorf("error %q does not say the recovery is unavailable", err)
			}
		})
	}
}

type trashArgs struct {
	TaskID string `json:"task_id" jsonschema:"the task"`
}

type restoreArgs struct {
	ItemID string `json:"item_id" jsonschema:"the trashed item"`
}

type trashed struct {
	ItemID string `json:"item_id"`
}

// trashServer returns a server with delete_task, which moves a task to
// the Trash, and restore_from_trash, which takes it back, classified in
// r (restore_from_trash is added with go-sdk alone unless classify), and
// enforced with opts.
func trashServer(t *testing.T, r *mcpeffect.Registry, opts *mcpeffect.MiddlewareOptions, classify bool) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "trash", Version: "v1"}, nil)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "delete_task", Description: "Move a task to the Trash."}, mcpeffect.Destructive|mcpeffect.Idempotent,
		func(_ context.Context, _ *mcp.CallToolRequest, in trashArgs) (*mcp.CallToolResult, trashed, error) {
			return nil, trashed{ItemID: in.TaskID}, nil
		})
	restore := func(_ context.Context, _ *mcp.CallToolRequest, in restoreArgs) (*mcp.CallToolResult, trashed, error) {
		return nil, trashed{ItemID: "restored " + in.ItemID}, nil
	}
	if classify {
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: "restore_from_trash", Description: "Take an item back from the Trash."}, mcpeffect.Destructive|mcpeffect.Idempotent, restore)
	} else {
		mcp.AddTool(s, &mcp.Tool{Name: "restore_from_trash", Description: "Take an item back from the Trash."}, restore)
	}
	s.AddReceivingMiddleware(r.Middleware(opts))
	return s
}

func TestDeclareRecovery(t *testing.T) {
	r := mcpeffect.NewRegistry()
	for name, e := range map[string]mcpeffect.Effect{"get_task": mcpeffect.Read, "delete_task": mcpeffect.Destructive | mcpeffect.Idempotent, "create_task": mcpeffect.Write} {
		if err := r.Add(name, e); err != nil {
			t.Fatal(err)
		}
	}
	undo := mcpeffect.Compensation("restore_from_trash", map[string]string{"item_id": "$request.body#/task_id"})
	for _, tc := range []struct {
		name, tool string
		rec        mcpeffect.Recovery
		want       string
	}{
		{"not classified", "purge_task", undo, "is not classified"},
		{"a read", "get_task", undo, "changes nothing: there is nothing to undo"},
		{"undone by a read", "create_task", mcpeffect.Compensation("get_task", nil), `undone by "get_task", which is classified read`},
		{"invalid", "delete_task", mcpeffect.Compensation("restore_from_trash", map[string]string{"item_id": "task_id"}), `parameter "item_id"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := r.DeclareRecovery(tc.tool, tc.rec)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, mcpeffect.ErrInvalidRecovery) {
				t.Fatalf("DeclareRecovery(%q) = %v, want an ErrInvalidRecovery with %q", tc.tool, err, tc.want)
			}
			if _, ok := r.Recovery(tc.tool); ok {
				t.Errorf("the refused recovery of %q was kept", tc.tool)
			}
		})
	}
	// The undo may be classified later; the same declaration twice is
	// accepted, another is not.
	if err := r.DeclareRecovery("delete_task", undo); err != nil {
		t.Fatal(err)
	}
	if err := r.DeclareRecovery("delete_task", undo); err != nil {
		t.Errorf("the same recovery again: %v", err)
	}
	if err := r.DeclareRecovery("delete_task", mcpeffect.Compensation("create_task", nil)); err == nil || !strings.Contains(err.Error(), "has a recovery already") {
		t.Errorf("another recovery: %v", err)
	}
	got, ok := r.Recovery("delete_task")
	if !ok || got.CompensatingOperation.OperationID != "restore_from_trash" || got.CompensatingOperation.Parameters["item_id"] != "$request.body#/task_id" {
		t.Fatalf("Recovery = %+v, %t", got, ok)
	}
	got.CompensatingOperation.Parameters["item_id"] = "changed"
	if again, _ := r.Recovery("delete_task"); again.CompensatingOperation.Parameters["item_id"] != "$request.body#/task_id" {
		t.Error("a caller changed the registry's recovery through the map it was given")
	}
	if err := r.CheckRecoveries(nil); err == nil || !strings.Contains(err.Error(), `"restore_from_trash", which the registry does not classify`) {
		t.Errorf("CheckRecoveries with the undo unclassified: %v", err)
	}
	if err := r.Add("restore_from_trash", mcpeffect.Destructive|mcpeffect.Idempotent); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckRecoveries(nil); err != nil {
		t.Errorf("CheckRecoveries: %v", err)
	}
}

// TestRecoveryListed lists a tool whose undo is declared, through the
// protocol: its recovery is in its _meta, as a client decodes it, with
// HideDenied and without.
func TestRecoveryListed(t *testing.T) {
	for _, hide := range []bool{false, true} {
		r := mcpeffect.NewRegistry()
		s := trashServer(t, r, &mcpeffect.MiddlewareOptions{HideDenied: hide}, true)
		rec := mcpeffect.Compensation("restore_from_trash", map[string]string{"item_id": "$response.body#/item_id"})
		if err := r.DeclareRecovery("delete_task", rec); err != nil {
			t.Fatal(err)
		}
		cs := connect(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("hide %t: %v", hide, err)
		}
		var found bool
		for _, tool := range res.Tools {
			got, has := tool.Meta[mcpeffect.RecoveryMetaKey]
			if tool.Name != "delete_task" {
				if has {
					t.Errorf("hide %t: %s publishes a recovery: %v", hide, tool.Name, got)
				}
				continue
			}
			found = true
			raw, _ := json.Marshal(got)
			want := `{"compensatingOperation":{"operationId":"restore_from_trash","parameters":{"item_id":"$response.body#/item_id"}},"strategy":"compensation"}`
			if string(raw) != want {
				t.Errorf("hide %t: delete_task's recovery is %s, want %s", hide, raw, want)
			}
		}
		if !found {
			t.Errorf("hide %t: delete_task not listed", hide)
		}
		// The server's own tool is unchanged: the listing has a copy.
		for _, tool := range res.Tools {
			if tool.Name == "delete_task" && tool.Annotations == nil {
				t.Errorf("hide %t: delete_task lost its annotations", hide)
			}
		}
	}
}

// TestRecoveryListingRefused lists tools whose declared recovery does not
// hold: the listing fails, naming the tool and what is wrong.
func TestRecoveryListingRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		classify bool // restore_from_trash
		rec      mcpeffect.Recovery
		want     string
	}{
		{"undo not classified", false, mcpeffect.Compensation("restore_from_trash", map[string]string{"item_id": "$request.body#/task_id"}),
			`tool "delete_task" is undone by "restore_from_trash", which the registry does not classify`},
		{"unknown parameter", true, mcpeffect.Compensation("restore_from_trash", map[string]string{"item_id": "$request.body#/task_id", "id": "$request.body#/task_id"}),
			`with the parameter "id", which its input schema does not have (it has item_id)`},
		{"required not bound", true, mcpeffect.Compensation("restore_from_trash", nil),
			`which requires "item_id", and the recovery does not bind it`},
		{"not in the output", true, mcpeffect.Compensation("restore_from_trash", map[string]string{"item_id": "$response.body#/id"}),
			`but its output schema has no property "id"`},
		{"not in the input", true, mcpeffect.Compensation("restore_from_trash", map[string]string{"item_id": "$request.body#/id"}),
			`but its input schema has no property "id"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mcpeffect.NewRegistry()
			s := trashServer(t, r, nil, tc.classify)
			if err := r.DeclareRecovery("delete_task", tc.rec); err != nil {
				t.Fatal(err)
			}
			cs := connect(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s)
			_, err := cs.ListTools(context.Background(), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ListTools: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
