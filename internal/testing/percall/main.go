// Command percall measures what one tools/call costs an MCP server in
// CPU, on each Go SDK plain and through mcpeffect, and Done's reads
// against go-sdk's floor, on the machine it runs on:
//
//	go run ./internal/testing/percall
//
// It builds each server as a binary with go build, in the workspace of
// the clone it runs in (go.work): gosdkserver (go-sdk, plain and through
// mcpeffect.AddTool and its middleware), mcpgo/internal/percall/mcpgoserver
// (mcp-go, plain and through the adapter) and examples/done-server. It
// starts each over stdio and connects one go-sdk client to all of them,
// which calls tools/call one call at a time: first a warm-up, then rounds
// in which the servers take turns (of 100 calls by default, -turn), the
// order rotated from one turn to the next, so that every server sees the
// same moments of a shared, noisy machine. Around each round it reads the
// CPU time of each server process, all its threads, user and system (on
// Linux, the process's CPU clock; /proc/PID/stat checks it at the end).
//
// A turn of one call measures calls that find the caches as the other
// servers left them; a turn of many, calls in a row, the floor of each
// server's own code, which is what the default measures. A second process
// of go-sdk's server, measured against the first, shows what the noise
// alone gives in the same run.
//
// It prints a table: each server's CPU a call, and its ratio to its
// baseline, taken round by round (each round's ratio pairs two servers
// measured over the same seconds), as the median over rounds, their
// range, and the interval that holds the median with at least 95%
// confidence, which narrows as rounds are added.
//
// With -work FILE, it also builds go-sdk's server and Done with another
// go.work, one that replaces go-sdk with a copy to try a change, and
// measures each against the same built with the clone's: what a change
// to go-sdk would save, in the same run.
//
// Elsewhere than on Linux, the CPU time of another process is not read:
// the table gives the client's wall time a call instead, which counts
// the client, the pipes and the scheduler as well, and says so.
package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "percall:", err)
		}
		os.Exit(2)
	}
}

// config is what the command line asks for.
type config struct {
	rounds, calls, warmup int
	turn                  int
	done, options         bool
	cpuprofiles           string
	work                  string
	verbose               bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("percall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.rounds, "rounds", 15, "rounds of calls; the ratios' medians are taken over them")
	fs.IntVar(&c.calls, "calls", 2000, "calls of each server in a round")
	fs.IntVar(&c.turn, "turn", 100, "calls a server makes in a row, its turn, before the next server's")
	fs.IntVar(&c.warmup, "warmup", 500, "calls of each server before the first round, not measured")
	fs.BoolVar(&c.done, "done", true, "measure Done's reads too (the first build of Done compiles SQLite: minutes)")
	fs.BoolVar(&c.options, "options", false, "also measure go-sdk's cheaper ways to add a tool: a handler of the raw request (Server.AddTool), and typed input with an output of type any")
	fs.StringVar(&c.cpuprofiles, "cpuprofiles", "", "write each SDK server's CPU profile into this `directory` (Done writes none)")
	fs.StringVar(&c.work, "work", "", "also measure go-sdk's server, and Done's, built with this go.work `file` (one that replaces go-sdk with a copy to try a change, say), each against the same built with the clone's")
	fs.BoolVar(&c.verbose, "v", false, "print each server's process id and, at the end, what it wrote on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.rounds < 1 || c.calls < 1 || c.turn < 1 || c.warmup < 0 {
		return fmt.Errorf("-rounds %d, -calls %d, -turn %d, -warmup %d: want at least 1 round of 1 call in turns of 1 or more, and no negative warm-up", c.rounds, c.calls, c.turn, c.warmup)
	}
	if c.work != "" {
		abs, err := filepath.Abs(c.work)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			return fmt.Errorf("-work: %w", err)
		}
		c.work = abs
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()

	root, err := workspace(ctx)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "percall-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if c.cpuprofiles != "" {
		if err := os.MkdirAll(c.cpuprofiles, 0o755); err != nil {
			return err
		}
	}

	specs, err := buildServers(ctx, root, tmp, c, stderr)
	if err != nil {
		return err
	}
	loadBefore := loadAverage()
	servers, closeAll, err := startServers(ctx, specs, c.verbose, stderr)
	defer func() {
		closeAll()
		if c.verbose {
			for _, s := range servers {
				fmt.Fprintf(stderr, "percall: %s (process %d) wrote on stderr:\n%s\n", s.spec.key, s.pid, s.stderr.String())
			}
		}
	}()
	if err != nil {
		return err
	}
	targets := make([]target, len(servers))
	for i, s := range servers {
		targets[i] = s
	}
	_, cpuErr := processCPU(servers[0].pid)
	fmt.Fprintf(stderr, "percall: %d servers, warming up with %d calls each\n", len(servers), c.warmup)
	if c.warmup > 0 {
		if _, err := runRounds(ctx, targets, 1, c.warmup, c.turn, false, nil); err != nil {
			return err
		}
	}
	start := time.Now()
	rounds, err := runRounds(ctx, targets, c.rounds, c.calls, c.turn, cpuErr == nil, func(done int) {
		fmt.Fprintf(stderr, "percall: round %d of %d (%s)\n", done, c.rounds, time.Since(start).Round(time.Second))
	})
	if err != nil {
		return err
	}
	check := checkStat(servers)
	report(stdout, reportOf(c, specs, rounds, cpuErr, loadBefore, loadAverage(), check))
	return nil
}

