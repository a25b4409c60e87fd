package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/verify"
	"github.com/mcpeffect/mcpeffect/internal/testing/nodetest"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// verifyJSON runs mcpeffect verify -json with the examples file of
// testdata/verify called examples and the server args, and decodes the
// report.
func verifyJSON(t *testing.T, examples string, args ...string) (int, *verify.Report) {
	t.Helper()
	return verifyFileJSON(t, filepath.Join("testdata", "verify", examples), args...)
}

// verifyFileJSON is verifyJSON with the examples file at path.
func verifyFileJSON(t *testing.T, path string, args ...string) (int, *verify.Report) {
	t.Helper()
	full := append([]string{"verify", "-json", "-timeout", "3m", "-parallel", "4", "-examples", path}, args...)
	res := runCommand(t, full...)
	if res.code == exitError {
		t.Fatalf("verify could not run (exit %d): %s", res.code, res.stderr)
	}
	var r verify.Report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("decoding the report: %v\n%s", err, res.stdout)
	}
	return res.code, &r
}

// A lie is one broken rule a verdict must name: the record and field,
// and the values before and after.
type lie struct {
	rule, record, field, before, after string
}

// checkVerdicts holds the report to the verdict of every tool, and to
// the lies named, which must be the tool's first change of each.
func checkVerdicts(t *testing.T, r *verify.Report, want map[string]verify.Verdict, lies map[string]lie) {
	t.Helper()
	if len(r.Tools) != len(want) {
		t.Errorf("the report has %d tools, want %d", len(r.Tools), len(want))
	}
	for name, v := range want {
		tr := r.Tool(name)
		if tr == nil {
			t.Errorf("tool %q is not in the report", name)
			continue
		}
		if tr.Verdict != v {
			t.Errorf("tool %q: verdict %q, want %q (%s)\n%s", name, tr.Verdict, v, tr.Reason, mustJSON(t, tr))
		}
	}
	for name, l := range lies {
		tr := r.Tool(name)
		if tr == nil {
			continue
		}
		found := false
		for _, ex := range tr.Examples {
			for _, got := range ex.Lies {
				c := got.Changes[0]
				if got.Rule == l.rule && c.Record == l.record && c.Field == l.field && c.Before == l.before && c.After == l.after {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("tool %q: no lie of rule %s on record %q, field %q, %s → %s:\n%s", name, l.rule, l.record, l.field, l.before, l.after, mustJSON(t, tr))
		}
	}
}

// nodeScript returns the arguments that run the script at path with node,
// skipping the test without node or the script's packages, and saying so
// with the command that installs them, unless MCPEFFECT_REQUIRE_NODE says
// it must run (see nodetest).
func nodeScript(t *testing.T, modules, path string, args ...string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs node")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		nodetest.NotRun(t, "node is not installed", "install node and npm (on Debian: apt-get install -y nodejs npm)")
	}
	nodetest.Installed(t, modules, "node_modules")
	return append([]string{"--", node, path}, args...)
}

// TestVerifyPlantedLies verifies a server written in JavaScript with the
// TypeScript SDK, whose hints hold two planted lies: the command catches
// both, naming the record and the field, and proves the tools that tell
// the truth.
func TestVerifyPlantedLies(t *testing.T) {
	code, r := verifyJSON(t, "notes.json", nodeScript(t, "../../testdata/tsclient", "../../testdata/tsclient/notes-server.mjs")...)
	if code != exitFindings {
		t.Errorf("exit %d, want %d", code, exitFindings)
	}
	checkVerdicts(t, r, map[string]verify.Verdict{
		"list_notes":  verify.Proven,
		"get_note":    verify.Lie,
		"add_note":    verify.Proven,
		"rename_note": verify.Lie,
		"delete_note": verify.Proven,
	}, map[string]lie{
		"get_note":    {"read", "/notes/1", "views", "0", "1"},
		"rename_note": {"non-destructive", "/notes/1", "title", `"Milk"`, `"Oat milk"`},
	})
	ex := r.Tool("get_note").Examples
	if len(ex) != 2 || ex[1].Result != "refused" {
		t.Errorf("get_note's example of a missing note: %+v, want it refused as expected", ex)
	}
	if !strings.Contains(r.Tool("get_note").Examples[0].Lies[0].Message, "a read must not") {
		t.Errorf("the lie's message does not say the rule: %q", r.Tool("get_note").Examples[0].Lies[0].Message)
	}
}

// TestVerifyFormats: the planted lies as SARIF, with the structure SARIF
// readers require (a rule for each result, its level, its message naming
// the record and field, a location), and as a Markdown comment, one line
// for each tool that is not proven.
func TestVerifyFormats(t *testing.T) {
	server := nodeScript(t, "../../testdata/tsclient", "../../testdata/tsclient/notes-server.mjs")
	examples := filepath.Join("testdata", "verify", "notes.json")
	res := runCommand(t, append([]string{"verify", "-format", "sarif", "-location", "servers/notes.mjs", "-timeout", "3m", "-examples", examples}, server...)...)
	if res.code != exitFindings {
		t.Fatalf("sarif: exit %d, %s", res.code, res.stderr)
	}
	var log struct {
		Version string `json:"version"`
		Schema  string `json:"$schema"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string                `json:"ruleId"`
				Level     string                `json:"level"`
				Message   struct{ Text string } `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string } `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &log); err != nil || log.Version != "2.1.0" || log.Schema == "" || len(log.Runs) != 1 {
		t.Fatalf("not a SARIF 2.1.0 log (%v):\n%s", err, res.stdout)
	}
	rules := map[string]bool{}
	for _, r := range log.Runs[0].Tool.Driver.Rules {
		rules[r.ID] = true
	}
	var lies []string
	for _, r := range log.Runs[0].Results {
		if !rules[r.RuleID] || len(r.Locations) != 1 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != "servers/notes.mjs" {
			t.Errorf("result %+v: want a rule of the driver and the location given", r)
		}
		if r.RuleID == "verify-lie" && r.Level == "error" {
			lies = append(lies, r.Message.Text)
		}
	}
	if len(lies) != 2 || !strings.Contains(strings.Join(lies, "\n"), "field views") || !strings.Contains(strings.Join(lies, "\n"), "field title") {
		t.Errorf("the lies in SARIF: %q, want get_note's views and rename_note's title", lies)
	}

	res = runCommand(t, append([]string{"verify", "-format", "markdown", "-timeout", "3m", "-examples", examples}, server...)...)
	if res.code != exitFindings {
		t.Fatalf("markdown: exit %d, %s", res.code, res.stderr)
	}
	var rows []string
	for l := range strings.Lines(res.stdout) {
		if strings.HasPrefix(l, "| `") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 || !strings.Contains(rows[0]+rows[1], "| lie |") || !strings.Contains(res.stdout, "3 proven, 2 lie") {
		t.Errorf("the Markdown comment:\n%s\nwant the summary and one line for each lie", res.stdout)
	}
}

