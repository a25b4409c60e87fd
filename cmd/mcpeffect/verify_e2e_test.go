package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
	"github.com/mcpeffect/mcpeffect/internal/testing/e2e"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// e2eExamples are the examples of testdata/verify/e2e.json, in Go: the
// calls that prove the tools of the end-to-end tests' server.
func e2eExamples() []mcpeffecttest.Example[struct{}] {
	with := func(fixture map[string]any, tool string, args map[string]any) func(testing.TB, struct{}, *mcpeffecttest.Session) any {
		return func(_ testing.TB, _ struct{}, s *mcpeffecttest.Session) any {
			s.CallTool(tool, fixture, nil)
			return args
		}
	}
	web := map[string]any{"action": "create", "name": "web"}
	return []mcpeffecttest.Example[struct{}]{
		{Tool: "pods", Name: "get", Setup: with(web, "pods", map[string]any{"action": "get", "name": "web-1"})},
		{Tool: "pods", Name: "list", Setup: with(web, "pods", map[string]any{"action": "list"})},
		{Tool: "pods", Name: "create", Args: web},
		{Tool: "pods", Name: "delete", Setup: with(web, "pods", map[string]any{"action": "delete", "name": "web-1"})},
		{Tool: "update_issue", Name: "a comment", Effect: mcpeffect.Write, Args: map[string]any{"issue": 7, "comment": "Reproduced on main."}},
		{Tool: "update_issue", Name: "closed", Effect: mcpeffect.Destructive | mcpeffect.Idempotent,
			Setup: with(map[string]any{"issue": 7, "state": "open"}, "update_issue", map[string]any{"issue": 7, "state": "closed"})},
		{Tool: "delete_note", Name: "the readme", Args: map[string]any{"id": "readme"}},
		{Tool: "history", Name: "what ran", Setup: with(web, "pods", nil)},
	}
}

// TestVerifyE2EServer verifies the server of the end-to-end tests, the
// program testdata/e2eserver with its data in a directory, both ways: in
// Go with mcpeffecttest.Verify on e2e.NewServerIn, and from outside with
// mcpeffect verify and testdata/verify/e2e.json, on the same directory
// state, each call of pods and update_issue held to the outcome it has.
// As a person who confirms each destructive call, both prove every tool;
// as a client that cannot be asked, both fail the same tools, whose
// destructive calls the server then refuses.
func TestVerifyE2EServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds testdata/e2eserver")
	}
	bin := filepath.Join(t.TempDir(), "e2eserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../testdata/e2eserver").CombinedOutput(); err != nil {
		t.Fatalf("building testdata/e2eserver: %v\n%s", err, out)
	}
	for _, confirm := range []bool{true, false} {
		t.Run(map[bool]string{true: "confirmed", false: "unconfirmed"}[confirm], func(t *testing.T) {
			examples := e2eExamples()
			path := filepath.Join("testdata", "verify", "e2e.json")
			if !confirm {
				// Without a person to confirm it, the fixture of the
				// example "closed", a change of state, is refused too:
				// the example is left out, and no other reaches that
				// outcome of update_issue.
				examples = slices.DeleteFunc(examples, func(ex mcpeffecttest.Example[struct{}]) bool { return ex.Name == "closed" })
				doc := readJSON(t, path)
				delete(doc, "confirm")
				doc["examples"] = slices.DeleteFunc(doc["examples"].([]any), func(ex any) bool { return ex.(map[string]any)["name"] == "closed" })
				path = writeFile(t, "e2e.json", []byte(mustJSON(t, doc)))
			}
			rec := &failureRecorder{TB: t}
			mcpeffecttest.Verify(rec, e2eInstance(confirm), examples, nil)
			failedInGo := toolsNamed(rec.errs)

			code, r := verifyFileJSON(t, path, "--", bin)
			var failedOutside []string
			for _, tr := range r.Tools {
				if tr.Verdict != verify.Proven {
					failedOutside = append(failedOutside, tr.Name)
				}
			}
			want := []string{"delete_note", "pods", "update_issue"} // refused their destructive calls
			if confirm {
				want = nil
			}
			if !slices.Equal(failedInGo, want) || !slices.Equal(failedOutside, want) {
				t.Errorf("failed tools: in Go %q, from outside %q; want %q both\nGo: %q\n%s", failedInGo, failedOutside, want, rec.errs, mustJSON(t, r))
			}
			if wantCode := map[bool]int{true: exitOK, false: exitFindings}[confirm]; code != wantCode {
				t.Errorf("exit %d, want %d", code, wantCode)
			}
			if pods := r.Tool("pods"); pods == nil || pods.Rule != `by action: "create"=write, "delete"=write|destructive|idempotent, "get"=read, "list"=read` {
				t.Errorf("pods: %s, want its outcomes by action", mustJSON(t, pods))
			}
		})
	}
}