// workspace returns the directory of the go.work of the clone that the
// command runs in, where it builds the servers.
func workspace(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOWORK").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOWORK: %w", err)
	}
	work := strings.TrimSpace(string(out))
	if work == "" || work == "off" {
		return "", errors.New("no go.work: run percall in the clone of mcpeffect, whose workspace holds the modules of the servers it builds")
	}
	return filepath.Dir(work), nil
}

// A spec is one server to measure: a row of the table.
type spec struct {
	key     string // for profiles and messages
	short   string // for the table, when others are measured against it
	row     string // the table's name of the server
	against int    // the index of the spec it is a ratio to, or -1
	bin     string
	args    []string
	// dataDir is Done's data directory, made empty before the start.
	dataDir string
	// tool is the call to measure; seed, if not nil, makes it from the
	// server's own answers, before the warm-up.
	tool *mcp.CallToolParams
	seed func(context.Context, *mcp.ClientSession) (*mcp.CallToolParams, error)
}

// buildServers builds the servers' binaries into dir and returns the
// specs of what to measure, in the table's order.
func buildServers(ctx context.Context, root, dir string, c config, stderr io.Writer) ([]*spec, error) {
	// By import path, so that another workspace (-work) builds them too.
	build := func(pkg, name, work string) (string, error) {
		bin := filepath.Join(dir, name)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
		cmd.Dir = root
		if work != "" {
			cmd.Env = append(os.Environ(), "GOWORK="+work)
			fmt.Fprintf(stderr, "percall: GOWORK=%s go build %s\n", work, pkg)
		} else {
			fmt.Fprintf(stderr, "percall: go build %s\n", pkg)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
		}
		return bin, nil
	}
	const (
		gosdkPkg = "github.com/mcpeffect/mcpeffect/internal/testing/percall/gosdkserver"
		mcpgoPkg = "github.com/mcpeffect/mcpeffect/mcpgo/internal/percall/mcpgoserver"
		donePkg  = "github.com/mcpeffect/mcpeffect/examples/done-server"
	)
	gosdk, err := build(gosdkPkg, "gosdkserver", "")
	if err != nil {
		return nil, err
	}
	mcpgo, err := build(mcpgoPkg, "mcpgoserver", "")
	if err != nil {
		return nil, err
	}
	echo := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "a call"}}
	profile := func(key string) []string {
		if c.cpuprofiles == "" {
			return nil
		}
		return []string{"-cpuprofile", filepath.Join(c.cpuprofiles, key+".pprof")}
	}
	sdkV, mcpgoV := moduleVersion(gosdk, "github.com/modelcontextprotocol/go-sdk"), moduleVersion(mcpgo, "github.com/mark3labs/mcp-go")
	specs := []*spec{
		{key: "gosdk", short: "go-sdk", row: "go-sdk " + sdkV + ", a trivial typed tool", against: -1,
			bin: gosdk, args: append([]string{"-variant", "plain"}, profile("gosdk")...), tool: echo},
		{key: "gosdk-mcpeffect", row: "the same through `mcpeffect.AddTool` and its middleware", against: 0,
			bin: gosdk, args: append([]string{"-variant", "mcpeffect"}, profile("gosdk-mcpeffect")...), tool: echo},
		{key: "mcpgo", short: "mcp-go", row: "mcp-go " + mcpgoV + ", a trivial tool", against: 0,
			bin: mcpgo, args: append([]string{"-variant", "plain"}, profile("mcpgo")...), tool: echo},
		{key: "mcpgo-mcpeffect", row: "the same through the mcpgo adapter (`ServerOptions`, `mcpgo.AddTool`)", against: 2,
			bin: mcpgo, args: append([]string{"-variant", "mcpeffect"}, profile("mcpgo-mcpeffect")...), tool: echo},
		// The first server again: what its ratio shows is the noise alone.
		{key: "gosdk-again", row: "the first again, another process of the same server: the noise alone", against: 0,
			bin: gosdk, args: append([]string{"-variant", "plain"}, profile("gosdk-again")...), tool: echo},
	}
	if c.options {
		specs = append(specs,
			&spec{key: "gosdk-untyped", row: "go-sdk, the same tool with a handler of the raw request (`Server.AddTool`)", against: 0,
				bin: gosdk, args: append([]string{"-variant", "untyped"}, profile("gosdk-untyped")...), tool: echo},
			&spec{key: "gosdk-noschema", row: "go-sdk, typed input and an output of type `any` (no output schema)", against: 0,
				bin: gosdk, args: append([]string{"-variant", "noschema"}, profile("gosdk-noschema")...), tool: echo},
		)
	}
	var otherDone string
	if c.work != "" {
		other, err := build(gosdkPkg, "gosdkserver-work", c.work)
		if err != nil {
			return nil, err
		}
		specs = append(specs, &spec{key: "gosdk-work", row: "the first row's server built with -work (go-sdk " + moduleVersion(other, "github.com/modelcontextprotocol/go-sdk") + ")", against: 0,
			bin: other, args: append([]string{"-variant", "plain"}, profile("gosdk-work")...), tool: echo})
		if c.done {
			if otherDone, err = build(donePkg, "done-server-work", c.work); err != nil {
				return nil, err
			}
		}
	}
	if !c.done {
		return specs, nil
	}
	done, err := build(donePkg, "done-server", "")
	if err != nil {
		return nil, err
	}
	for _, d := range []struct {
		tool, row string
		seed      func(context.Context, *mcp.ClientSession) (*mcp.CallToolParams, error)
	}{
		{"whoami", "Done `whoami` (owner mode, empty workspace)", nil},
		{"list_labels", "Done `list_labels` (empty workspace)", nil},
		{"get_task", "Done `get_task` (one task, made with `create_task`)", seedTask},
	} {
		data := filepath.Join(dir, "done-"+d.tool)
		specs = append(specs, &spec{key: "done-" + d.tool, short: "Done", row: d.row, against: 0, bin: done, args: []string{"-data", data},
			dataDir: data, tool: &mcp.CallToolParams{Name: d.tool, Arguments: map[string]any{}}, seed: d.seed})
		if otherDone != "" {
			data := filepath.Join(dir, "done-work-"+d.tool)
			specs = append(specs, &spec{key: "done-work-" + d.tool, row: d.row + ", built with -work", against: len(specs) - 1, bin: otherDone, args: []string{"-data", data},
				dataDir: data, tool: &mcp.CallToolParams{Name: d.tool, Arguments: map[string]any{}}, seed: d.seed})
		}
	}
	return specs, nil
}

