package audit

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
)

func TestDirectoryRules(t *testing.T) {
	const (
		// all and read carry a title in their annotations, where
		// Anthropic's checklist asks for it; untitled has none.
		all      = `{"title": "A title", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}`
		read     = `{"title": "A title", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}`
		untitled = `{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}`
		obj      = `{"type": "object"}`
		title    = "A title"
	)
	for _, tc := range []struct {
		name   string
		tool   connect.Listed
		claude []Rule
		openai []Rule
	}{
		{"clean write", connect.Listed{Name: "create_note", Title: title, Annotations: json.RawMessage(all), InputSchema: json.RawMessage(obj)}, nil, nil},
		{"clean read", connect.Listed{Name: "get-note", Title: title, Annotations: json.RawMessage(read)}, nil, nil},
		{"title in the annotations only", connect.Listed{Name: "create_note", Annotations: json.RawMessage(all)}, nil, nil},
		{"title not in the annotations", connect.Listed{Name: "create_note", Title: title, Annotations: json.RawMessage(untitled)}, []Rule{"claude-directory/annotations-title"}, nil},
		{"title not in the annotations, none at all", connect.Listed{Name: "create_note", Title: title}, []Rule{"claude-directory/annotations-title", "claude-directory/hints", "claude-directory/idempotent-hint", "claude-directory/open-world-hint"}, []Rule{"chatgpt-directory/hints"}},
		{"blank title in the annotations", connect.Listed{Name: "create_note", Title: title, Annotations: json.RawMessage(`{"title": " ", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}`)}, []Rule{"claude-directory/annotations-title"}, nil},
		{"no title", connect.Listed{Name: "create_note", Annotations: json.RawMessage(untitled)}, []Rule{"claude-directory/title"}, nil},
		{"blank title", connect.Listed{Name: "create_note", Title: "  ", Annotations: json.RawMessage(untitled)}, []Rule{"claude-directory/title"}, nil},
		{"no annotations", connect.Listed{Name: "create_note"},
			[]Rule{"claude-directory/title", "claude-directory/hints", "claude-directory/idempotent-hint", "claude-directory/open-world-hint"}, []Rule{"chatgpt-directory/hints"}},
		{"a write without destructiveHint", connect.Listed{Name: "create_note", Title: title, Annotations: json.RawMessage(`{"title": "A title", "readOnlyHint": false, "idempotentHint": false, "openWorldHint": false}`)},
			[]Rule{"claude-directory/hints"}, []Rule{"chatgpt-directory/hints"}},
		{"a write without idempotentHint", connect.Listed{Name: "create_note", Title: title, Annotations: json.RawMessage(`{"title": "A title", "readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}`)},
			[]Rule{"claude-directory/idempotent-hint"}, nil},
		{"a write without either", connect.Listed{Name: "create_note", Title: title, Annotations: json.RawMessage(`{"title": "A title", "readOnlyHint": false, "openWorldHint": false}`)},
			[]Rule{"claude-directory/hints", "claude-directory/idempotent-hint"}, []Rule{"chatgpt-directory/hints"}},
		{"a read without idempotentHint", connect.Listed{Name: "get_note", Title: title, Annotations: json.RawMessage(`{"title": "A title", "readOnlyHint": true, "destructiveHint": false, "openWorldHint": false}`)}, nil, nil},
		{"a read without destructiveHint", connect.Listed{Name: "get_note", Title: title, Annotations: json.RawMessage(`{"title": "A title", "readOnlyHint": true, "openWorldHint": false}`)},
			[]Rule{"claude-directory/read-destructive-hint"}, []Rule{"chatgpt-directory/hints"}},
		{"null hints", connect.Listed{Name: "get_note", Title: title, Annotations: json.RawMessage(`{"title": "A title", "readOnlyHint": true, "destructiveHint": null, "openWorldHint": null}`)},
			[]Rule{"claude-directory/read-destructive-hint", "claude-directory/open-world-hint"}, []Rule{"chatgpt-directory/hints"}},
		{"64 characters", connect.Listed{Name: strings.Repeat("a", 64), Title: title, Annotations: json.RawMessage(all)}, nil, nil},
		{"65 characters", connect.Listed{Name: strings.Repeat("a", 65), Title: title, Annotations: json.RawMessage(all)}, []Rule{"claude-directory/name-length"}, nil},
		{"camel case", connect.Listed{Name: "createNote", Title: title, Annotations: json.RawMessage(all)}, []Rule{"claude-directory/name-case"}, nil},
		{"dotted", connect.Listed{Name: "note.create", Title: title, Annotations: json.RawMessage(all)}, []Rule{"claude-directory/name-case"}, nil},
		{"a name that reads and writes", connect.Listed{Name: "get_or_create_note", Title: title, Annotations: json.RawMessage(all)}, []Rule{"claude-directory/read-and-write-name"}, nil},

		{"HTTP methods", connect.Listed{Name: "api_request", Title: title, Annotations: json.RawMessage(all),
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}, "method": {"type": "string", "enum": ["GET", "POST"]}}}`)},
			[]Rule{"claude-directory/catch-all"}, nil},
		{"HTTP DELETE, not destructive", connect.Listed{Name: "api_request", Title: title, Annotations: json.RawMessage(all),
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"method": {"enum": ["get", "delete"]}}}`)},
			[]Rule{"claude-directory/catch-all"}, []Rule{"chatgpt-directory/destructive-mode"}},
		{"safe methods only", connect.Listed{Name: "api_request", Title: title, Annotations: json.RawMessage(read),
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"method": {"enum": ["GET", "HEAD"]}}}`)}, nil, nil},
		{"an action enum", connect.Listed{Name: "manage_notes", Title: title, Annotations: json.RawMessage(all),
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"action": {"type": "string", "enum": ["list", "get", "create", "update"]}}}`)},
			[]Rule{"claude-directory/catch-all"}, nil},
		{"an action of oneOf consts", connect.Listed{Name: "notes", Title: title, Annotations: json.RawMessage(all),
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"op": {"oneOf": [{"const": "read_note"}, {"const": "delete_note"}]}}}`)},
			[]Rule{"claude-directory/catch-all"}, []Rule{"chatgpt-directory/destructive-mode"}},
		{"operations in an array", connect.Listed{Name: "batch", Title: title, Annotations: json.RawMessage(all),
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"ops": {"type": "array", "items": {"enum": ["search", "remove"]}}}}`)},
			[]Rule{"claude-directory/catch-all"}, []Rule{"chatgpt-directory/destructive-mode"}},
		{"a deletion mode, declared destructive", connect.Listed{Name: "notes", Title: title,
			Annotations: json.RawMessage(`{"title": "A title", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}`),
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"action": {"enum": ["create", "delete"]}}}`)}, nil, nil},
		{"an enum that is not an action", connect.Listed{Name: "list_notes", Title: title, Annotations: json.RawMessage(read),
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"sort": {"enum": ["created", "updated", "deleted"]}}}`)}, nil, nil},
		{"free-form method: not seen", connect.Listed{Name: "api_request", Title: title, Annotations: json.RawMessage(all),
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"method": {"type": "string"}}}`)}, nil, nil},
		{"a schema that is not an object", connect.Listed{Name: "x", Title: title, Annotations: json.RawMessage(all), InputSchema: json.RawMessage(`[1]`)}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, d := range []struct {
				profile string
				want    []Rule
			}{{"claude-directory", tc.claude}, {"chatgpt-directory", tc.openai}} {
				profiles, err := SelectDirectories(d.profile)
				if err != nil {
					t.Fatal(err)
				}
				r, err := Review(connect.Server{}, []connect.Listed{tc.tool}, &Options{Directories: profiles})
				if err != nil {
					t.Fatal(err)
				}
				var got []Rule
				for _, f := range r.Findings {
					if strings.HasPrefix(string(f.Rule), d.profile+"/") {
						got = append(got, f.Rule)
						if f.Level != f.Rule.Level() || f.Message == "" {
							t.Errorf("%s: level %s, message %q", f.Rule, f.Level, f.Message)
						}
					}
				}
				if !slices.Equal(got, d.want) {
					t.Errorf("%s: rules %v, want %v", d.profile, got, d.want)
				}
				dr := r.Directories[0]
				wantRejected := 0
				for _, rule := range d.want {
					if rule.Level() == Error {
						wantRejected = 1
					}
				}
				if dr.Rejected != wantRejected {
					t.Errorf("%s: %d tools rejected, want %d", d.profile, dr.Rejected, wantRejected)
				}
			}
		})
	}
}

func TestDirectoryProfiles(t *testing.T) {
	date := regexp.MustCompile(`^20\d\d-[01]\d-[0-3]\d$`)
	for _, p := range DirectoryProfiles() {
		for _, r := range p.Rules {
			if !strings.HasPrefix(string(r.Rule), p.Name+"/") || r.Summary == "" || r.Source == "" ||
				!date.MatchString(r.Read) || r.Confidence == "" || r.check == nil || (r.Level != Error && r.Level != Warning) {
				t.Errorf("%s: incomplete rule %+v", p.Name, r)
			}
			if r.Rule.Summary() != r.Summary || r.Rule.Level() != r.Level {
				t.Errorf("%s: Rule's Summary and Level do not find the rule", r.Rule)
			}
		}
	}
	if p, err := SelectDirectories("all"); err != nil || len(p) != 2 {
		t.Errorf("all: %d, %v", len(p), err)
	}
	for _, bad := range []string{"", "apple-directory", "claude"} {
		if _, err := SelectDirectories(bad); err == nil {
			t.Errorf("SelectDirectories(%q) succeeded", bad)
		}
	}
}

func TestDirectorySummary(t *testing.T) {
	profiles, _ := SelectDirectories("all")
	r, err := Review(connect.Server{}, []connect.Listed{
		{Name: "get_note", Annotations: json.RawMessage(`{"readOnlyHint": true}`)},
		{Name: "create_note", Title: "Create", Annotations: json.RawMessage(`{"title": "Create", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}`)},
	}, &Options{Directories: profiles})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Claude Connectors Directory (rules read 2026-10-02): would reject 1 of 2 tools (1 error, 2 warnings).",
		"ChatGPT app directory (rules read 2026-10-02): would reject 1 of 2 tools (1 error, 0 warnings).",
	}
	for i, d := range r.Directories {
		if d.Summary != want[i] {
			t.Errorf("summary:\n%s\nwant:\n%s", d.Summary, want[i])
		}
	}
	if r.Summary.Errors != 2 || r.Summary.Warnings != 3 {
		// get_note: missing-open-world-hint (the audit's own), and the
		// directories' findings.
		t.Errorf("summary %+v: want 2 errors, 3 warnings", r.Summary)
	}
}
