package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shelfDirEnv names the directory the "shelf" server of TestMain keeps its
// files in.
const shelfDirEnv = "MCPEFFECT_TEST_SHELF"

// shelfServer keeps named values as files of dir, with tools whose
// classifications are true (put, list) and false (peek, tag), built with
// mcpeffect so that mcpeffecttest.Verify can prove it in Go.
func shelfServer(dir string) (*mcp.Server, *mcpeffect.Registry) {
	s := mcp.NewServer(&mcp.Implementation{Name: "shelf", Version: "1.0.0"}, nil)
	r := mcpeffect.NewRegistry()
	type args struct {
		Name  string `json:"name"`
		Value string `json:"value,omitempty"`
	}
	path := func(name string) string { return filepath.Join(dir, filepath.Base(name)) }
	ok := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "put"}, mcpeffect.Destructive|mcpeffect.Idempotent,
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			return ok, nil, os.WriteFile(path(in.Name), []byte(in.Value), 0o644)
		})
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "list"}, mcpeffect.Read,
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			_, err := os.ReadDir(dir)
			return ok, nil, err
		})
	// A read that counts its views.
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "peek"}, mcpeffect.Read,
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			f, err := os.OpenFile(path(in.Name+".views"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				_, err = f.WriteString("+")
				f.Close()
			}
			return ok, nil, err
		})
	// An "idempotent" write that appends, again at each repeat.
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "tag"}, mcpeffect.Idempotent,
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			f, err := os.OpenFile(path(in.Name), os.O_APPEND|os.O_WRONLY, 0)
			if err == nil {
				_, err = f.WriteString(" #" + in.Value)
				f.Close()
			}
			return ok, nil, err
		})
	s.AddReceivingMiddleware(r.Middleware(nil))
	return s, r
}

// A failureRecorder keeps the failures mcpeffecttest.Verify reports.
type failureRecorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *failureRecorder) Helper() {}

