package write

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
)

// The writers of the audit's and diff's reports, held to their output on
// reports built from tools as a server lists them.

// snapshot returns a live snapshot of one tool "t" with the annotations
// and description given.
func snapshot(t *testing.T, annotations, description string) audit.Snapshot {
	t.Helper()
	r, err := audit.Review(connect.Server{Name: "s"}, []connect.Listed{{Name: "t", Title: "T", Description: description, Annotations: json.RawMessage(annotations)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return audit.SnapshotOf(r, "test", "live")
}

// profile returns the host profile of host in mode.
func profile(t *testing.T, hostName, mode string) audit.HostProfile {
	t.Helper()
	for _, p := range audit.HostProfiles() {
		if p.Host == hostName && p.Mode == mode {
			return p
		}
	}
	t.Fatalf("no profile %s/%s", hostName, mode)
	return audit.HostProfile{}
}

// Outcomes as a server publishes them, and hints.
const (
	outRead          = `"effect": "read", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false`
	outWrite         = `"effect": "write", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false`
	outDestructive   = `"effect": "write|destructive|idempotent", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false`
	hintsDestructive = `{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}`
	hintsRead        = `{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}`
)

func outcomesMeta(value string) string {
	return `{"` + mcpeffect.OutcomesMetaKey + `": ` + value + `}`
}

func TestAuditText(t *testing.T) {
	r, err := audit.Review(connect.Server{Name: "notes", Title: "Notes", Version: "2.0", ProtocolVersion: "2025-11-25"}, []connect.Listed{
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
	if err := AuditText(&plain, r, false); err != nil {
		t.Fatal(err)
	}
	if plain.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", plain.String(), want)
	}

	var colored bytes.Buffer
	if err := AuditText(&colored, r, true); err != nil {
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
	r, err := audit.Review(connect.Server{Name: "empty", Version: "1", ProtocolVersion: "2025-06-18"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := AuditText(&b, r, false); err != nil {
		t.Fatal(err)
	}
	const want = "empty 1 (MCP 2025-06-18): 0 tools\n\nNo findings.\n\n0 tools: 0 reads, 0 writes (0 destructive, 0 idempotent), 0 open-world. 0 errors, 0 warnings.\n"
	if b.String() != want {
		t.Errorf("text:\n%q\nwant:\n%q", b.String(), want)
	}
}

func TestWriteTextEscapes(t *testing.T) {
	// A server must not be able to write escapes to the terminal.
	r, err := audit.Review(connect.Server{Name: "evil\x1b[2J", Version: "1\n"}, []connect.Listed{{Name: "x\x1b]0;title\x07"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := AuditText(&b, r, false); err != nil {
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

func TestDiffText(t *testing.T) {
	old := snapshot(t, `{"readOnlyHint": true, "openWorldHint": false}`, "Reads.")
	old.Source, old.Kind = "old.json", "report"
	new := snapshot(t, `{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}`, "Reads.")
	new.Source = "./server"
	var b bytes.Buffer
	if err := DiffText(&b, audit.Diff(old, new), false); err != nil {
		t.Fatal(err)
	}
	const want = `old: old.json (report, server s): 1 tool
new: ./server (live, server s): 1 tool

         TOOL  CHANGE              DETAIL
widened  t     read-to-write       now a write, was a read (readOnlyHint true → false)
widened  t     now-non-idempotent  now not idempotent, was idempotent (idempotentHint missing → false)

1 tool widened, 0 narrowed, 0 otherwise changed; 0 added, 0 removed. A widening fails the diff.
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestWriteTextOutcomes writes a report with published outcomes, in both
// forms, for one host.
func TestWriteTextOutcomes(t *testing.T) {
	r, err := audit.Review(connect.Server{Name: "pods", Version: "1", ProtocolVersion: "2025-11-25"}, []connect.Listed{
		{Name: "pods", Annotations: json.RawMessage(hintsDestructive), Meta: json.RawMessage(`{"io.modelcontextprotocol/tool-resolution": {"resolvable": true}, ` +
			`"` + mcpeffect.OutcomesMetaKey + `": {"argument": "action", "outcomes": [{"value": "delete", ` + outDestructive + `}, {"value": "get", ` + outRead + `}, {"value": "\u001b[2J", ` + outRead + `}]}}`)},
		{Name: "update_issue", Annotations: json.RawMessage(hintsDestructive), Meta: json.RawMessage(outcomesMeta(`{"outcomes": [{` + outWrite + `}, {` + outDestructive + `}]}`))},
		{Name: "get_note", Annotations: json.RawMessage(hintsRead)},
	}, &audit.Options{Hosts: []audit.HostProfile{profile(t, "vscode", "manual")}})
	if err != nil {
		t.Fatal(err)
	}
	const want = `pods 1 (MCP 2025-11-25): 3 tools

TOOL                READ-ONLY  DESTRUCTIVE  IDEMPOTENT  OPEN-WORLD  EFFECT
pods                false      true         false       false       write|destructive
  action="delete"   false      true         true        false       write|destructive|idempotent
  action="get"      true       false        true        false       read
  action="\x1b[2J"  true       false        true        false       read
update_issue        false      true         false       false       write|destructive
  some calls        false      false        false       false       write
  some calls        false      true         true        false       write|destructive|idempotent
get_note            true       false        true        false       read
indented: an outcome of the tool's calls, as the server claims it (_meta "io.github.mcpeffect/outcomes"); hosts decide from the tool's hints
resolvable (tool-resolution extension, experimental): pods

No findings.

3 tools: 1 read, 2 writes (2 destructive, 0 idempotent), 0 open-world. 0 errors, 0 warnings.

Hosts: what each does before a call, from the hints. Profiles go stale: each says when its source was read.

TOOL                MANUAL
pods                asks
  action="delete"   asks
  action="get"      asks (own hints: runs)
  action="\x1b[2J"  asks (own hints: runs)
update_issue        asks
  some calls        asks
  some calls        asks
get_note            runs
indented: the calls of each outcome get what the tool gets: hosts decide from its hints
(own hints: x): what the host would do with the outcome's hints, which it does not learn before a call
`
	var b bytes.Buffer
	if err := AuditText(&b, r, false); err != nil {
		t.Fatal(err)
	}
	got, _, _ := strings.Cut(b.String(), "\nVS Code")
	if got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
}
