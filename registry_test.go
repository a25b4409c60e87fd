package mcpeffect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestAddRefuses(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		e       Effect
		wantErr string
		kind    error
	}{
		{"empty name", "", Read, "empty tool name", ErrInvalidToolName},
		{"space in name", "get task", Read, `character ' ' at byte 3`, ErrInvalidToolName},
		{"slash in name", "tasks/get", Read, `character '/' at byte 5`, ErrInvalidToolName},
		{"non-ASCII name", "tâche", Read, `character 'â'`, ErrInvalidToolName},
		{"invalid UTF-8", "bad\xffname", Read, "invalid UTF-8 at byte 3", ErrInvalidToolName},
		{"name too long", strings.Repeat("a", 129), Read, "at most 128", ErrInvalidToolName},
		{"bad name and bad effect", "get task", Read | Write, `tool name "get task"`, ErrInvalidToolName},
		{"no read or write", "t", OpenWorld, `tool "t": effect openworld has neither Read nor Write`, ErrInvalidEffect},
		{"zero effect", "t", 0, `tool "t": no effect`, ErrInvalidEffect},
		{"read with write", "t", Read | Write, `tool "t": Read cannot be combined with Write`, ErrInvalidEffect},
		{"read with destructive", "delete_task", Read | Destructive, `mcpeffect: tool "delete_task": Read cannot be combined with Destructive`, ErrInvalidEffect},
		{"read with idempotent", "t", Read | Idempotent, "Read cannot be combined with Idempotent", ErrInvalidEffect},
		{"unknown bits", "t", Write | 1<<7, "unknown effect bits 0x80", ErrInvalidEffect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			err := r.Add(tt.tool, tt.e)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Add(%q, %s) = %v, want error containing %q", tt.tool, tt.e, err, tt.wantErr)
			}
			for _, kind := range []error{ErrInvalidToolName, ErrInvalidEffect, ErrAlreadyClassified} {
				if errors.Is(err, kind) != (kind == tt.kind) {
					t.Errorf("errors.Is(%v, %v) = %t", err, kind, !(kind == tt.kind))
				}
			}
			if r.Len() != 0 {
				t.Errorf("registry has %d tools after a refused Add", r.Len())
			}
		})
	}
}

func TestAddAcceptsNameEdges(t *testing.T) {
	r := NewRegistry()
	for _, name := range []string{"a", strings.Repeat("z", 128), "A-Z_a.z-09"} {
		if err := r.Add(name, Read); err != nil {
			t.Errorf("Add(%q): %v", name, err)
		}
	}
}

func TestAddDuplicateKeepsFirst(t *testing.T) {
	r := NewRegistry()
	if err := r.Add("delete_task", Destructive); err != nil {
		t.Fatal(err)
	}
	for _, e := range []Effect{Destructive, Read} {
		err := r.Add("delete_task", e)
		if err == nil || !strings.Contains(err.Error(), `tool "delete_task" is already classified as write|destructive`) || !errors.Is(err, ErrAlreadyClassified) {
			t.Errorf("second Add(%s) = %v, want a duplicate error", e, err)
		}
	}
	if e, ok := r.Effect("delete_task"); !ok || e != Destructive {
		t.Errorf("Effect = %s, %t; want the first classification", e, ok)
	}
}

