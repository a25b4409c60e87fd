package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/badserver"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/hostile"
	"github.com/mcpeffect/mcpeffect/internal/testing/e2e"
	"github.com/mcpeffect/mcpeffect/internal/testing/nodetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// serverEnv names the server that the test binary serves over stdio when
// it is run as one: see TestMain.
const serverEnv = "MCPEFFECT_TEST_SERVER"

// TestMain lets the test binary stand in as the MCP server of a test, over
// stdio, when serverEnv names one: "bad" (the fixture of badserver, in
// pages of 4), "clean" (built with mcpeffect.AddTool), "e2e" (the server
// of the library's end-to-end tests, whose tools' effects depend on their
// arguments, with the full scope), "exit" (a server that fails at start),
// "hang" (one that never answers: see hang), "ledger" (one that reports
// failures in its results alone: see ledgerServer), "seed" (one whose
// state is files it is given: see seedServer), "stall" (one whose tool
// never returns: see stallServer), "shelf" (see shelfServer), "trash"
// (one whose writes publish their undos: see trashServer), or
// "hostile:ATTACK[:SIZE]" (a server of package hostile). With runEnv set,
// the test binary runs mcpeffect itself with its arguments, so that a test
// can measure it as a process of its own.
func TestMain(m *testing.M) {
	if os.Getenv(runEnv) != "" {
		os.Unsetenv(runEnv)
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	switch kind := os.Getenv(serverEnv); kind {
	case "":
		code := m.Run()
		removeBuilds()
		nodetest.Report(os.Stderr)
		os.Exit(code)
	case "bad":
		s := &badserver.Server{PageSize: 4}
		if err := s.ServeStdio(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "clean":
		if err := cleanServer(2).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "e2e":
		ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
		if err := e2e.NewServer().Run(ctx, &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "shelf":
		s, _ := shelfServer(os.Getenv(shelfDirEnv))
		if err := s.Run(mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "drawer":
		s, _ := drawerServer(os.Getenv(shelfDirEnv))
		if err := s.Run(mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "trash":
		if err := serveTrash(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "ledger":
		if err := ledgerServer(os.Getenv(shelfDirEnv)).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "seed":
		if err := seedServer(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "stall":
		if err := stallServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "exit":
		fmt.Fprintln(os.Stderr, "test server: cannot start: no configuration")
		os.Exit(3)
	case "hang":
		hang()
	default:
		if spec, ok := strings.CutPrefix(kind, "hostile:"); ok {
			s, err := hostile.ParseAttack(spec)
			if err == nil {
				err = s.ServeStdio(os.Stdin, os.Stdout)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "%s=%q: unknown server\n", serverEnv, kind)
		os.Exit(2)
	}
}

// recordEnv names the file where the hang server writes its process id,
// and each signal it receives.
const recordEnv = "MCPEFFECT_TEST_RECORD"

// hang serves as a server that never answers: it reads its input to the
// end and goes on running when it is closed, and records SIGTERM rather
// than exit on it, so that only SIGKILL ends it.
func hang() {
	record, err := os.OpenFile(os.Getenv(recordEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(record, "pid %d\n", os.Getpid())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM)
	fmt.Fprintln(os.Stderr, "hang server: reading requests, answering none")
	go io.Copy(io.Discard, os.Stdin)
	for sig := range signals {
		fmt.Fprintf(record, "signal %v\n", sig)
	}
}

// stdioServer returns the arguments that make audit run the test binary
// as the server kind of TestMain.
func stdioServer(t *testing.T, kind string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The server inherits the environment of audit, which is this
	// process's.
	t.Setenv(serverEnv, kind)
	return []string{"--", exe}
}

// httpServer serves h on a loopback address for the test, and returns the
// arguments that make audit reach it.
func httpServer(t *testing.T, h http.Handler, extra ...string) []string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return append([]string{"-url", ts.URL + "/mcp"}, extra...)
}

// cleanToolEffects are the tools of cleanServer.
var cleanToolEffects = []struct {
	name   string
	effect mcpeffect.Effect
}{
	{"get_note", mcpeffect.Read},
	{"search_web", mcpeffect.Read | mcpeffect.OpenWorld},
	{"create_note", mcpeffect.Write},
	{"tag_note", mcpeffect.Idempotent},
	{"delete_note", mcpeffect.Destructive | mcpeffect.Idempotent},
	{"post_message", mcpeffect.Write | mcpeffect.OpenWorld},
}

// cleanTools is how many tools cleanServer has.
const cleanTools = 6

// cleanServer returns a server whose tools are all added with
// mcpeffect.AddTool, listed in pages of pageSize.
func cleanServer(pageSize int) *mcp.Server {
	s, _ := cleanServerRegistry(pageSize)
	return s
}

// cleanServerRegistry returns cleanServer and its registry.
func cleanServerRegistry(pageSize int) (*mcp.Server, *mcpeffect.Registry) {
	s := mcp.NewServer(&mcp.Implementation{Name: "clean", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: pageSize})
	r := mcpeffect.NewRegistry()
	for _, tool := range cleanToolEffects {
		mcpeffect.AddTool(s, r, &mcp.Tool{Name: tool.name, Description: "The tool " + tool.name + "."}, tool.effect, noop)
	}
	return s, r
}

func noop(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}

// A result is what a run of the command left.
type result struct {
	code           int
	stdout, stderr string
}

// runCommand runs the command line args in this process.
func runCommand(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

// auditJSON runs mcpeffect audit -json with args, and decodes the report.
func auditJSON(t *testing.T, args ...string) (int, *audit.Report) {
	t.Helper()
	res := runCommand(t, append([]string{"audit", "-json"}, args...)...)
	if res.code == exitError {
		t.Fatalf("audit could not run (exit %d): %s", res.code, res.stderr)
	}
	var r audit.Report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("decoding the report: %v\n%s", err, res.stdout)
	}
	return res.code, &r
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// badFindings is what the audit finds in badserver, in order: each rule
// broken by exactly one tool.
var badFindings = []struct {
	tool string
	rule audit.Rule
}{
	{"export_everything", audit.RuleNoAnnotations},
	{"archive_project", audit.RuleReadOnlyDestructive},
	{"archive_project", audit.RuleRecoveryUndoUnhinted},
	{"send_invoice", audit.RuleMissingDestructive},
	{"send_invoice", audit.RuleRecoveryUndoUnlisted},
	{"rename_project", audit.RuleMissingIdempotent},
	{"rename_project", audit.RuleOutcomesMalformed},
	{"rename_project", audit.RuleRecoveryParameters},
	{"fetch_page", audit.RuleMissingOpenWorld},
	{"fetch_page", audit.RuleRecoveryOfRead},
	{"drafts_delete", audit.RuleDeleteNotDestructive},
	{"drafts_delete", audit.RuleRecoveryMalformed},
	{"get_token", audit.RuleReadNotReadOnly},
	{"get_token", audit.RuleRecoveryUndoReadOnly},
	{"set_reminder", audit.RuleWriteReadOnly},
	{"set_reminder", audit.RuleOutcomeWider},
}

func TestAuditBadServer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) []string
	}{
		{"stdio", func(t *testing.T) []string { return stdioServer(t, "bad") }},
		{"http", func(t *testing.T) []string {
			h := (&badserver.Server{PageSize: 3}).Handler("s3cret")
			return httpServer(t, h, "-header", "Authorization: Bearer s3cret")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, r := auditJSON(t, tc.server(t)...)
			if code != exitFindings {
				t.Errorf("exit code %d, want %d", code, exitFindings)
			}
			if r.Server.Name != badserver.Name || r.Server.Version != badserver.Version {
				t.Errorf("server %+v, want %s %s", r.Server, badserver.Name, badserver.Version)
			}
			if got, want := len(r.Tools), len(badserver.Tools()); got != want {
				t.Errorf("%d tools listed, want %d", got, want)
			}

			var got []string
			for _, f := range r.Findings {
				got = append(got, f.Tool+" "+string(f.Rule))
			}
			var want []string
			for _, f := range badFindings {
				want = append(want, f.tool+" "+string(f.rule))
			}
			if !slices.Equal(got, want) {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, rule := range audit.Rules() {
				switch rule {
				case audit.RuleDuplicateName:
					continue // a rule about the list: TestAuditDuplicateTool
				case audit.RuleHintsNeverSet:
					// A rule of the server as a whole, which a server of
					// varied tools cannot break (see TestHintsNeverSet).
					continue
				}
				n := 0
				for _, f := range r.Findings {
					if f.Rule == rule {
						n++
					}
				}
				if n != 1 {
					t.Errorf("rule %s fired %d times, want exactly once", rule, n)
				}
			}

			wantSummary := audit.Summary{Tools: 12, Reads: 3, Writes: 9, Destructive: 5, Idempotent: 5, OpenWorld: 3, Errors: 5, Warnings: 11, Recoveries: 6}
			if r.Summary != wantSummary {
				t.Errorf("summary %+v, want %+v", r.Summary, wantSummary)
			}

			// A hint left out is absent from the declared hints, and
			// takes its worst case in the assumed ones.
			i := slices.IndexFunc(r.Tools, func(t audit.Tool) bool { return t.Name == "rename_project" })
			if i < 0 {
				t.Fatal("rename_project is not in the report")
			}
			rename := r.Tools[i]
			if rename.Declared.Idempotent != nil {
				t.Errorf("rename_project: declared idempotentHint %v, want missing", *rename.Declared.Idempotent)
			}
			if rename.Assumed.Idempotent == nil || *rename.Assumed.Idempotent {
				t.Errorf("rename_project: assumed idempotentHint %v, want false", rename.Assumed.Idempotent)
			}
			if want := mcpeffect.Write; rename.Effect != want {
				t.Errorf("rename_project: effect %s, want %s", rename.Effect, want)
			}
		})
	}
}

func TestAuditCleanServer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) []string
	}{
		{"stdio", func(t *testing.T) []string { return stdioServer(t, "clean") }},
		{"http", func(t *testing.T) []string {
			return httpServer(t, streamable(cleanServer(2)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, r := auditJSON(t, append([]string{"-fail-on", "warning"}, tc.server(t)...)...)
			if code != exitOK {
				t.Errorf("exit code %d, want %d", code, exitOK)
			}
			if len(r.Findings) != 0 {
				t.Errorf("findings %+v, want none", r.Findings)
			}
			// The server lists its tools in pages of 2.
			if len(r.Tools) != cleanTools {
				t.Errorf("%d tools listed, want %d", len(r.Tools), cleanTools)
			}
			want := audit.Summary{Tools: 6, Reads: 2, Writes: 4, Destructive: 1, Idempotent: 2, OpenWorld: 2}
			if r.Summary != want {
				t.Errorf("summary %+v, want %+v", r.Summary, want)
			}
			for _, tool := range r.Tools {
				h := tool.Declared
				if h.ReadOnly == nil || h.Destructive == nil || h.Idempotent == nil || h.OpenWorld == nil {
					t.Errorf("tool %s: declared %s, want all four hints", tool.Name, mustJSON(t, h))
				}
			}
		})
	}
}

func TestAuditFailOn(t *testing.T) {
	bad := (&badserver.Server{}).Handler("")
	// A server whose one tool declares no openWorldHint: a warning only.
	warnings := mcp.NewServer(&mcp.Implementation{Name: "warnings", Version: "1"}, nil)
	mcp.AddTool(warnings, &mcp.Tool{Name: "get_note", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, noop)
	clean := cleanServer(0)

	for _, tc := range []struct {
		name    string
		handler http.Handler
		failOn  []string
		want    int
	}{
		{"errors/default", bad, nil, exitFindings},
		{"errors/fail-on=error", bad, []string{"-fail-on", "error"}, exitFindings},
		{"errors/fail-on=warning", bad, []string{"-fail-on=warning"}, exitFindings},
		{"warnings/default", streamable(warnings), nil, exitOK},
		{"warnings/fail-on=error", streamable(warnings), []string{"-fail-on", "ERROR"}, exitOK},
		{"warnings/fail-on=warning", streamable(warnings), []string{"-fail-on", "warning"}, exitFindings},
		{"clean/fail-on=warning", streamable(clean), []string{"-fail-on", "warning"}, exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"audit"}, tc.failOn...), httpServer(t, tc.handler)...)
			res := runCommand(t, args...)
			if res.code != tc.want {
				t.Errorf("exit code %d, want %d; stderr:\n%s", res.code, tc.want, res.stderr)
			}
			if res.stdout == "" {
				t.Error("no report on stdout")
			}
		})
	}
}

// streamable returns the Streamable HTTP handler of s.
func streamable(s *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

func TestAuditCannotRun(t *testing.T) {
	refused := func(t *testing.T) []string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return []string{"-url", "http://" + addr + "/mcp"}
	}
	hanging := func(t *testing.T) []string {
		// A server that accepts notifications but never answers a call.
		release := make(chan struct{})
		args := httpServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var msg struct{ ID json.RawMessage }
			if json.NewDecoder(r.Body).Decode(&msg) == nil && msg.ID == nil {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}), "-timeout", "100ms")
		// Cleanups run last first: release the handlers, which would
		// hold the server's Close, before it.
		t.Cleanup(func() { close(release) })
		return args
	}
	notFound := func(t *testing.T) []string {
		mux := http.NewServeMux()
		mux.Handle("/mcp", (&badserver.Server{}).Handler(""))
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		return []string{"-url", ts.URL + "/api/mcp"}
	}
	challenge := func(t *testing.T) []string {
		return httpServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource"`)
			http.Error(w, "no token", http.StatusUnauthorized)
		}))
	}
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) []string
		stderr []string // what stderr must say
	}{
		{"no such command", func(t *testing.T) []string { return []string{"--", filepath.Join(t.TempDir(), "no-such-server")} },
			[]string{"cannot run", "no-such-server", "no such file", "check the command after --"}},
		{"server exits", func(t *testing.T) []string { return stdioServer(t, "exit") },
			[]string{"the server stopped (exit status 3) before it answered initialize", "its standard error ended with:\n    test server: cannot start: no configuration"}},
		{"connection refused", refused, []string{"nothing is listening at 127.0.0.1:", "(connection refused): start the server, or check the host and port of -url"}},
		{"not found", notFound, []string{"the server answered 404 Not Found to POST /api/mcp: check the path of -url"}},
		{"no bearer token", func(t *testing.T) []string { return httpServer(t, (&badserver.Server{}).Handler("s3cret")) },
			[]string{"401 Unauthorized", `give them with -header "Authorization: Bearer TOKEN"`}},
		{"wrong bearer token", func(t *testing.T) []string {
			return httpServer(t, (&badserver.Server{}).Handler("s3cret"), "-header", "Authorization: Bearer guess")
		}, []string{"401 Unauthorized", "it refused the Authorization header given"}},
		{"OAuth challenge", challenge, []string{"401 Unauthorized", "resource_metadata=", "oauth-protected-resource"}},
		{"timeout", hanging, []string{"no answer within 100ms (-timeout) while waiting for the answer to initialize"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCommand(t, append([]string{"audit"}, tc.server(t)...)...)
			if res.code != exitError {
				t.Errorf("exit code %d, want %d", res.code, exitError)
			}
			if res.stdout != "" {
				t.Errorf("stdout %q, want nothing", res.stdout)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(res.stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, res.stderr)
				}
			}
		})
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // what stdout must say
		stderr string // what stderr must say
	}{
		{nil, exitError, "", "Usage:"},
		{[]string{"help"}, exitOK, "mcpeffect <command>", ""},
		{[]string{"help", "audit"}, exitOK, "usage: mcpeffect audit", ""},
		{[]string{"help", "nope"}, exitError, "", `unknown command "nope"`},
		{[]string{"help", "audit", "more"}, exitError, "", "too many arguments"},
		{[]string{"nope"}, exitError, "", `unknown command "nope"`},
		{[]string{"audit", "-h"}, exitOK, "-fail-on level", ""},
		{[]string{"audit"}, exitError, "", "no server: give a command to run after --, or -url"},
		{[]string{"audit", "-url", "http://127.0.0.1:1/mcp", "--", "server"}, exitError, "", "give either -url or a command to run, not both"},
		{[]string{"audit", "-header", "Authorization: Bearer x", "--", "server"}, exitError, "", "-header needs -url"},
		{[]string{"audit", "-url", "http://127.0.0.1:1/mcp", "-header", "Authorization"}, exitError, "", `"Authorization" is not a header: want "Name: value"`},
		{[]string{"audit", "-url", "http://127.0.0.1:1/mcp", "-header", "Bad Name: x"}, exitError, "", `header name "Bad Name": character ' ' is not allowed`},
		{[]string{"audit", "-url", "127.0.0.1:1/mcp"}, exitError, "", "want an http:// or https:// URL"},
		{[]string{"audit", "-fail-on", "info", "--", "server"}, exitError, "", `invalid value "info" for flag -fail-on: unknown level "info" (want warning or error)`},
		{[]string{"audit", "-timeout", "-1s", "--", "server"}, exitError, "", "-timeout -1s is negative"},
		{[]string{"audit", "-verbose", "--", "server"}, exitError, "", "flag provided but not defined: -verbose"},
		{[]string{"audit", "-host", "nope", "--", "server"}, exitError, "", `invalid value "nope" for flag -host: unknown host "nope": want all, or one or more of vscode, claude-code`},
		{[]string{"audit", "-profile", "apple", "--", "server"}, exitError, "", `unknown profile "apple": want all, or one or more of claude-directory, chatgpt-directory`},
		{[]string{"help", "hosts"}, exitOK, "source: microsoft/vscode", ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			res := runCommand(t, tc.args...)
			if res.code != tc.code {
				t.Errorf("exit code %d, want %d", res.code, tc.code)
			}
			if !strings.Contains(res.stdout, tc.stdout) {
				t.Errorf("stdout does not say %q:\n%s", tc.stdout, res.stdout)
			}
			if !strings.Contains(res.stderr, tc.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tc.stderr, res.stderr)
			}
			if tc.code == exitError && res.stderr == "" {
				t.Error("exit 2 with nothing on stderr")
			}
		})
	}
}