// e2eInstance returns the maker of a fresh e2e server for each example,
// with its data in a directory of its own, which is its state as verify
// reads a directory; its client accepts each confirmation if confirm.
func e2eInstance(confirm bool) func(testing.TB) mcpeffecttest.Instance[struct{}] {
	return func(t testing.TB) mcpeffecttest.Instance[struct{}] {
		dir := t.TempDir()
		s, err := e2e.NewServerIn(dir)
		if err != nil {
			t.Fatal(err)
		}
		opts := &mcp.ClientOptions{}
		if confirm {
			opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
		}
		return mcpeffecttest.Instance[struct{}]{
			Registry: s.Registry,
			Connect: func(ctx context.Context) (*mcp.ClientSession, error) {
				ct, st := mcp.NewInMemoryTransports()
				if _, err := s.Connect(ctx, st, nil); err != nil {
					return nil, err
				}
				return mcp.NewClient(&mcp.Implementation{Name: "e2e-proof", Version: "1"}, opts).Connect(ctx, ct, nil)
			},
			State: func(context.Context) (mcpeffecttest.State, error) {
				recs, err := verify.ReadDir(dir)
				state := mcpeffecttest.State{}
				for k, v := range recs {
					state[k] = v
				}
				return state, err
			},
		}
	}
}

// toolsNamed returns the tools that failures name, sorted, each once.
func toolsNamed(failures []string) []string {
	var tools []string
	for _, f := range failures {
		if m := regexp.MustCompile(`^tool "([^"]+)"`).FindStringSubmatch(f); m != nil && !slices.Contains(tools, m[1]) {
			tools = append(tools, m[1])
		}
	}
	slices.Sort(tools)
	return tools
}

// readJSON reads the JSON object of the file at path.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// TestVerifyJustification writes the justification of each hint of each
// tool of the end-to-end tests' server, testdata/e2eserver, from what
// verify saw its examples of testdata/verify/e2e.json do: for each tool a
// section, for each of its four hints a line with the hint's value and
// what a call or a repeat changed, or that none changed anything; and
// openWorldHint, which no state shows, said not to be observed.
func TestVerifyJustification(t *testing.T) {
	if testing.Short() {
		t.Skip("builds testdata/e2eserver")
	}
	bin := filepath.Join(t.TempDir(), "e2eserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../testdata/e2eserver").CombinedOutput(); err != nil {
		t.Fatalf("building testdata/e2eserver: %v\n%s", err, out)
	}
	res := runCommand(t, "verify", "-format", "justification", "-timeout", "3m", "-parallel", "4", "-examples", filepath.Join("testdata", "verify", "e2e.json"), "--", bin)
	if res.code != exitOK {
		t.Fatalf("exit %d: %s\n%s", res.code, res.stderr, res.stdout)
	}
	md := res.stdout
	for _, s := range []string{
		"# Tool hint justifications: e2e v1\n",
		"(the state: `dir {dir}`)",
		"\n## `delete_note`\n\n**Proven** by 1 example (“the readme”).\n",
		"- **`destructiveHint`: true.** It destroys: the call of example “the readme” removed record `notes/readme`, which was `{\"content\":\"readme\\n\",\"kind\":\"file\",\"mode\":\"0644\"}`.\n",
		"- **`idempotentHint`: true.** Safe to repeat: in 1 example (“the readme”), the repeat of each call with the same arguments changed nothing.\n",
		"\n## `history`\n",
		"- **`readOnlyHint`: true.** It only reads: in 1 example (“what ran”), neither a call nor its repeat changed anything in the state.\n",
		"\n## `pods`\n\n**Proven** by 4 examples (“get”, “list”, “create”, “delete”). Its effect depends on its arguments, `by action: \"create\"=write, \"delete\"=write|destructive|idempotent, \"get\"=read, \"list\"=read`",
		"- **`destructiveHint`: true.** It destroys: the call of example “delete” removed record `pods/web-1`",
		"- **`idempotentHint`: false.** Not safe to repeat: the repeat of example “create” added record `pods/web-2`",
		"- **`destructiveHint`: true.** It destroys: the call of example “closed” changed field `content` of record `issues/7/state` from `\"open\\n\"` to `\"closed\\n\"`.\n",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("the justification does not say %q:\n%s", s, md)
		}
	}
	for _, tool := range []string{"delete_note", "history", "pods", "update_issue"} {
		section, _, _ := strings.Cut(md[strings.Index(md, "## `"+tool+"`"):][3:], "\n## ")
		for _, hint := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if n := strings.Count(section, "- **`"+hint+"`: "); n != 1 {
				t.Errorf("tool %s: %d justifications of %s, want 1:\n%s", tool, n, hint, section)
			}
		}
		if !strings.Contains(section, "- **`openWorldHint`: false.** Not observed") {
			t.Errorf("tool %s: openWorldHint not said to be unobserved:\n%s", tool, section)
		}
	}
}
