package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLoginCommand shows done-server login printing a link that signs
// the person in once, and refusing a name with no person's token.
func TestLoginCommand(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"token", "create", "-data", dir, "-scope", "full", "-kind", "human", "-name", "alice"}, getenv(nil), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), []string{"token", "create", "-data", dir, "-scope", "full", "-kind", "agent", "-name", "bot"}, getenv(nil), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := run(t.Context(), []string{"login", "-data", dir, "-name", "alice", "-url", "http://127.0.0.1:9999/"}, getenv(nil), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	link := strings.TrimSpace(stdout.String())
	prefix := "http://127.0.0.1:9999" + web.SignInPath + "?link="
	if !strings.HasPrefix(link, prefix+store.LinkPrefix) {
		t.Fatalf("login printed %q, want a link %s...", link, prefix)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"login", "-data", dir, "-name", "bot", "-url", "http://127.0.0.1:9999"}, "no person named"},
		{[]string{"login", "-data", dir, "-name", "carol", "-url", "http://127.0.0.1:9999"}, "no person named"},
		{[]string{"login", "-data", dir, "-name", "alice", "-url", "http://127.0.0.1:9999", "-expires", "48h"}, "at most an hour"},
		{[]string{"login", "-data", dir, "-name", "alice", "-url", "javascript:alert(1)"}, "http or https"},
		// No address is guessed: a link to a port nothing serves.
		{[]string{"login", "-data", dir, "-name", "alice"}, "-url is required"},
	} {
		if err := run(t.Context(), c.args, getenv(nil), &stdout, &stderr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
		}
	}

	st, _, err := store.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	secret := strings.TrimPrefix(link, prefix)
	if ws, _, err := st.SignIn(t.Context(), secret, web.DefaultSessionTTL); err != nil || ws.Token.Name != "alice" {
		t.Errorf("signing in with the printed link: %+v, %v", ws, err)
	}
	if _, _, err := st.SignIn(t.Context(), secret, web.DefaultSessionTTL); !errors.Is(err, store.ErrBadLink) {
		t.Errorf("the printed link, again: %v", err)
	}
}