// TestAuditText holds the reports for people against golden files, which
// the READMEs quote: go test -run TestAuditText -update rewrites them.
func TestAuditText(t *testing.T) {
	for _, tc := range []struct {
		golden  string
		server  string // the kind of TestMain
		flags   []string
		code    int
		readmes []string // that quote the golden file
	}{
		{"badserver.golden", "bad", nil, exitFindings, []string{"README.md"}},
		{"badserver-codex.golden", "bad", []string{"-host", "codex"}, exitFindings, []string{"README.md"}},
		{"e2eserver.golden", "e2e", nil, exitOK, []string{"README.md", "../../README.md"}},
		{"e2eserver-vscode.golden", "e2e", []string{"-host", "vscode"}, exitOK, []string{"README.md"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			args := append(append([]string{"audit"}, tc.flags...), stdioServer(t, tc.server)...)
			res := runCommand(t, args...)
			if res.code != tc.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", res.code, tc.code, res.stderr)
			}
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(golden, []byte(res.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if res.stdout != string(want) {
				t.Errorf("report:\n%s\nwant (%s):\n%s", res.stdout, golden, want)
			}
			for _, name := range tc.readmes {
				readme, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(readme, want) {
					t.Errorf("%s does not quote %s", name, golden)
				}
			}
		})
	}
}

func TestAuditHostsJSON(t *testing.T) {
	code, r := auditJSON(t, append([]string{"-host", "all", "-profile", "all"}, stdioServer(t, "bad")...)...)
	if code != exitFindings {
		t.Errorf("exit code %d, want %d", code, exitFindings)
	}
	if len(r.Hosts) != len(audit.HostProfiles()) || len(r.Directories) != 2 {
		t.Fatalf("%d host reports, %d directory reports; want every profile", len(r.Hosts), len(r.Directories))
	}
	for _, h := range r.Hosts {
		if h.Source == "" || h.Read == "" || h.Summary == "" || len(h.Tools) != len(r.Tools) {
			t.Errorf("%s/%s: %+v", h.Host, h.Mode, h)
		}
	}
	// export_everything declares nothing: VS Code asks, Codex asks,
	// Copilot's code review leaves it out.
	outcome := func(host, mode, tool string) audit.HostAction {
		for _, h := range r.Hosts {
			if h.Host == host && h.Mode == mode {
				for _, t := range h.Tools {
					if t.Name == tool {
						return t.Action
					}
				}
			}
		}
		t.Fatalf("no outcome for %s in %s/%s", tool, host, mode)
		return 0
	}
	for _, c := range []struct {
		host, mode, tool string
		want             audit.HostAction
	}{
		{"vscode", "manual", "export_everything", audit.Asks},
		{"codex", "auto", "export_everything", audit.Asks},
		{"copilot", "code-review", "export_everything", audit.Refused},
		{"vscode", "manual", "fetch_page", audit.Runs},
		// archive_project says read-only and destructive: Codex asks,
		// VS Code does not read destructiveHint.
		{"codex", "auto", "archive_project", audit.Asks},
		{"vscode", "manual", "archive_project", audit.Runs},
		// rename_project: a write that declares it destroys nothing and
		// stays in its own data: Codex runs it.
		{"codex", "auto", "rename_project", audit.Runs},
		{"claude-code", "plan", "rename_project", audit.AsksAlways},
	} {
		if got := outcome(c.host, c.mode, c.tool); got != c.want {
			t.Errorf("%s/%s, %s: %s, want %s", c.host, c.mode, c.tool, got, c.want)
		}
	}
}