// The mcpeffect-sqlite command, built once for every test that reads a
// SQLite state.
var (
	sqliteOnce sync.Once
	sqliteBin  string
	sqliteErr  error
)

// sqliteReaderFlag returns the flag that gives verify the mcpeffect-sqlite
// command, building it the first time.
func sqliteReaderFlag(t *testing.T) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds mcpeffect-sqlite")
	}
	sqliteOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpeffect-sqlite-")
		if err != nil {
			sqliteErr = err
			return
		}
		builtDirs = append(builtDirs, dir)
		sqliteBin = filepath.Join(dir, "mcpeffect-sqlite")
		build := exec.Command("go", "build", "-o", sqliteBin, ".")
		build.Dir = "../mcpeffect-sqlite"
		if out, err := build.CombinedOutput(); err != nil {
			sqliteErr = &buildError{err, out}
		}
	})
	if sqliteErr != nil {
		t.Fatalf("building mcpeffect-sqlite: %v", sqliteErr)
	}
	return []string{"-sqlite-reader", sqliteBin}
}

// TestVerifyNPMServers verifies servers published on npm that no one here
// wrote, at the exact versions of their lock files, with the examples
// files of testdata/verify. The verdicts are those the README reports.
func TestVerifyNPMServers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		examples string
		args     func(t *testing.T) []string
		want     map[string]verify.Verdict
	}{
		{
			name:     "filesystem",
			examples: "server-filesystem.json",
			args:     func(t *testing.T) []string { return npmServer(t, "server-filesystem", "{dir}") },
			want: map[string]verify.Verdict{
				"read_file": verify.Proven, "read_text_file": verify.Proven, "read_media_file": verify.Proven,
				"read_multiple_files": verify.Proven, "list_directory": verify.Proven,
				"list_directory_with_sizes": verify.Proven, "directory_tree": verify.Proven,
				"search_files": verify.Proven, "get_file_info": verify.Proven, "list_allowed_directories": verify.Proven,
				"write_file": verify.Proven, "edit_file": verify.Proven, "create_directory": verify.Proven,
				// Its repeat fails, the source being gone: moving is
				// idempotent, though its hints say it is not.
				"move_file": verify.Overcautious,
			},
		},
		{
			name:     "memory",
			examples: "server-memory.json",
			// The examples file gives MEMORY_FILE_PATH, in {dir}.
			args: func(t *testing.T) []string { return npmServer(t, "server-memory") },
			want: map[string]verify.Verdict{
				// Each skips what exists already: idempotent, though their
				// hints say they are not.
				"create_entities": verify.Overcautious, "create_relations": verify.Overcautious,
				"add_observations": verify.Overcautious,
				"delete_entities":  verify.Proven, "delete_observations": verify.Proven, "delete_relations": verify.Proven,
				"read_graph": verify.Proven, "search_nodes": verify.Proven, "open_nodes": verify.Proven,
			},
		},
		{
			name:     "sqlite",
			examples: "mcp-sqlite.json",
			args: func(t *testing.T) []string {
				flags := sqliteReaderFlag(t)
				server := nodeScript(t, "testdata/npmdbserver", "testdata/npmdbserver/node_modules/mcp-sqlite/mcp-sqlite-server.js", "{dir}/db.sqlite")
				return append(flags, server...)
			},
			// No tool declares a hint: each is taken as a destructive
			// write, not idempotent, which only query, running any SQL,
			// can be.
			want: map[string]verify.Verdict{
				"db_info": verify.Overcautious, "list_tables": verify.Overcautious, "get_table_schema": verify.Overcautious,
				"read_records": verify.Overcautious, "create_record": verify.Overcautious,
				"update_records": verify.Overcautious, "delete_records": verify.Overcautious,
				"query": verify.Proven,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, r := verifyJSON(t, tc.examples, tc.args(t)...)
			checkVerdicts(t, r, tc.want, nil)
			if code != exitFindings {
				t.Errorf("exit %d, want %d: some tools are over-cautious", code, exitFindings)
			}
		})
	}
}