// TestLoginLinkToServedAddress: serve -http prints, once it listens, the
// login command with the address it actually serves (here a port the
// system chose), and the link that command prints signs the person in
// there.
func TestLoginLinkToServedAddress(t *testing.T) {
	sqliteOnly(t, "serve and login share the data directory")
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(t.Context(), []string{"token", "create", "-data", dir, "-scope", "full", "-kind", "human", "-name", "alice"}, getenv(nil), &out, &out); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stderr syncBuffer
	served := make(chan error, 1)
	go func() {
		served <- run(ctx, []string{"serve", "-data", dir, "-http", "127.0.0.1:0"}, getenv(map[string]string{"USER": "alice"}), io.Discard, &stderr)
	}()
	var command string
	for deadline := time.After(time.Minute); command == ""; {
		select {
		case err := <-served:
			t.Fatalf("serve ended: %v\n%s", err, stderr.String())
		case <-deadline:
			t.Fatalf("serve printed no login command:\n%s", stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		_, command, _ = strings.Cut(stderr.String(), "a person signs in with a link from:\n\n\t")
		command, _, _ = strings.Cut(command, "\n")
	}
	base := command[strings.LastIndex(command, " -url ")+len(" -url "):]
	if !strings.HasPrefix(base, "http://127.0.0.1:") || strings.HasSuffix(base, ":0") || !strings.Contains(command, " login -data "+dir+` -name "$USER" -url `) {
		t.Fatalf("the login command serve printed: %q", command)
	}
	var link bytes.Buffer
	if err := run(t.Context(), []string{"login", "-data", dir, "-name", "alice", "-url", base}, getenv(nil), &link, io.Discard); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(strings.TrimSpace(link.String()))
	if err != nil || u.Scheme+"://"+u.Host != base {
		t.Fatalf("login printed %q, want a link to %s", link.String(), base)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.PostForm(base+web.SignInPath, url.Values{"link": {u.Query().Get("link")}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("signing in with the printed link at the address served: %d", resp.StatusCode)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("serve, stopped: %v", err)
	}
}

// TestApprovalsOnPageOnly serves with -approvals page: a person's
// approve_task over MCP is refused and names the page, and the request
// stays pending.
func TestApprovalsOnPageOnly(t *testing.T) {
	e := newEnv(t)
	e.done.pageApprovals = true
	e.server, e.registry = e.done.newServer()
	alice := e.connectHTTP(e.mint("alice", store.Human, mcpeffect.Full))
	task := must[store.Task](t, alice, "create_task", args{"title": "t"})
	must[store.Task](t, alice, "close_task", args{"task_id": task.ID})
	approval := must[store.TaskDetail](t, alice, "get_task", args{"task_id": task.ID}).Approval
	_, err := call[store.Verdict](t, alice, "approve_task", args{"task_id": task.ID, "approval_id": approval.ID})
	if err == nil || !strings.Contains(err.Error(), e.httpURL+web.Prefix+"/approvals/"+approval.ID) {
		t.Errorf("approve_task with -approvals page: %v, want a refusal naming the page", err)
	}
	if got := must[store.TaskDetail](t, alice, "get_task", args{"task_id": task.ID}); got.Status != store.StatusAwaitingApproval {
		t.Errorf("the task is %s", got.Status)
	}
	// reject_task still works over MCP: a refusal finishes no work.
	must[store.Verdict](t, alice, "reject_task", args{"task_id": task.ID, "approval_id": approval.ID, "reason": "not yet"})
}

// TestURLConfirmNeedsURLElicitation shows that with -confirm url a client
// that cannot send the person to a page has the calls refused, never run
// unconfirmed, and its reads untouched.
func TestURLConfirmNeedsURLElicitation(t *testing.T) {
	e := newEnv(t)
	e.done.confirmURL = urlConfirmModes["url"]
	e.server, e.registry = e.done.newServer()
	base := e.serveHTTP()
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	// A client that answers forms: it could make up an accept, and is not
	// asked.
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: base + mcpPath, HTTPClient: &http.Client{Transport: bearerTransport{secret: secret}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	task := must[store.Task](t, cs, "create_task", args{"title": "keep me"})
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": task.ID}})
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "unsupported" {
		t.Fatalf("delete_task from a client without URL elicitation: %v", err)
	}
	if got := must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); got.Title != "keep me" {
		t.Errorf("the task: %+v", got)
	}
}

// TestURLConfirmHostDeclines shows a call whose host would not open the
// page refused, and its question withdrawn from the person's page: no
// answer there can come after the call is over.
func TestURLConfirmHostDeclines(t *testing.T) { forProtocols(t, testURLConfirmHostDeclines) }

func testURLConfirmHostDeclines(t *testing.T, protocol string) {
	e := newEnv(t)
	e.done.confirmURL = urlConfirmModes["url"]
	e.server, e.registry = e.done.newServer()
	base := e.serveHTTP()
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	alice, err := e.store.Authenticate(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	var asked string
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = req.Params.URL
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: base + mcpPath, HTTPClient: &http.Client{Transport: bearerTransport{secret: secret}}, MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	task := must[store.Task](t, cs, "create_task", args{"title": "keep me"})
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": task.ID}})
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "decline" {
		t.Fatalf("delete_task, the host declining to open the page: %v", err)
	}
	id := strings.TrimPrefix(asked, base+web.ConfirmPath)
	if pending, _, _ := e.store.PendingConfirmations(t.Context(), alice.Actor()); len(pending) != 0 {
		t.Errorf("the person is still asked about a refused call: %+v", pending)
	}
	if _, err := e.store.AnswerConfirmation(t.Context(), alice.Actor(), id, true); err == nil {
		t.Error("a refused call's confirmation was answered")
	}
}

// TestURLConfirmAcrossProcesses shows the page of one process answering
// a call that waits in another, on the same data: the sign-in link, the
// session and the confirmation are in the database, not in a process.
func TestURLConfirmAcrossProcesses(t *testing.T) { forProtocols(t, testURLConfirmAcrossProcesses) }

func testURLConfirmAcrossProcesses(t *testing.T, protocol string) {
	a := newEnv(t)
	a.done.confirmURL = urlConfirmModes["url"]
	a.server, a.registry = a.done.newServer()
	baseA := a.serveHTTP()
	b := openEnv(t, a.dir)
	baseB := b.serveHTTP()

	secret := a.mint("alice", store.Human, mcpeffect.Full)
	alice, err := a.store.Authenticate(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			urls <- req.Params.URL
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: baseA + mcpPath, HTTPClient: &http.Client{Transport: bearerTransport{secret: secret}}, MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	task := must[store.Task](t, cs, "create_task", args{"title": "old notes"})
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": task.ID}})
		called <- err
	}()
	page := strings.Replace(<-urls, baseA, baseB, 1)

	// Signed in on b's page, with a link a's store made.
	link, _, err := a.store.CreateSignInLink(t.Context(), alice.ID, web.DefaultLinkTTL)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	signIn, err := hc.PostForm(baseB+web.SignInPath, url.Values{"link": {link}})
	if err != nil {
		t.Fatal(err)
	}
	signIn.Body.Close()
	var sessionCookie *http.Cookie
	for _, c := range signIn.Cookies() {
		if c.Name == "done_session" && c.Value != "" {
			sessionCookie = &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	if signIn.StatusCode != http.StatusSeeOther || sessionCookie == nil {
		t.Fatalf("signing in on b: %d, cookies %v", signIn.StatusCode, signIn.Cookies())
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, page, nil)
	req.AddCookie(sessionCookie)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := new(bytes.Buffer)
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	csrf := between(body.String(), `name="csrf" value="`, `"`)
	if resp.StatusCode != http.StatusOK || csrf == "" || !strings.Contains(body.String(), "old notes") {
		t.Fatalf("b's page of a's confirmation: %d\n%s", resp.StatusCode, body)
	}
	if status, body := postForm(t, hc, sessionCookie, baseB, strings.TrimPrefix(page, baseB), url.Values{"csrf": {csrf}, "answer": {"confirm"}}); status != http.StatusSeeOther {
		t.Fatalf("confirming on b: %d %s", status, body)
	}
	if err := <-called; err != nil {
		t.Fatalf("delete_task on a, confirmed on b: %v", err)
	}
	if got := must[trashResult](t, cs, "list_trash", args{}); len(got.Items) != 1 {
		t.Errorf("the Trash holds %d items, want 1", len(got.Items))
	}
}

// forProtocols runs test on a protocol with sessions, where Done sends
// the client an elicitation request, and on 2026-07-28, where it answers
// the call with an input request and the client calls again.
func forProtocols(t *testing.T, test func(*testing.T, string)) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) { test(t, protocol) })
	}
}

// between returns what s holds between the first before and the after
// that follows it, or "".
func between(s, before, after string) string {
	_, rest, ok := strings.Cut(s, before)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, after)
	return v
}

// TestURLConfirmRequestStateAttacks: on 2026-07-28 the request state of a
// confirmation through the page is its id, which the store binds to the
// caller's token, the tool and the arguments. Another token presenting
// it, the same token with other arguments, a made-up state, and the
// state used again after its call ran: each is refused, and nothing is
// deleted but what the person confirmed, once.
func TestURLConfirmRequestStateAttacks(t *testing.T) {
	e := newEnv(t)
	e.done.confirmURL = urlConfirmModes["url"]
	e.server, e.registry = e.done.newServer()
	base := e.serveHTTP()
	aliceSecret := e.mint("alice", store.Human, mcpeffect.Full)
	mallory := e.mint("mallory", store.Human, mcpeffect.Full)
	alice, err := e.store.Authenticate(t.Context(), aliceSecret)
	if err != nil {
		t.Fatal(err)
	}
	setup := e.connect(aliceSecret)
	keep := must[store.Task](t, setup, "create_task", args{"title": "keep me"})
	other := must[store.Task](t, setup, "create_task", args{"title": "keep me too"})

	callRaw := func(secret, taskID, state string) (gotState, errMsg string) {
		t.Helper()
		r := rawCall(t, base, secret, "delete_task", args{"task_id": taskID}, state)
		if r.code != 0 && r.code != mcpeffect.CodeNotConfirmed {
			t.Errorf("error %d %s, want a refusal unconfirmed", r.code, r.message)
		}
		return r.state, r.message
	}

	state, msg := callRaw(aliceSecret, keep.ID, "")
	if state == "" {
		t.Fatalf("alice's first call: no request state (%s)", msg)
	}
	// Alice confirms her own call on the page.
	if _, err := e.store.AnswerConfirmation(t.Context(), alice.Actor(), state, true); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, secret, task, state string
	}{
		{"another token", mallory, keep.ID, state},
		{"other arguments", aliceSecret, other.ID, state},
		{"a made-up state", aliceSecret, keep.ID, "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
		{"not an id", aliceSecret, keep.ID, "../" + state},
	} {
		if _, msg := callRaw(c.secret, c.task, c.state); msg == "" {
			t.Errorf("%s: the call ran", c.name)
		}
	}
	for _, id := range []string{keep.ID, other.ID} {
		must[store.TaskDetail](t, setup, "get_task", args{"task_id": id})
	}
	// Alice's own call, with her confirmation, runs once.
	if _, msg := callRaw(aliceSecret, keep.ID, state); msg != "" {
		t.Fatalf("alice's confirmed call: %s", msg)
	}
	if _, err := call[store.TaskDetail](t, setup, "get_task", args{"task_id": keep.ID}); err == nil {
		t.Error("confirmed, and still there")
	}
	// The same state again, for a call that would now change nothing:
	// still refused, the answer was used.
	if _, msg := callRaw(aliceSecret, keep.ID, state); msg == "" {
		t.Error("the state used again: the call ran twice on one confirmation")
	}
}

// A rawResult is the answer to one tools/call that [rawCall] sent: the
// result's request state, its text and whether it is a tool error, or
// the JSON-RPC error's code and message.
type rawResult struct {
	state   string
	text    string
	isError bool
	code    int64
	message string
	data    string // the error's data, as JSON
}

// rawCall sends one 2026-07-28 tools/call of tool with arguments to the
// server at base, with the bearer token secret, as a client that can
// send the person to a page; with state, it is the call made again with
// that request state and the person's going to the page.
func rawCall(t *testing.T, base, secret, tool string, arguments any, state string) rawResult {
	t.Helper()
	r, err := rawCallContext(t.Context(), base, secret, tool, arguments, state)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rawCallContext is rawCall within ctx, for a call made on another
// goroutine than the test's: it returns its failure.
func rawCallContext(ctx context.Context, base, secret, tool string, arguments any, state string) (rawResult, error) {
	params := map[string]any{
		"name": tool, "arguments": arguments,
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    "2026-07-28",
			mcp.MetaKeyClientInfo:         map[string]any{"name": "raw", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{"url": map[string]any{}}},
		},
	}
	if state != "" {
		params["requestState"] = state
		// Under the id of the input request that asked (mcpeffect's).
		params["inputResponses"] = map[string]any{"mcpeffect/confirm": map[string]any{"action": "accept"}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+mcpPath, bytes.NewReader(body))
	if err != nil {
		return rawResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rawResult{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return rawResult{}, err
	}
	text := string(raw)
	if i := strings.Index(text, "data: "); i >= 0 {
		text = strings.TrimSpace(text[i+len("data: "):])
	}
	var msg struct {
		Result struct {
			RequestState string `json:"requestState"`
			IsError      bool   `json:"isError"`
			Content      []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(text), &msg); err != nil {
		return rawResult{}, fmt.Errorf("%d %s: %v", resp.StatusCode, raw, err)
	}
	if msg.Error != nil {
		return rawResult{code: msg.Error.Code, message: msg.Error.Message, data: string(msg.Error.Data)}, nil
	}
	r := rawResult{state: msg.Result.RequestState, isError: msg.Result.IsError}
	for _, c := range msg.Result.Content {
		r.text += c.Text
	}
	return r, nil
}

// TestApprovalPageActivityPaged: the page of a request shows the activity
// since the request, one page at a time, none of what came before; a
// decision taken on a later page is taken on what that page showed.
func TestApprovalPageActivityPaged(t *testing.T) {
	e := newEnv(t)
	base := e.serveHTTP()
	aliceSecret := e.mint("alice", store.Human, mcpeffect.Full)
	alice, _ := e.store.Authenticate(t.Context(), aliceSecret)
	bot := e.connectHTTP(e.mint("bot", store.Agent, mcpeffect.Full))
	task := must[store.Task](t, bot, "create_task", args{"title": "Ship it"})
	for range 5 {
		must[store.Comment](t, bot, "comment_on_task", args{"task_id": task.ID, "body": "before the request"})
	}
	e.clock.Advance(time.Minute)
	must[store.Task](t, bot, "close_task", args{"task_id": task.ID})
	req := must[store.TaskDetail](t, bot, "get_task", args{"task_id": task.ID}).Approval
	e.clock.Advance(time.Minute)
	for range store.DefaultLimit + 10 {
		must[store.Comment](t, bot, "comment_on_task", args{"task_id": task.ID, "body": "since the request"})
	}
	hc, cookie := httpSession(t, e, alice.ID)
	entries := func(body string) int {
		list := between(body, `<ul class="activity">`, `</ul>`)
		return strings.Count(list, "<li")
	}
	status, first := getPage(t, hc, cookie, base+web.Prefix+"/approvals/"+req.ID)
	next := between(first, `href="/app/approvals/`+req.ID+`?activity=`, `"`)
	if status != http.StatusOK || entries(first) != store.DefaultLimit || strings.Contains(first, "before the request") || next == "" {
		t.Fatalf("the first page: %d, %d entries, a next page %q\n%s", status, entries(first), next, first)
	}
	status, second := getPage(t, hc, cookie, base+"/app/approvals/"+req.ID+"?activity="+next)
	if status != http.StatusOK || entries(second) != 11 || strings.Contains(second, "before the request") {
		t.Fatalf("the second page: %d, %d entries\n%s", status, entries(second), second)
	}
	form := url.Values{"csrf": {between(second, `name="csrf" value="`, `"`)}, "decision": {"approve"},
		"reviewed": {between(second, `name="reviewed" value="`, `"`)}, "activity": {between(second, `name="activity" value="`, `"`)}}
	if status, body := postForm(t, hc, cookie, base, web.Prefix+"/approvals/"+req.ID, form); status != http.StatusSeeOther {
		t.Fatalf("approving on the second page: %d %s", status, body)
	}
	if got := must[store.TaskDetail](t, bot, "get_task", args{"task_id": task.ID}); got.Status != store.StatusDone {
		t.Errorf("approved on the page's second page of activity, the task is %s", got.Status)
	}
}
