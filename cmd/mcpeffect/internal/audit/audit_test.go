package audit

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
)

func TestReview(t *testing.T) {
	const (
		read        = `"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false`
		write       = `"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false`
		destructive = `"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false`
	)
	for _, tc := range []struct {
		name        string
		tool        string
		annotations string // the JSON object, or "" for none
		effect      mcpeffect.Effect
		rules       []Rule
	}{
		{"read with every hint", "get_task", "{" + read + "}", mcpeffect.Read, nil},
		{"write with every hint", "create_task", "{" + write + "}", mcpeffect.Write, nil},
		{"destructive with every hint", "delete_task", "{" + destructive + "}", mcpeffect.Destructive, nil},
		{"open world", "search_web", `{"readOnlyHint": true, "openWorldHint": true}`, mcpeffect.Read | mcpeffect.OpenWorld, nil},

		{"no annotations", "create_task", "", mcpeffect.Destructive | mcpeffect.OpenWorld, []Rule{RuleNoAnnotations}},
		{"null annotations", "x", "null", mcpeffect.Destructive | mcpeffect.OpenWorld, []Rule{RuleNoAnnotations}},
		{"empty annotations", "x", "{}", mcpeffect.Destructive | mcpeffect.OpenWorld, []Rule{RuleNoAnnotations}},
		{"title only", "x", `{"title": "X"}`, mcpeffect.Destructive | mcpeffect.OpenWorld, []Rule{RuleNoAnnotations}},
		{"null hints", "x", `{"readOnlyHint": null, "openWorldHint": null}`, mcpeffect.Destructive | mcpeffect.OpenWorld, []Rule{RuleNoAnnotations}},
		// A tool without hints gets no name finding: the error says it all.
		{"no annotations, read name", "get_task", "", mcpeffect.Destructive | mcpeffect.OpenWorld, []Rule{RuleNoAnnotations}},

		{"read-only and destructive", "x", `{"readOnlyHint": true, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false}`,
			mcpeffect.Destructive | mcpeffect.Idempotent, []Rule{RuleReadOnlyDestructive}},
		{"read-only and destructive, missing the rest", "x", `{"readOnlyHint": true, "destructiveHint": true}`,
			mcpeffect.Destructive | mcpeffect.OpenWorld, []Rule{RuleReadOnlyDestructive, RuleMissingIdempotent, RuleMissingOpenWorld}},

		{"write without destructiveHint", "x", `{"readOnlyHint": false, "idempotentHint": false, "openWorldHint": false}`,
			mcpeffect.Destructive, []Rule{RuleMissingDestructive}},
		{"write without idempotentHint", "x", `{"readOnlyHint": false, "destructiveHint": false, "openWorldHint": false}`,
			mcpeffect.Write, []Rule{RuleMissingIdempotent}},
		{"write without openWorldHint", "x", `{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false}`,
			mcpeffect.Write | mcpeffect.OpenWorld, []Rule{RuleMissingOpenWorld}},
		// readOnlyHint left out is a write: its other hints matter.
		{"write without readOnlyHint", "x", `{"destructiveHint": false, "idempotentHint": false, "openWorldHint": false}`,
			mcpeffect.Write, nil},
		{"write with only openWorldHint", "x", `{"openWorldHint": false}`,
			mcpeffect.Destructive, []Rule{RuleMissingDestructive, RuleMissingIdempotent}},
		// For a read, destructiveHint and idempotentHint do not matter.
		{"read without openWorldHint", "x", `{"readOnlyHint": true}`, mcpeffect.Read | mcpeffect.OpenWorld, []Rule{RuleMissingOpenWorld}},
		{"read with openWorldHint only", "x", `{"readOnlyHint": true, "openWorldHint": false}`, mcpeffect.Read, nil},

		{"delete, not destructive", "delete_task", "{" + write + "}", mcpeffect.Write, []Rule{RuleDeleteNotDestructive}},
		{"remove, read-only", "remove_tag", "{" + read + "}", mcpeffect.Read, []Rule{RuleDeleteNotDestructive}},
		{"drop, destructive", "drop_table", "{" + destructive + "}", mcpeffect.Destructive, nil},
		{"purge, camel case", "purgeCache", "{" + write + "}", mcpeffect.Write, []Rule{RuleDeleteNotDestructive}},
		{"delete, dotted", "delete.task", "{" + write + "}", mcpeffect.Write, []Rule{RuleDeleteNotDestructive}},

		{"get, a write", "get_user", "{" + write + "}", mcpeffect.Write, []Rule{RuleReadNotReadOnly}},
		{"list, readOnlyHint missing", "list_tasks", `{"destructiveHint": false, "idempotentHint": true, "openWorldHint": false}`,
			mcpeffect.Idempotent, []Rule{RuleReadNotReadOnly}},
		{"search, kebab case", "search-tasks", "{" + destructive + "}", mcpeffect.Destructive, []Rule{RuleReadNotReadOnly}},
		{"read, upper case", "READ_FILE", "{" + write + "}", mcpeffect.Write, []Rule{RuleReadNotReadOnly}},

		{"create, read-only", "create_report", "{" + read + "}", mcpeffect.Read, []Rule{RuleWriteReadOnly}},
		{"update, camel case", "updateTask", "{" + read + "}", mcpeffect.Read, []Rule{RuleWriteReadOnly}},
		{"set, a write", "set_status", "{" + write + "}", mcpeffect.Write, nil},

		// A verb is a whole word, wherever it stands in the name.
		{"settings is not set", "settings_get", "{" + read + "}", mcpeffect.Read, nil},
		{"getaway is not get", "getaway", "{" + write + "}", mcpeffect.Write, nil},
		{"listen is not list", "listen_events", "{" + write + "}", mcpeffect.Write, nil},
		{"deleted is not delete", "deleted_items", "{" + read + "}", mcpeffect.Read, nil},
		{"a delete later in the name", "kubectl_delete", "{" + write + "}", mcpeffect.Write, []Rule{RuleDeleteNotDestructive}},
		{"a delete among kebab words", "API-delete-a-block", "{" + write + "}", mcpeffect.Write, []Rule{RuleDeleteNotDestructive}},
		{"a delete in camel case", "deleteRepo", "{" + read + "}", mcpeffect.Read, []Rule{RuleDeleteNotDestructive}},
		{"a delete in Pascal case", "RepoDelete", "{" + write + "}", mcpeffect.Write, []Rule{RuleDeleteNotDestructive}},
		{"a remove after a dot", "repo.remove", "{" + write + "}", mcpeffect.Write, []Rule{RuleDeleteNotDestructive}},
		{"a delete after an acronym", "APIDeleteBlock", "{" + write + "}", mcpeffect.Write, []Rule{RuleDeleteNotDestructive}},
		{"a delete, destructive", "kubectl_delete", "{" + destructive + "}", mcpeffect.Destructive, nil},
		{"a read later in the name", "issues_list", "{" + write + "}", mcpeffect.Write, []Rule{RuleReadNotReadOnly}},
		{"a write later in the name", "reminder_set", "{" + read + "}", mcpeffect.Read, []Rule{RuleWriteReadOnly}},
		// A name that both reads and writes says it writes; so does one
		// with a verb that is often a noun as well.
		{"mark as read, a write", "mark_digest_read", "{" + write + "}", mcpeffect.Write, nil},
		{"run, a noun in a read", "get_run_logs", "{" + read + "}", mcpeffect.Read, nil},
		{"get or create, a write", "get_or_create_user", "{" + write + "}", mcpeffect.Write, nil},
		{"get or create, read-only", "get_or_create_user", "{" + read + "}", mcpeffect.Read, []Rule{RuleWriteReadOnly}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Review(connect.Server{}, []connect.Listed{{Name: tc.tool, Annotations: json.RawMessage(tc.annotations)}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tool := r.Tools[0]
			if tool.Effect != tc.effect {
				t.Errorf("effect %s, want %s", tool.Effect, tc.effect)
			}
			var rules []Rule
			for _, f := range r.Findings {
				rules = append(rules, f.Rule)
				if f.Tool != tc.tool {
					t.Errorf("finding %s names tool %q, want %q", f.Rule, f.Tool, tc.tool)
				}
				if f.Level != f.Rule.Level() {
					t.Errorf("finding %s has level %s, want %s", f.Rule, f.Level, f.Rule.Level())
				}
				if f.Message == "" {
					t.Errorf("finding %s has no message", f.Rule)
				}
			}
			if !slices.Equal(rules, tc.rules) {
				t.Errorf("rules %v, want %v", rules, tc.rules)
			}
			// A host takes every hint, but a read's destructiveHint and
			// idempotentHint do not apply: missing, they stay missing.
			a, d := tool.Assumed, tool.Declared
			isRead := tc.effect&mcpeffect.Read != 0
			if a.ReadOnly == nil || a.OpenWorld == nil ||
				(a.Destructive == nil) != (isRead && d.Destructive == nil) ||
				(a.Idempotent == nil) != (isRead && d.Idempotent == nil) {
				t.Errorf("assumed hints %s, declared %s", mustJSON(t, a), mustJSON(t, d))
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestReviewMessages(t *testing.T) {
	for _, tc := range []struct {
		tool, annotations string
		want              string
	}{
		{"delete_task", `{"readOnlyHint": false, "destructiveHint": false}`, "the name says delete, but destructiveHint is false"},
		{"delete_task", `{"readOnlyHint": true}`, "the name says delete, but readOnlyHint is true"},
		{"get_task", `{"destructiveHint": false}`, "the name says get, but readOnlyHint is missing, so hosts treat it as a write"},
		{"get_task", `{"readOnlyHint": false}`, "the name says get, but readOnlyHint is false"},
		{"get_task", `{"readOnlyHint": true, "destructiveHint": true}`, "the name says get, but destructiveHint is true as well as readOnlyHint"},
		{"setValue", `{"readOnlyHint": true}`, "the name says set, but readOnlyHint is true"},
	} {
		r, err := Review(connect.Server{}, []connect.Listed{{Name: tc.tool, Annotations: json.RawMessage(tc.annotations)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(r.Findings, func(f Finding) bool { return f.Message == tc.want })
		if i < 0 {
			t.Errorf("%s %s: no finding says %q; findings: %+v", tc.tool, tc.annotations, tc.want, r.Findings)
		}
	}
}

func TestReviewInvalid(t *testing.T) {
	for _, tc := range []struct {
		annotations string
		want        string
	}{
		{`[true]`, `tool "bad_tool": mcpeffect: annotations are not a JSON object`},
		{`{"readOnlyHint": "yes"}`, `tool "bad_tool": mcpeffect: annotation readOnlyHint is "yes", not a boolean`},
	} {
		_, err := Review(connect.Server{}, []connect.Listed{
			{Name: "good_tool", Annotations: json.RawMessage(`{"readOnlyHint": true}`)},
			{Name: "bad_tool", Annotations: json.RawMessage(tc.annotations)},
		}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("annotations %s: error %v, want one saying %q", tc.annotations, err, tc.want)
		}
	}
}

func TestSummary(t *testing.T) {
	tools := []connect.Listed{
		{Name: "a", Annotations: json.RawMessage(`{"readOnlyHint": true, "openWorldHint": false}`)},
		{Name: "b", Annotations: json.RawMessage(`{"readOnlyHint": true, "openWorldHint": true}`)},
		{Name: "c", Annotations: json.RawMessage(`{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}`)},
		{Name: "d", Annotations: json.RawMessage(`{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true}`)},
		{Name: "e", Annotations: json.RawMessage(`{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false}`)},
		{Name: "f"}, // no annotations: write, destructive, open world; an error
		{Name: "g", Annotations: json.RawMessage(`{"readOnlyHint": true}`)}, // a warning
	}
	r, err := Review(connect.Server{}, tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Tools: 7, Reads: 3, Writes: 4, Destructive: 2, Idempotent: 2, OpenWorld: 4, Errors: 1, Warnings: 1}
	if r.Summary != want {
		t.Errorf("summary %+v, want %+v", r.Summary, want)
	}
	if r.Worst() != Error {
		t.Errorf("worst level %v, want error", r.Worst())
	}
	if w := (&Report{}).Worst(); w != 0 {
		t.Errorf("worst level of no finding %v, want 0", w)
	}
}

func TestReportJSON(t *testing.T) {
	r, err := Review(connect.Server{Name: "s", Version: "1", ProtocolVersion: "2025-11-25", Idempotency: true}, []connect.Listed{
		{Name: "fetch", Title: "Fetch", Annotations: json.RawMessage(`{"readOnlyHint": true}`)},
		{Name: "flip", Annotations: json.RawMessage(`{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false, ` +
			`"recovery": {"strategy": "compensation", "compensatingOperation": {"operationId": "flip", "parameters": {}}}}`)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"server":{"name":"s","version":"1","protocolVersion":"2025-11-25","idempotency":true},` +
		`"tools":[{"name":"fetch","title":"Fetch","description":"","declared":{"readOnlyHint":true},` +
		`"assumed":{"readOnlyHint":true,"openWorldHint":true},` +
		`"effect":"read|openworld"},` +
		`{"name":"flip","description":"","declared":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false},` +
		`"assumed":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false},` +
		`"effect":"write|destructive",` +
		`"recovery":{"strategy":"compensation","compensatingOperation":{"operationId":"flip","parameters":{}}},"recoveryIn":"annotations.recovery"}],` +
		`"findings":[{"tool":"fetch","level":"warning","rule":"missing-open-world-hint",` +
		`"message":"no openWorldHint: hosts must assume it reaches outside its own data"}],` +
		`"summary":{"tools":2,"reads":1,"writes":1,"destructive":1,"idempotent":0,"openWorld":1,"errors":0,"warnings":1,"recoveries":1,"idempotency":true}}`
	if string(got) != want {
		t.Errorf("JSON:\n%s\nwant:\n%s", got, want)
	}
	var back Report
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("reading the report back: %v", err)
	}
	if back.Findings[0].Level != Warning || back.Tools[0].Effect != mcpeffect.Read|mcpeffect.OpenWorld {
		t.Errorf("read back %+v", back)
	}
}

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"delete_task", []string{"delete", "task"}},
		{"kubectl_delete", []string{"kubectl", "delete"}},
		{"API-delete-a-block", []string{"api", "delete", "a", "block"}},
		{"deleteRepo", []string{"delete", "repo"}},
		{"RepoDelete", []string{"repo", "delete"}},
		{"repo.remove", []string{"repo", "remove"}},
		{"APIDeleteABlock", []string{"api", "delete", "a", "block"}},
		{"getV2Users", []string{"get", "v2", "users"}},
		{"HTTPServer", []string{"http", "server"}},
		{"__x__", []string{"x"}},
		{"", nil},
		{"ÉcrireFichier", []string{"écrire", "fichier"}},
		{"get\x00list", []string{"get", "list"}},
		{"bad\xffbyte", []string{"bad", "byte"}},
	} {
		got := words(tc.name)
		if !slices.Equal(got, tc.want) {
			t.Errorf("words(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLevel(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Level
		ok   bool
	}{
		{"warning", Warning, true},
		{"error", Error, true},
		{"Error", Error, true},
		{"info", 0, false},
		{"", 0, false},
	} {
		got, err := ParseLevel(tc.text)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v, ok %t", tc.text, got, err, tc.want, tc.ok)
		}
	}
	if _, err := Level(0).MarshalText(); err == nil {
		t.Error("Level(0).MarshalText succeeded, want an error")
	}
	for _, r := range Rules() {
		if r.Summary() == "unknown rule" {
			t.Errorf("rule %s has no summary", r)
		}
	}
}

// TestReviewDuplicateName lists three tools of one name: the second and
// the third are each an error, naming the effect of the first.
func TestReviewDuplicateName(t *testing.T) {
	read := json.RawMessage(`{"readOnlyHint": true, "openWorldHint": false}`)
	wipe := json.RawMessage(`{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false}`)
	r, err := Review(connect.Server{}, []connect.Listed{{Name: "sync", Annotations: read}, {Name: "other", Annotations: read}, {Name: "sync", Annotations: wipe}, {Name: "sync", Annotations: read}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Findings {
		if f.Rule == RuleDuplicateName {
			got = append(got, f.Tool+" "+f.Level.String()+" "+f.Message[:strings.Index(f.Message, ":")])
		}
	}
	want := []string{
		"sync error another tool of this name is listed before it (read; this one write|destructive|idempotent)",
		"sync error another tool of this name is listed before it (read; this one read)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.Summary.Errors != 2 || r.Summary.Tools != 4 {
		t.Errorf("summary %+v, want 2 errors among 4 tools", r.Summary)
	}
}