// TestVerifyCannotRun holds verify to exit 2, with a message that says
// why, whenever it cannot prove anything.
func TestVerifyCannotRun(t *testing.T) {
	examples := filepath.Join("testdata", "verify", "notes.json")
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"state": {}, "examples": []}`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no examples file", []string{"--", "true"}, "no examples"},
		{"no server", []string{"-examples", examples}, "no server"},
		{"both a URL and a command", []string{"-examples", examples, "-url", "http://127.0.0.1:1/mcp", "--", "true"}, "not both"},
		{"a URL without a reset command", []string{"-examples", examples, "-url", "http://127.0.0.1:1/mcp"}, "reset command"},
		{"an examples file that is wrong", []string{"-examples", bad, "--", "true"}, "one or more of dir, sqlite, json and command"},
		{"a server that exits", []string{"-examples", examples, "-timeout", "20s", "--", "sh", "-c", "echo broken >&2; exit 3"}, "exit status 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, append([]string{"verify"}, tc.args...)...)
			if res.code != exitError || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", res.code, res.stderr, exitError, tc.want)
			}
		})
	}
	res := runCommand(t, "help", "verify")
	for _, want := range []string{"verify-examples.schema.json", "leaveOut", "flags", "wantError", "{dir}", "over-cautious", `"sqlite:`} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("help verify does not explain %q", want)
		}
	}
}

