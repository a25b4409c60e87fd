package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func noop(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}

func TestWriteText(t *testing.T) {
	r, err := Review(connect.Server{Name: "notes", Title: "Notes", Version: "2.0", ProtocolVersion: "2025-11-25"}, []connect.Listed{
		{Name: "get_note", Annotations: json.RawMessage(`{"readOnlyHint": true, "openWorldHint": false}`)},
		{Name: "wipe", Annotations: json.RawMessage(`{"readOnlyHint": true, "destructiveHint": true, "openWorldHint": false}`)},
		{Name: "export"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const want = `notes "Notes" 2.0 (MCP 2025-11-25): 3 tools

TOOL      READ-ONLY  DESTRUCTIVE  IDEMPOTENT  OPEN-WORLD  EFFECT
get_note  true       n/a          n/a         false       read
wipe      true       true         (false)     false       write|destructive
export    (false)    (true)       (false)     (true)      write|destructive|openworld
(x): hint missing, hosts assume x
n/a: hint missing, and meaningless for a read-only tool

LEVEL    TOOL    RULE                       FINDING
error    wipe    read-only-and-destructive  readOnlyHint and destructiveHint are both true: hosts cannot tell which is wrong, and must treat it as a destructive write
warning  wipe    missing-idempotent-hint    a write without idempotentHint: hosts must assume that repeating it changes more
error    export  no-annotations             declares none of the four hints: hosts must assume a destructive, non-idempotent write on an open world

3 tools: 1 read, 2 writes (2 destructive, 0 idempotent), 1 open-world. 2 errors, 1 warning.
`
	var plain bytes.Buffer
	if err := WriteText(&plain, r, false); err != nil {
		t.Fatal(err)
	}
	if plain.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", plain.String(), want)
	}

	var colored bytes.Buffer
	if err := WriteText(&colored, r, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"\x1b[1;31merror\x1b[0m", "\x1b[33mwarning\x1b[0m", "\x1b[2m(true)\x1b[0m", "\x1b[1;31m2 errors\x1b[0m"} {
		if !strings.Contains(colored.String(), s) {
			t.Errorf("coloured text lacks %q:\n%s", s, colored.String())
		}
	}
	// Colour changes nothing else, alignment included.
	escapes := regexp.MustCompile("\x1b\\[[0-9;]*m")
	if got := escapes.ReplaceAllString(colored.String(), ""); got != want {
		t.Errorf("coloured text without escapes:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteTextNoTools(t *testing.T) {
	r, err := Review(connect.Server{Name: "empty", Version: "1", ProtocolVersion: "2025-06-18"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, r, false); err != nil {
		t.Fatal(err)
	}
	const want = "empty 1 (MCP 2025-06-18): 0 tools\n\nNo findings.\n\n0 tools: 0 reads, 0 writes (0 destructive, 0 idempotent), 0 open-world. 0 errors, 0 warnings.\n"
	if b.String() != want {
		t.Errorf("text:\n%q\nwant:\n%q", b.String(), want)
	}
}

func TestWriteTextEscapes(t *testing.T) {
	// A server must not be able to write escapes to the terminal.
	r, err := Review(connect.Server{Name: "evil\x1b[2J", Version: "1\n"}, []connect.Listed{{Name: "x\x1b]0;title\x07"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, r, false); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") {
		t.Errorf("text holds control characters:\n%q", b.String())
	}
	for _, s := range []string{`"evil\x1b[2J 1\n"`, `"x\x1b]0;title\a"`} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %s:\n%s", s, b.String())
		}
	}
}