// seedTask makes a task through Done's own create_task, and returns the
// params of the get_task of it.
func seedTask(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolParams, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_task", Arguments: map[string]any{
		"title":       "Write the README",
		"description": "What the command measures, and how to run it.",
	}})
	if err != nil {
		return nil, fmt.Errorf("create_task: %w", err)
	}
	if res.IsError {
		return nil, fmt.Errorf("create_task: %s", resultText(res))
	}
	task, _ := res.StructuredContent.(map[string]any)
	id, _ := task["id"].(string)
	if id == "" {
		return nil, fmt.Errorf("create_task returned no task id: %s", resultText(res))
	}
	return &mcp.CallToolParams{Name: "get_task", Arguments: map[string]any{"task_id": id}}, nil
}

// moduleVersion returns the version of module that bin was built with,
// or "(version unknown)".
func moduleVersion(bin, module string) string {
	info, err := buildinfo.ReadFile(bin)
	if err == nil {
		for _, d := range info.Deps {
			if d.Path == module {
				if d.Replace != nil {
					return d.Version + " replaced by " + d.Replace.Path
				}
				return d.Version
			}
		}
	}
	return "(version unknown)"
}

// A server is one started server process and its client's session.
type server struct {
	spec   *spec
	cs     *mcp.ClientSession
	pid    int
	stderr *tail
	params *mcp.CallToolParams
}