// TestVerifyDoneServer verifies the Done example server from outside, as
// any server: each example runs on a fresh data directory, served by its
// owner alice (USER in the file's env) and by agents whose tokens the
// examples mint through Done's own create_token, each caller a process
// of its own on the directory; the state is the rows of its SQLite
// database and the files of its context folder, with the bookkeeping
// that examples/done-server/effects_state_test.go leaves out left out
// here too, and the columns it shows as states (asState there) shown as
// flags here. Every one of the 84 tools is examined, none skipped, and
// each verdict is TestEffectsProved's in Go: proven, with no waiver, at
// the effect Done's specification gives it (testdata/tools.tsv, which
// Done's own tests hold its registry to).
func TestVerifyDoneServer(t *testing.T) {
	flags := sqliteReaderFlag(t)
	done := buildDone(t)
	f, err := verify.ReadFile(filepath.Join("testdata", "verify", "done.json"))
	if err != nil {
		t.Fatal(err)
	}
	spec := specEffects(t)
	examined := map[string]bool{}
	for _, ex := range f.Examples {
		examined[ex.Tool] = true
	}
	for name := range spec {
		if !examined[name] {
			t.Errorf("tool %q has no example in done.json", name)
		}
	}
	if len(f.Skip) > 0 || len(f.Overcautious) > 0 {
		t.Errorf("done.json skips %v and waives %v; TestEffectsProved does neither", f.Skip, f.Overcautious)
	}
	code, r := verifyJSON(t, "done.json", append(flags, "--", done, "-data", "{dir}")...)
	if code != exitOK {
		t.Errorf("exit %d, want %d", code, exitOK)
	}
	if len(r.Tools) != len(spec) || len(spec) == 0 {
		t.Errorf("%d tools, %d in the specification: want every tool of Done's", len(r.Tools), len(spec))
	}
	for name, effect := range spec {
		tr := r.Tool(name)
		switch {
		case tr == nil:
			t.Errorf("tool %q is not in the report", name)
		case tr.Verdict != verify.Proven || tr.Waived != "":
			t.Errorf("tool %q: %s (waived %q), want proven as in Go: %s\n%s", name, tr.Verdict, tr.Waived, tr.Reason, mustJSON(t, tr))
		case tr.Effect != effect:
			t.Errorf("tool %q advertises the effect %s, but Done's specification says %s", name, tr.Effect, effect)
		}
	}
	// Each deletion that moves to the Trash publishes its undo, and the
	// undo restores what the call changed.
	undone := 0
	for _, tr := range r.Tools {
		for _, er := range tr.Examples {
			switch {
			case er.Undo == nil:
			case er.Undo.Result != verify.UndoRestored || er.Undo.Tool != "restore_from_trash":
				t.Errorf("tool %q, example %q: its undo %q came to %q, want restored by restore_from_trash: %s", tr.Name, er.Name, er.Undo.Tool, er.Undo.Result, er.Undo.Error)
			default:
				undone++
			}
		}
	}
	if undone != 4 {
		t.Errorf("%d undos restored, want the 4 of done.json (delete_task, delete_project, delete_step, delete_comment)", undone)
	}
	if len(r.Problems) > 0 || len(r.Notes) > 0 {
		t.Errorf("problems %q, notes %q; want none", r.Problems, r.Notes)
	}
}

