package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// seedEnv names the files seedServer copies into its directory, separated
// by the system's list separator.
const seedEnv = "MCPEFFECT_TEST_SEED"

// seedServer serves, over stdio, a server whose state is what it is
// given: it copies each file seedEnv names into the directory args[0]
// (verify's {dir}) as it starts, and has one tool, peek, a read that
// changes nothing.
func seedServer(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("seed server: want the directory, got %q", args)
	}
	for _, from := range filepath.SplitList(os.Getenv(seedEnv)) {
		if err := copyFile(from, filepath.Join(args[0], filepath.Base(from))); err != nil {
			return err
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "seed", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "peek", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	return s.Run(context.Background(), &mcp.StdioTransport{})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestVerifyBoundedState verifies, in a process of its own, servers whose
// state is made to hold verify's memory: a JSON file of small values,
// which decoded, re-encoded and decoded again took verify to 1.2 GiB for
// 16 MB; a SQLite file of 8 KiB whose rows each hold a generated value of
// 50 MB (testdata/states/zeroblob.sqlite: CREATE TABLE t (id INTEGER
// PRIMARY KEY, g BLOB GENERATED ALWAYS AS (zeroblob(50000000)) VIRTUAL)
// and 8 rows), which took the SQLite reader to 1.7 GiB; a command that
// prints as many values; a tree of more contents than a capture holds.
// Each is refused at the bound it passes, with exit 2 and the source
// named, having held a bounded amount of memory whatever the state's
// size.
func TestVerifyBoundedState(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, parts ...string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.Join(parts, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// 2,000,000 numbers in 4 MB.
	values := write("state.json", `{"items": [`, strings.Repeat("[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],", 40_000), `[]]}`)
	tree := filepath.Join(dir, "tree")
	os.Mkdir(tree, 0o755)
	for i := range 20 {
		os.WriteFile(filepath.Join(tree, fmt.Sprint(i)), []byte(strings.Repeat("x", 1<<20)), 0o644)
	}
	maxRSS := int64(96 << 20)
	if raceEnabled {
		maxRSS *= 5
	}
	for _, tc := range []struct {
		name     string
		examples string
		seed     string
		flags    func(t *testing.T) []string
		want     []string
	}{
		{"json", `{"state": {"json": {"file": "{dir}/state.json", "at": "/items"}}, "examples": [{"tool": "peek"}]}`, values, nil,
			[]string{"the json state", "state.json: more than 1000000 values once decoded (the bound of one capture)"}},
		{"command", `{"state": {"command": ["cat", "{dir}/state.json"]}, "examples": [{"tool": "peek"}]}`, values, nil,
			[]string{"the command state: cat printed: more than 1000000 values once decoded (the bound of one capture)"}},
		{"sqlite", `{"state": {"sqlite": "{dir}/zeroblob.sqlite"}, "examples": [{"tool": "peek"}]}`, filepath.Join("testdata", "states", "zeroblob.sqlite"), sqliteReaderFlag,
			[]string{"the sqlite state", `zeroblob.sqlite: mcpeffect-sqlite: table "t": a value of more than 16 MiB (the bound of one value, -max-value)`}},
		{"dir", `{"state": {"dir": "` + tree + `"}, "examples": [{"tool": "peek"}]}`, "", nil,
			[]string{"the dir state", "more than 16777216 bytes held (the bound of one capture)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var flags []string
			if tc.flags != nil {
				flags = tc.flags(t)
			}
			examples := write(tc.name+".examples.json", tc.examples)
			t.Setenv(seedEnv, tc.seed)
			args := append([]string{"verify", "-timeout", "2m", "-examples", examples}, flags...)
			res := runChild(t, append(append(args, stdioServer(t, "seed")...), "{dir}")...)
			t.Logf("verify held at most %d MiB", res.maxRSS>>20)
			if res.code != exitError {
				t.Errorf("exit %d, want %d: %s%s", res.code, exitError, res.stdout, res.stderr)
			}
			for _, s := range tc.want {
				if !strings.Contains(res.stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, res.stderr)
				}
			}
			if res.maxRSS > maxRSS {
				t.Errorf("verify held %d MiB, want at most %d MiB", res.maxRSS>>20, maxRSS>>20)
			}
		})
	}
}