// TestAllowedTable checks every effect against every scope, as in the scope
// columns of the effect table in the README.
func TestAllowedTable(t *testing.T) {
	type row struct{ none, readOnly, nonDestructive, full bool }
	want := map[Effect]row{
		Read:                     {false, true, true, true},
		Write:                    {false, false, true, true},
		Idempotent:               {false, false, true, true},
		Destructive:              {false, false, false, true},
		Destructive | Idempotent: {false, false, false, true},
	}
	r := NewRegistry()
	name := func(e Effect) string { return strings.ReplaceAll(e.String(), "|", ".") }
	for _, e := range validEffects {
		if err := r.Add(name(e), e); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range validEffects {
		w := want[e&^OpenWorld] // OpenWorld changes no scope
		for s, allowed := range map[Scope]bool{0: w.none, ReadOnly: w.readOnly, NonDestructive: w.nonDestructive, Full: w.full, Full + 1: false, 255: false} {
			if got := r.Allowed(name(e), s); got != allowed {
				t.Errorf("Allowed(%s, %s) = %t, want %t", e, s, got, allowed)
			}
			if got := s.Allows(e); got != allowed {
				t.Errorf("%s.Allows(%s) = %t, want %t", s, e, got, allowed)
			}
		}
	}
	for _, s := range []Scope{0, ReadOnly, NonDestructive, Full} {
		if r.Allowed("unknown", s) {
			t.Errorf("Allowed(unknown, %s) = true, want false", s)
		}
	}
}

func TestRequired(t *testing.T) {
	r := NewRegistry()
	for name, e := range map[string]Effect{"r": Read | OpenWorld, "w": Write, "i": Idempotent, "d": Destructive, "di": Destructive | Idempotent} {
		if err := r.Add(name, e); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]Scope{"r": ReadOnly, "w": NonDestructive, "i": NonDestructive, "d": Full, "di": Full} {
		if got, ok := r.Required(name); !ok || got != want {
			t.Errorf("Required(%q) = %s, %t; want %s", name, got, ok, want)
		}
	}
	if s, ok := r.Required("nope"); ok || s != 0 {
		t.Errorf("Required(unknown) = %s, %t; want none, false", s, ok)
	}
}

func TestAllSorted(t *testing.T) {
	r := NewRegistry()
	in := map[string]Effect{"b": Write, "a": Read, "c": Destructive, "a.b": Read | OpenWorld}
	for n, e := range in {
		if err := r.Add(n, e); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	got := map[string]Effect{}
	for n, e := range r.All() {
		names = append(names, n)
		got[n] = e
	}
	if want := []string{"a", "a.b", "b", "c"}; !slices.Equal(names, want) {
		t.Errorf("All() names = %v, want %v", names, want)
	}
	if !maps.Equal(got, in) {
		t.Errorf("All() = %v, want %v", got, in)
	}
	// Stopping early stops.
	n := 0
	for range r.All() {
		n++
		break
	}
	if n != 1 {
		t.Errorf("break after one: iterated %d", n)
	}
}

// TestAddAfterLookups checks lookups before and after tools are added,
// and that a tool added after lookups were made is seen.
func TestAddAfterLookups(t *testing.T) {
	var r Registry // the zero Registry is ready to use
	if r.Allowed("x", Full) || r.Len() != 0 {
		t.Fatal("empty registry allows or has tools")
	}
	for i := range 10 {
		if err := r.Add(fmt.Sprint("t", i), Write); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		for i := range 10 {
			if !r.Allowed(fmt.Sprint("t", i), NonDestructive) {
				t.Fatalf("round %d: t%d not allowed", round, i)
			}
		}
		if r.Allowed("missing", Full) {
			t.Fatalf("round %d: missing tool allowed", round)
		}
	}
	if err := r.Add("late", Destructive); err != nil {
		t.Fatal(err)
	}
	if !r.Allowed("late", Full) || r.Allowed("late", NonDestructive) || r.Len() != 11 {
		t.Error("a tool added after lookups is not seen correctly")
	}
}

func TestAddAll(t *testing.T) {
	r := NewRegistry()
	if err := r.Add("get_task", Read); err != nil {
		t.Fatal(err)
	}
	// Every refused entry is reported, in the order of the names, and
	// nothing is added.
	err := r.AddAll(map[string]Effect{
		"create_task": Write,
		"get_task":    Read,
		"bad name":    Write,
		"wipe":        Read | Destructive,
	})
	for _, want := range []string{`tool name "bad name"`, `tool "wipe": Read cannot be combined with Destructive`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("AddAll = %v, want an error containing %q", err, want)
		}
	}
	if !errors.Is(err, ErrInvalidToolName) || !errors.Is(err, ErrInvalidEffect) {
		t.Errorf("AddAll = %v, want it to wrap ErrInvalidToolName and ErrInvalidEffect", err)
	}
	if r.Len() != 1 {
		t.Fatalf("a refused AddAll left %d tools, want 1", r.Len())
	}
	// Valid entries that clash with the registry are refused too.
	err = r.AddAll(map[string]Effect{"create_task": Write, "get_task": Write})
	if !errors.Is(err, ErrAlreadyClassified) || !strings.Contains(err.Error(), `tool "get_task" is already classified as read`) || r.Len() != 1 {
		t.Errorf("AddAll of a classified tool = %v, with %d tools; want ErrAlreadyClassified and none added", err, r.Len())
	}
	if err := r.AddAll(map[string]Effect{"create_task": Write, "delete_task": Destructive}); err != nil {
		t.Fatal(err)
	}
	if r.Len() != 3 || !r.Allowed("create_task", NonDestructive) || r.Allowed("delete_task", NonDestructive) || !r.Allowed("delete_task", Full) {
		t.Errorf("after AddAll: %d tools, or wrong scopes", r.Len())
	}
	if err := r.AddAll(nil); err != nil || r.Len() != 3 {
		t.Errorf("AddAll(nil) = %v, %d tools", err, r.Len())
	}
}

// TestConcurrentAddAndAllowed runs additions and lookups at once; run it
// with -race.
func TestConcurrentAddAndAllowed(t *testing.T) {
	r := NewRegistry()
	const writers, perWriter = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				name := fmt.Sprintf("w%d_t%d", w, i)
				if err := r.Add(name, Destructive); err != nil {
					t.Error(err)
					return
				}
				// Once Add has returned, the tool is seen by everyone.
				if !r.Allowed(name, Full) {
					t.Errorf("%s not allowed right after Add", name)
				}
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for i := range writers * perWriter {
				name := fmt.Sprintf("w%d_t%d", i%writers, i/writers)
				if r.Allowed(name, NonDestructive) {
					t.Errorf("%s allowed with non-destructive", name)
				}
				r.Annotations(name)
				for range r.All() {
				}
			}
		})
	}
	wg.Wait()
	if r.Len() != writers*perWriter {
		t.Errorf("Len = %d, want %d", r.Len(), writers*perWriter)
	}
}

// TestValidateToolNameMatchesSDK gives the same names to go-sdk's
// Server.AddTool and to ValidateToolName: go-sdk v1.8.0 logs a name it
// finds invalid at the error level (and adds the tool all the same), and
// ValidateToolName must refuse exactly those names.
func TestValidateToolNameMatchesSDK(t *testing.T) {
	names := []string{"", "a", "A-Z_a.z-09", strings.Repeat("a", 128), strings.Repeat("a", 129),
		"bad\xffname", "x\uFFFD", "tâche", "get task", "tasks/get", "é" + strings.Repeat("a", 126)}
	for c := range rune(256) {
		names = append(names, "x"+string(c), string(c))
	}
	for _, name := range names {
		var logged bytes.Buffer
		s := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "v1"}, &mcp.ServerOptions{
			Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelError})),
		})
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		sdkRefuses := strings.Contains(logged.String(), "invalid tool name")
		err := ValidateToolName(name)
		if (err != nil) != sdkRefuses {
			t.Errorf("name %q: ValidateToolName = %v, but go-sdk refuses it: %t (%s)", name, err, sdkRefuses, strings.TrimSpace(logged.String()))
		}
	}
}