// TestVerifyDoneWithoutFlags verifies Done's tools that set a column an
// empty value stands for (a Trash, an archive, a revocation, a pause)
// with their examples of done.json but without its flags: in raw rows,
// NULL to a time reads as a value added to an empty field, so that each
// of these destructive writes seems to destroy nothing. The flags are
// what makes the proof see what users see.
func TestVerifyDoneWithoutFlags(t *testing.T) {
	flags := sqliteReaderFlag(t)
	done := buildDone(t)
	data, err := os.ReadFile(filepath.Join("testdata", "verify", "done.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	hidden := []string{"archive_project", "delete_comment", "delete_project", "delete_step", "delete_task",
		"pause_agent", "revoke_calendar_link", "revoke_token", "rotate_calendar_link"}
	state := doc["state"].(map[string]any)
	if state["flags"] == nil {
		t.Fatal("done.json has no flags")
	}
	delete(state, "flags")
	var kept []any
	for _, ex := range doc["examples"].([]any) {
		if slices.Contains(hidden, ex.(map[string]any)["tool"].(string)) {
			kept = append(kept, ex)
		}
	}
	doc["examples"] = kept
	skip := map[string]any{}
	for name := range specEffects(t) {
		if !slices.Contains(hidden, name) {
			skip[name] = "not this test's: TestVerifyDoneServer proves it"
		}
	}
	doc["skip"] = skip
	code, r := verifyFileJSON(t, writeFile(t, "noflags.json", []byte(mustJSON(t, doc))), append(flags, "--", done, "-data", "{dir}")...)
	if code != exitFindings {
		t.Errorf("exit %d, want %d", code, exitFindings)
	}
	for _, name := range hidden {
		tr := r.Tool(name)
		if tr == nil || tr.Verdict != verify.Overcautious || len(tr.Claims) != 1 || !strings.Contains(tr.Claims[0], "no example changed or removed an existing value") {
			t.Errorf("tool %q without flags: %s, want over-cautious, destroying nothing", name, mustJSON(t, tr))
		}
	}
}

// specEffects returns the effect of each of Done's tools as its
// specification, testdata/tools.tsv, gives it, in the words of
// mcpeffect.Effect's String.
func specEffects(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(doneDir, "testdata", "tools.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	effects := map[string]string{}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		col := strings.Split(line, "\t")
		if i == 0 {
			continue // the header: name group effect destructive idempotent open_world description
		}
		if len(col) < 6 {
			t.Fatalf("tools.tsv: short line %q", line)
		}
		e := mcpeffect.Read
		if col[2] == "write" {
			e = mcpeffect.Write
			if col[3] == "yes" {
				e |= mcpeffect.Destructive
			}
			if col[4] == "yes" {
				e |= mcpeffect.Idempotent
			}
		}
		if col[5] == "yes" {
			e |= mcpeffect.OpenWorld
		}
		effects[col[0]] = e.String()
	}
	return effects
}

// stallServer is a server whose tool wait, a read, never returns until
// its call is cancelled: a server that hangs in the middle of a proof;
// and whose tool flood answers 20 MiB of text in one message.
func stallServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "stall", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "flood", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 20<<20)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	return s
}

// TestVerifyTimeout holds verify to -timeout against a server that
// hangs in a call: it gives up with exit 2, saying so, rather than
// reporting a verdict on a proof cut short.
func TestVerifyTimeout(t *testing.T) {
	examples := filepath.Join(t.TempDir(), "stall.json")
	os.WriteFile(examples, []byte(`{"state": {"dir": "{dir}"}, "examples": [{"tool": "wait"}], "skip": {"flood": "TestVerifyFlood's"}}`), 0o644)
	start := time.Now()
	res := runCommand(t, append([]string{"verify", "-examples", examples, "-timeout", "2s"}, stdioServer(t, "stall")...)...)
	t.Logf("verify ended %v after it started, with -timeout 2s", time.Since(start).Round(time.Millisecond))
	if res.code != exitError || !strings.Contains(res.stderr, "no end within 2s (-timeout)") {
		t.Errorf("exit %d, stderr %q; want exit %d, saying the time ran out", res.code, res.stderr, exitError)
	}
}

// A jar is a server over Streamable HTTP, behind a bearer token, that
// keeps counters in files of a directory: put writes one (a destructive,
// idempotent write, as it says), and peek, which says it only reads,
// bumps a counter of views, a planted lie.
func jarServer(dir string) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "jar", Version: "1.0.0"}, nil)
	type args struct {
		Name  string `json:"name"`
		Value string `json:"value,omitempty"`
	}
	destructive := true
	mcp.AddTool(s, &mcp.Tool{Name: "put", Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			return nil, nil, os.WriteFile(filepath.Join(dir, filepath.Base(in.Name)), []byte(in.Value), 0o644)
		})
	mcp.AddTool(s, &mcp.Tool{Name: "peek", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			views := filepath.Join(dir, "views")
			n, _ := os.ReadFile(views)
			os.WriteFile(views, append(n, '+'), 0o644)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	check := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != "s3cret" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "ann", Expiration: time.Now().Add(time.Hour)}, nil
	}
	return auth.RequireBearerToken(check, nil)(h)
}