func (r *failureRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestVerifySameAsGo proves one server both ways, with the same examples
// and the same state (its directory, as verify reads a directory): in Go
// with mcpeffecttest.Verify, and from outside with mcpeffect verify over
// stdio. The two must fail the same tools with the same words, since they
// judge through one engine.
func TestVerifySameAsGo(t *testing.T) {
	put := func(name, value string) func(testing.TB, struct{}, *mcpeffecttest.Session) any {
		return func(_ testing.TB, _ struct{}, s *mcpeffecttest.Session) any {
			s.CallTool("put", map[string]any{"name": name, "value": value}, nil)
			return nil
		}
	}
	examples := []mcpeffecttest.Example[struct{}]{
		{Tool: "put", Setup: withArgs(put("milk", "1"), map[string]any{"name": "milk", "value": "2"})},
		{Tool: "list", Setup: withArgs(put("milk", "1"), nil)},
		{Tool: "peek", Setup: withArgs(put("milk", "1"), map[string]any{"name": "milk"})},
		{Tool: "tag", Setup: withArgs(put("milk", "1"), map[string]any{"name": "milk", "value": "dairy"})},
	}
	file := `{"env": {"` + shelfDirEnv + `": "{dir}"}, "state": {"dir": "{dir}"}, "examples": [
		{"tool": "put", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}], "args": {"name": "milk", "value": "2"}},
		{"tool": "list", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}]},
		{"tool": "peek", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}], "args": {"name": "milk"}},
		{"tool": "tag", "fixtures": [{"tool": "put", "args": {"name": "milk", "value": "1"}}], "args": {"name": "milk", "value": "dairy"}}
	]}`

	inGo, fromOutside, _, r := proveBothWays(t, shelfServer, "shelf", examples, file)
	if len(inGo) == 0 {
		t.Fatal("Verify found no lie: the planted ones escaped")
	}
	t.Logf("Go found:\n%s", strings.Join(inGo, "\n"))
	if strings.Join(inGo, "\n") != strings.Join(fromOutside, "\n") {
		t.Errorf("Go and the command disagree.\nGo:\n%s\ncommand:\n%s", strings.Join(inGo, "\n"), strings.Join(fromOutside, "\n"))
	}
	checkVerdicts(t, &r, map[string]verify.Verdict{"put": verify.Proven, "list": verify.Proven, "peek": verify.Lie, "tag": verify.Lie}, nil)
}

// withArgs returns a setup that runs setup, and then gives args as the
// call's arguments.
func withArgs(setup func(testing.TB, struct{}, *mcpeffecttest.Session) any, args map[string]any) func(testing.TB, struct{}, *mcpeffecttest.Session) any {
	return func(t testing.TB, e struct{}, s *mcpeffecttest.Session) any {
		setup(t, e, s)
		return args
	}
}

// proveBothWays proves a server twice: in Go, with mcpeffecttest.Verify,
// examples, and newServer keeping its data in a directory whose files are
// the state; and from outside, with the command, file and the server of
// TestMain called kind. It returns what each reported (Go's failures; the
// command's lies and claims), each sorted, and the command's result and
// report.
func proveBothWays(t *testing.T, newServer func(dir string) (*mcp.Server, *mcpeffect.Registry), kind string,
	examples []mcpeffecttest.Example[struct{}], file string) (inGo, fromOutside []string, res result, r verify.Report) {
	t.Helper()
	rec := &failureRecorder{TB: t}
	mcpeffecttest.Verify(rec, func(t testing.TB) mcpeffecttest.Instance[struct{}] {
		dir := t.TempDir()
		s, r := newServer(dir)
		return mcpeffecttest.Instance[struct{}]{Server: s, Registry: r, State: func(context.Context) (mcpeffecttest.State, error) {
			recs, err := verify.ReadDir(dir)
			state := mcpeffecttest.State{}
			for k, v := range recs {
				state[k] = v
			}
			return state, err
		}}
	}, examples, nil)

	path := filepath.Join(t.TempDir(), kind+".json")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	res = runCommand(t, append([]string{"verify", "-json", "-timeout", "1m", "-examples", path}, stdioServer(t, kind)...)...)
	if err := decodeReport(res.stdout, &r); err != nil {
		t.Fatalf("exit %d, %s: %v", res.code, res.stderr, err)
	}
	for _, tr := range r.Tools {
		for _, ex := range tr.Examples {
			for _, l := range ex.Lies {
				fromOutside = append(fromOutside, l.Message)
			}
		}
		fromOutside = append(fromOutside, tr.Claims...)
	}
	inGo = rec.errs
	slices.Sort(inGo)
	slices.Sort(fromOutside)
	return inGo, fromOutside, res, r
}

// TestVerifyWaiversAndMissing holds verify to what it reports besides
// lies, on the shelf server: a tool without an example fails the proof,
// a tool skipped with a reason does not, a claim waived with a reason is
// proven with the waiver shown, and a waiver that waives nothing, or an
// example of a tool the server lacks, fails it.
func TestVerifyWaiversAndMissing(t *testing.T) {
	const skips = `"skip": {"peek": "a planted lie, TestVerifySameAsGo's", "tag": "a planted lie, TestVerifySameAsGo's"}`
	// put only makes a new file here: it destroys nothing, which its
	// classification claims.
	const newFile = `{"tool": "put", "args": {"name": "milk", "value": "1"}}`
	for _, tc := range []struct {
		name     string
		file     string
		code     int
		verdicts map[string]verify.Verdict
		problem  string
	}{
		{
			name: "a tool without an example",
			file: `"examples": [` + newFile + `], "overcautious": {"put": "its examples make new files only"}, ` + skips,
			code: exitFindings,
			verdicts: map[string]verify.Verdict{
				"put": verify.Proven, "list": verify.NotExamined, "peek": verify.NotExamined, "tag": verify.NotExamined,
			},
		},
		{
			name: "every tool examined or skipped",
			file: `"examples": [` + newFile + `, {"tool": "list"}], "overcautious": {"put": "its examples make new files only"}, ` + skips,
			code: exitOK,
			verdicts: map[string]verify.Verdict{
				"put": verify.Proven, "list": verify.Proven, "peek": verify.NotExamined, "tag": verify.NotExamined,
			},
		},
		{
			name: "a claim not waived",
			file: `"examples": [` + newFile + `, {"tool": "list"}], ` + skips,
			code: exitFindings,
			verdicts: map[string]verify.Verdict{
				"put": verify.Overcautious, "list": verify.Proven, "peek": verify.NotExamined, "tag": verify.NotExamined,
			},
		},
		{
			name: "a waiver that waives nothing",
			file: `"examples": [` + newFile + `, {"tool": "list"}], "overcautious": {"list": "a read claims nothing"}, ` + skips,
			code: exitFindings,
			verdicts: map[string]verify.Verdict{
				"put": verify.Overcautious, "list": verify.Failed, "peek": verify.NotExamined, "tag": verify.NotExamined,
			},
		},
		{
			name: "an example of a tool the server lacks",
			file: `"examples": [` + newFile + `, {"tool": "list"}, {"tool": "drop"}], "overcautious": {"put": "its examples make new files only"}, ` + skips,
			code: exitFindings,
			verdicts: map[string]verify.Verdict{
				"put": verify.Proven, "list": verify.Proven, "peek": verify.NotExamined, "tag": verify.NotExamined,
			},
			problem: `calls tool "drop", which is not on the server`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "shelf.json")
			os.WriteFile(path, []byte(`{"env": {"`+shelfDirEnv+`": "{dir}"}, "state": {"dir": "{dir}"}, `+tc.file+`}`), 0o644)
			res := runCommand(t, append([]string{"verify", "-json", "-timeout", "1m", "-examples", path}, stdioServer(t, "shelf")...)...)
			var r verify.Report
			if err := decodeReport(res.stdout, &r); err != nil {
				t.Fatalf("exit %d, %s: %v", res.code, res.stderr, err)
			}
			if res.code != tc.code {
				t.Errorf("exit %d, want %d", res.code, tc.code)
			}
			checkVerdicts(t, &r, tc.verdicts, nil)
			if put := r.Tool("put"); put != nil && tc.verdicts["put"] == verify.Proven && put.Waived == "" {
				t.Errorf("put is proven without showing its waiver: %s", mustJSON(t, put))
			}
			if got := strings.Join(r.Problems, "\n"); (tc.problem == "") != (got == "") || !strings.Contains(got, tc.problem) {
				t.Errorf("problems %q, want %q", got, tc.problem)
			}
		})
	}
}
