package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpeffect/mcpeffect"
)

// TestEarlyHostile holds the hook that decides subscriptions, completions
// and task calls before mcp-go handles them to failing closed: a field
// the check does not read, of a type the check does not expect, cannot
// make the request pass unchecked, and params it cannot read are refused.
func TestEarlyHostile(t *testing.T) {
	r := mcpeffect.NewRegistry()
	if err := r.DeclareResource("notes://payroll", mcpeffect.Full); err != nil {
		t.Fatal(err)
	}
	if err := r.DeclarePrompt("audit", mcpeffect.Full); err != nil {
		t.Fatal(err)
	}
	if err := r.Add("delete_task", mcpeffect.Destructive); err != nil {
		t.Fatal(err)
	}
	a := &adapter{r: r, enf: (*Options)(nil).enforcer(r)}
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly)
	for _, tt := range []struct {
		name, msg string
		refused   bool // by a DeniedError
		unread    bool // as params that cannot be read
	}{
		{"subscribe", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"notes://payroll"}}`, true, false},
		{"subscribe with a field of another type", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"notes://payroll","name":5,"ref":"x","task":[1]}}`, true, false},
		{"subscribe, the uri twice", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"docs://public","uri":"notes://payroll"}}`, true, false},
		{"subscribe, the uri in another case", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"URI":"notes://payroll"}}`, true, false},
		{"subscribe, a uri that is not a string", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":5}}`, false, true},
		{"listen", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["docs://public","notes://payroll"]},"uri":7}}`, true, false},
		{"listen, notifications not an object", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":[]}}`, false, true},
		{"complete a prompt, with a name of another type beside", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"name":5,"ref":{"type":"ref/prompt","name":"audit"},"argument":{"name":"a","value":""}}}`, true, false},
		{"complete a resource", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"notes://payroll"}}}`, true, false},
		{"complete, ref not an object", `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":"ref/prompt"}}`, false, true},
		{"a task call, with a uri of another type", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","uri":5,"task":{"ttl":1000}}}`, true, false},
		{"a task call whose name is not a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"task":{}}}`, false, true},
		{"a call that is no task", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task"}}`, false, false},
		{"a read-only subscription", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"docs://public"}}`, false, false},
		{"another method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"uri":5}}`, false, false},
		// What the check's fast path must not take for a call that is no
		// task, as encoding/json (which mcp-go decodes with) reads them:
		// the key in another case, escaped, with the Kelvin sign or the
		// long s, the method escaped, the method's key in another case.
		{"a task call, the task in capitals", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","TASK":{"ttl":1000}}}`, true, false},
		{"a task call, the task's key escaped", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","t\u0061sk":{"ttl":1000}}}`, true, false},
		{"a task call, the task's key with the long s", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","ta\u017fk":{"ttl":1000}}}`, true, false},
		{"a task call, the task's key with the long s unescaped", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"delete_task\",\"ta\u017fk\":{\"ttl\":1000}}}", true, false},
		{"a task call, the method escaped", `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"delete_task","task":{"ttl":1000}}}`, true, false},
		{"a task call, the method's key in capitals", `{"jsonrpc":"2.0","id":1,"METHOD":"tools/call","params":{"name":"delete_task","task":{"ttl":1000}}}`, true, false},
		{"a subscription, the method escaped", `{"jsonrpc":"2.0","id":1,"method":"resources\/subscribe","params":{"uri":"notes://payroll"}}`, true, false},
		{"a call whose arguments name a task", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","arguments":{"note":"\"task\""}}}`, false, false},
		{"a task call, the task's key with the Kelvin sign unescaped", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"delete_task\",\"tas\u212a\":{\"ttl\":1000}}}", true, false},
		{"a task call, slashes in its arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","arguments":{"url":"https://example.com/a/b","path":"/"},"task":{}}}`, true, false},
		{"a task call, another method named in its arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","arguments":{"then":"resources/subscribe"},"Task":{}}}`, true, false},
		{"a task call, the method named twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","arguments":{"again":"tools/call"},"tAsK":{}}}`, true, false},
		{"a subscription, the method as a key's name too", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"notes://payroll","tools/call":1}}`, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := a.early(ctx, 1, json.RawMessage(tt.msg))
			var d *mcpeffect.DeniedError
			switch {
			case tt.refused && !errors.As(err, &d):
				t.Errorf("error %v, want a refusal", err)
			case tt.unread && !errors.Is(err, errUnreadable):
				t.Errorf("error %v, want params that cannot be read refused", err)
			case !tt.refused && !tt.unread && err != nil:
				t.Errorf("error %v, want it let through", err)
			}
		})
	}
}

// FuzzPlainlyNotEarly holds the early hook's fast path to what the
// decoding it skips would find: of a message that mcp-go decodes, one
// that plainlyNotEarly lets through undecoded names none of early's
// methods, or is a tools/call whose params have no member that
// encoding/json would take for its task (in any case, with the Kelvin
// sign or the long s).
func FuzzPlainlyNotEarly(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":{"id":"7"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","TaSk":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":{"task":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"tools/call"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"completion/complete","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"subscriptions/listen","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","ta\u017fk":{}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"tas\u212a\":{}}}",
		`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"x","task":{}}}`,
		`{"jsonrpc":"2.0","id":"task","method":"ping"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		// mcp-go hands the hook only what it decoded.
		if json.Unmarshal(raw, &m) != nil || !plainlyNotEarly(raw) {
			return
		}
		for _, name := range earlyMethods {
			if m.Method == name && name != string(mcp.MethodToolsCall) {
				t.Fatalf("plainlyNotEarly(%s): true, but the method is %s", raw, m.Method)
			}
		}
		if m.Method != string(mcp.MethodToolsCall) {
			return
		}
		var params map[string]json.RawMessage
		if json.Unmarshal(m.Params, &params) != nil {
			return // mcp-go refuses params that are not an object
		}
		for k := range params {
			if strings.EqualFold(k, "task") {
				t.Fatalf("plainlyNotEarly(%s): true, but the params have the member %q", raw, k)
			}
		}
	})
}

// TestEarlyMethodsHaveSlash holds what plainlyNotEarly's search stands
// on: every method that early decides is written with a slash.
func TestEarlyMethodsHaveSlash(t *testing.T) {
	for _, m := range earlyMethods {
		if !strings.Contains(m, "/") {
			t.Errorf("early decides %q, which has no slash: plainlyNotEarly would let it through undecoded", m)
		}
	}
}

func TestHasTaskKey(t *testing.T) {
	for _, tt := range []struct {
		json string
		want bool
	}{
		{`{"task":{}}`, true},
		{`{"TASK":{}}`, true},
		{`{"tAsK":1}`, true},
		{`{"a":"task"}`, true}, // a value too: the decoding tells
		{`"task"`, true},
		{`{"tasks":{}}`, false},
		{`{"get_task":{}}`, false},
		{`{"task_id":"k"}`, false},
		{`{"ask":"k","sk":"K"}`, false},
		{`{"tas":"k"}`, false},
		{`k"`, false},
		{`"tak"`, false},
		{``, false},
	} {
		if got := hasTaskKey([]byte(tt.json)); got != tt.want {
			t.Errorf("hasTaskKey(%s) = %t, want %t", tt.json, got, tt.want)
		}
	}
}