// TestVerifyHTTP verifies a server reached by -url, which verify cannot
// start afresh: the examples file's reset command empties its directory
// before each example, and the caller's bearer token comes from verify's
// environment. The planted lie is caught over HTTP as over stdio.
func TestVerifyHTTP(t *testing.T) {
	dir := t.TempDir()
	ts := httptest.NewServer(jarServer(dir))
	t.Cleanup(ts.Close)
	t.Setenv("JAR_TOKEN", "s3cret")
	examples := filepath.Join(t.TempDir(), "jar.json")
	os.WriteFile(examples, []byte(`{
	"reset": ["sh", "-c", "rm -f \"$0\"/*", `+strconvQuote(dir)+`],
	"state": {"dir": `+strconvQuote(dir)+`},
	"callers": {"default": {"headers": {"Authorization": "Bearer {env:JAR_TOKEN}"}}},
	"examples": [
		{"tool": "put", "fixtures": [{"tool": "put", "args": {"name": "a", "value": "1"}}], "args": {"name": "a", "value": "2"}},
		{"tool": "peek", "args": {"name": "a"}}
	]}`), 0o644)
	res := runCommand(t, "verify", "-json", "-timeout", "1m", "-examples", examples, "-url", ts.URL)
	var r verify.Report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("exit %d, %s: %v\n%s", res.code, res.stderr, err, res.stdout)
	}
	if res.code != exitFindings {
		t.Errorf("exit %d, want %d", res.code, exitFindings)
	}
	checkVerdicts(t, &r, map[string]verify.Verdict{"put": verify.Proven, "peek": verify.Lie},
		map[string]lie{"peek": {"read", "views", "", "empty", `{"content":"+","kind":"file","mode":"0644"}`}})

	// Without the token, the server refuses the connection: verify
	// cannot run, and says why.
	t.Setenv("JAR_TOKEN", "wrong")
	res = runCommand(t, "verify", "-timeout", "1m", "-examples", examples, "-url", ts.URL)
	if res.code != exitError || !strings.Contains(res.stderr, "401") {
		t.Errorf("with a wrong token: exit %d, stderr %q; want exit %d and the 401", res.code, res.stderr, exitError)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestVerifyFlood holds verify to its bound on what a server may answer:
// a tool whose answer is larger fails its example, with the reason,
// rather than filling verify's memory.
func TestVerifyFlood(t *testing.T) {
	examples := filepath.Join(t.TempDir(), "flood.json")
	os.WriteFile(examples, []byte(`{"state": {"dir": "{dir}"}, "examples": [{"tool": "flood"}], "skip": {"wait": "TestVerifyTimeout's"}}`), 0o644)
	res := runCommand(t, append([]string{"verify", "-json", "-examples", examples, "-timeout", "1m"}, stdioServer(t, "stall")...)...)
	var r verify.Report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("exit %d, %s: %v", res.code, res.stderr, err)
	}
	tr := r.Tool("flood")
	// The session's bound on one message, which the audit shares.
	bounded := func(e string) bool {
		return strings.Contains(e, "more than 16 MiB (the limit of one message")
	}
	if res.code != exitFindings || tr == nil || tr.Verdict != verify.Failed || !bounded(tr.Examples[0].Error) {
		t.Errorf("exit %d, flood: %s; want it failed for its answer's size", res.code, mustJSON(t, tr))
	}
}

func decodeReport(text string, r *verify.Report) error { return json.Unmarshal([]byte(text), r) }

// TestVerifyNoSQLiteReader: a SQLite state without mcpeffect-sqlite,
// neither beside mcpeffect nor on $PATH, is a setup problem: exit 2 before
// any server is started, with the command that installs the reader from
// a clone (the module is not published: go install …@latest cannot work).
func TestVerifyNoSQLiteReader(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	examples := writeFile(t, "db.json", []byte(`{"state": {"sqlite": "{dir}/db"}, "examples": [{"tool": "peek"}]}`))
	res := runCommand(t, "verify", "-timeout", "1m", "-examples", examples, "--", "/nonexistent/server")
	if res.code != exitError {
		t.Errorf("exit %d, want %d: %s", res.code, exitError, res.stderr)
	}
	for _, s := range []string{"no SQLite reader", "go install ./cmd/mcpeffect ./cmd/mcpeffect-sqlite", "-sqlite-reader"} {
		if !strings.Contains(res.stderr, s) {
			t.Errorf("stderr does not say %q: %s", s, res.stderr)
		}
	}
	if strings.Contains(res.stderr, "@latest") || strings.Contains(res.stderr, "/nonexistent/server") {
		t.Errorf("stderr suggests @latest, or started the server: %s", res.stderr)
	}
}