func (s *server) call(ctx context.Context) error {
	res, err := s.cs.CallTool(ctx, s.params)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", s.spec.key, s.params.Name, err)
	}
	if res.IsError {
		return fmt.Errorf("%s: %s: %s", s.spec.key, s.params.Name, resultText(res))
	}
	return nil
}

func (s *server) cpu() (time.Duration, error) {
	d, err := processCPU(s.pid)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.spec.key, err)
	}
	return d, nil
}

// startServers starts every server of specs and connects one client to
// all, makes each server's first call and checks it; closeAll ends them.
func startServers(ctx context.Context, specs []*spec, verbose bool, stderr io.Writer) (servers []*server, closeAll func(), err error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "percall", Version: "v1"}, nil)
	closeAll = func() {
		var wg sync.WaitGroup
		for _, s := range servers {
			wg.Go(func() { s.cs.Close() })
		}
		wg.Wait()
	}
	for _, sp := range specs {
		if sp.dataDir != "" {
			if err := os.MkdirAll(sp.dataDir, 0o700); err != nil {
				return servers, closeAll, err
			}
		}
		cmd := exec.Command(sp.bin, sp.args...)
		s := &server{spec: sp, stderr: &tail{max: 8 << 10}, params: sp.tool}
		cmd.Stderr = s.stderr
		if sp.dataDir != "" {
			cmd.Dir = sp.dataDir
		}
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			return servers, closeAll, fmt.Errorf("%s: %w\n%s", sp.key, err, s.stderr.String())
		}
		s.cs, s.pid = cs, cmd.Process.Pid
		servers = append(servers, s)
		if verbose {
			fmt.Fprintf(stderr, "percall: %s is process %d\n", sp.key, s.pid)
		}
		if sp.seed != nil {
			if s.params, err = sp.seed(ctx, cs); err != nil {
				return servers, closeAll, fmt.Errorf("%s: %w", sp.key, err)
			}
		}
		if err := s.call(ctx); err != nil {
			return servers, closeAll, fmt.Errorf("%w\n%s", err, s.stderr.String())
		}
	}
	return servers, closeAll, nil
}

// resultText returns the text of a result, for a message.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// A tail keeps the last max bytes written to it: a server's stderr, for
// the message of its failure.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}

// loadAverage returns the system's load averages over 1, 5 and 15
// minutes, as /proc/loadavg has them, or "" where there is none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// machine returns the processor's model name, as /proc/cpuinfo has it,
// and the CPUs this process may use.
func machine() string {
	model := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs", model, runtime.NumCPU())
}
