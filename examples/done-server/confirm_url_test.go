package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// urlConfirmEnv returns an env served over HTTP with -confirm mode
// (url or url-writes).
func urlConfirmEnv(t *testing.T, mode string) (*env, string) {
	t.Helper()
	e := newEnv(t)
	e.done.confirmURL = urlConfirmModes[mode]
	e.server, e.registry = e.done.newServer()
	return e, e.serveHTTP()
}

// pageHost connects to base with the token secret, speaking protocol, as
// a host that opens the confirmation pages it is sent to: each URL goes
// to urls, and the elicitation is accepted (the host opened the page;
// the person answers there).
func pageHost(t *testing.T, base, secret, protocol string, urls chan<- string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			urls <- req.Params.URL
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: base + mcpPath, HTTPClient: &http.Client{Transport: bearerTransport{secret: secret}}, MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// confirmationRows returns how many confirmations the store holds, and
// the bytes of their arguments.
func confirmationRows(t *testing.T, e *env) (rows, bytes int) {
	t.Helper()
	var dump strings.Builder
	if err := e.store.Dump(t.Context(), &dump); err != nil {
		t.Fatal(err)
	}
	in := false
	for line := range strings.Lines(dump.String()) {
		if strings.HasPrefix(line, "-- ") {
			in = strings.Fields(line)[1] == "web_confirmations"
			continue
		}
		if in && strings.TrimSpace(line) != "" {
			rows++
			bytes += len(line)
		}
	}
	return rows, bytes
}

// TestURLConfirmKeepsOnlyAcceptedArguments: with -confirm url, a call
// whose arguments its tool's schema refuses gets go-sdk's own refusal,
// and nothing of it is kept nor asked; one whose arguments are accepted
// but larger than a confirmation keeps is refused, and says so; on both
// protocols.
func TestURLConfirmKeepsOnlyAcceptedArguments(t *testing.T) {
	forProtocols(t, testURLConfirmKeepsOnlyAcceptedArguments)
}

func testURLConfirmKeepsOnlyAcceptedArguments(t *testing.T, protocol string) {
	e, base := urlConfirmEnv(t, "url")
	secret := e.mint("alice", store.Human, mcpeffect.Full)
	urls := make(chan string, 10)
	cs := pageHost(t, base, secret, protocol, urls)
	task := must[store.Task](t, cs, "create_task", args{"title": "keep me"})

	for _, c := range []struct {
		name string
		tool string
		args args
		want string
	}{
		{"an argument the schema does not know, of 2 MB", "delete_task",
			args{"task_id": task.ID, "padding": strings.Repeat("x", 2<<20)}, `validating "arguments"`},
		{"a wrong type", "delete_task", args{"task_id": 42}, `validating "arguments"`},
		{"no task_id", "delete_task", args{}, `validating "arguments"`},
		{"accepted, but larger than a confirmation keeps", "update_task",
			args{"task_id": task.ID, "description": strings.Repeat("y", store.MaxConfirmationArguments)}, "at most 320 KiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			type result struct {
				res *mcp.CallToolResult
				err error
			}
			called := make(chan result, 1)
			go func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				called <- result{res, err}
			}()
			var r result
			select {
			case u := <-urls:
				n, b := confirmationRows(t, e)
				t.Errorf("the person was sent to %s, and %d confirmations kept, %d bytes", u, n, b)
				cancel()
				<-called
				return
			case r = <-called:
			}
			if r.err != nil {
				t.Fatalf("%s: %v, want a tool error", c.tool, r.err)
			}
			if !r.res.IsError || !strings.Contains(text(r.res), c.want) {
				t.Errorf("%s: %q, want a tool error saying %q", c.tool, text(r.res), c.want)
			}
			if n, b := confirmationRows(t, e); n != 0 {
				t.Errorf("%d confirmations kept, %d bytes", n, b)
			}
		})
	}
	if got := must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID}); got.Title != "keep me" || got.Description != "" {
		t.Errorf("the task: %+v", got)
	}
}

// TestURLConfirmWaitsBounded: the calls of one tree of tokens waiting
// for the person's answer on the page are bounded; the one past the
// bound is refused at once with a tool error that says to try again,
// another tree's calls still wait, and once one is answered, another may
// wait. On 2026-07-28 the confirmations open at once are bounded the
// same way, and so are the calls made again with one state.
func TestURLConfirmWaitsBounded(t *testing.T) {
	t.Run("2025-11-25", func(t *testing.T) {
		e, base := urlConfirmEnv(t, "url")
		aliceSecret := e.mint("alice", store.Human, mcpeffect.Full)
		alice, _ := e.store.Authenticate(t.Context(), aliceSecret)
		_, botSecret, err := e.store.CreateToken(t.Context(), alice.Actor(), mcpeffect.Full, store.NewToken{Name: "bot", Kind: store.Agent, Scope: mcpeffect.Full})
		if err != nil {
			t.Fatal(err)
		}
		urls := make(chan string, 2*store.MaxOpenConfirmations)
		bot := pageHost(t, base, botSecret, "2025-11-25", urls)
		setup := e.connect(aliceSecret)
		var tasks []string
		for i := range store.MaxOpenConfirmations + 2 {
			tasks = append(tasks, must[store.Task](t, setup, "create_task", args{"title": "task " + string(rune('a'+i))}).ID)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer func() {
			cancel()
			wg.Wait()
			// go-sdk's client tells the server of a cancelled call on
			// the side, after the call has returned: the sessions must
			// stay open until the server has heard, and its calls have
			// stopped waiting.
			deadline := time.Now().Add(time.Minute)
			for e.done.waits.count() > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := e.done.waits.count(); n > 0 {
				t.Errorf("%d calls still wait after their clients went away", n)
			}
		}()
		results := make(chan error, store.MaxOpenConfirmations)
		for _, id := range tasks[:store.MaxOpenConfirmations] {
			wg.Go(func() {
				_, err := bot.CallTool(ctx, &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": id}})
				results <- err
			})
		}
		var pages []string
		for range store.MaxOpenConfirmations {
			pages = append(pages, <-urls)
		}
		// Every call waits: the next is refused, and says to try again.
		res, err := bot.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": tasks[store.MaxOpenConfirmations]}})
		if err != nil || !res.IsError || !strings.Contains(text(res), "try again once the person has answered one") {
			t.Fatalf("a call past the bound: %v %v, want a tool error that says to try again", text(res), err)
		}
		// Another tree waits as it would.
		carolSecret := e.mint("carol", store.Human, mcpeffect.Full)
		carolURLs := make(chan string, 1)
		carol := pageHost(t, base, carolSecret, "2025-11-25", carolURLs)
		own := must[store.Task](t, carol, "create_task", args{"title": "carol's"})
		carolCall := make(chan error, 1)
		go func() {
			_, err := carol.CallTool(ctx, &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": own.ID}})
			carolCall <- err
		}()
		<-carolURLs
		// One answered: its call runs, and another may wait.
		if _, err := e.store.AnswerConfirmation(t.Context(), alice.Actor(), strings.TrimPrefix(pages[0], base+web.ConfirmPath), true); err != nil {
			t.Fatal(err)
		}
		if err := <-results; err != nil {
			t.Fatalf("the confirmed call: %v", err)
		}
		wg.Go(func() {
			_, err := bot.CallTool(ctx, &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": tasks[store.MaxOpenConfirmations+1]}})
			results <- err
		})
		select {
		case <-urls:
		case err := <-results:
			t.Fatalf("a call after one was answered: %v, want it to wait", err)
		}
	})
	t.Run("2026-07-28", func(t *testing.T) {
		e, base := urlConfirmEnv(t, "url")
		secret := e.mint("bot", store.Agent, mcpeffect.Full)
		setup := e.connect(secret)
		task := must[store.Task](t, setup, "create_task", args{"title": "t"})
		var states []string
		for range store.MaxOpenConfirmations {
			r := rawCall(t, base, secret, "delete_task", args{"task_id": task.ID}, "")
			if r.state == "" {
				t.Fatalf("no request state: %+v", r)
			}
			states = append(states, r.state)
		}
		r := rawCall(t, base, secret, "delete_task", args{"task_id": task.ID}, "")
		if r.state != "" || !r.isError || !strings.Contains(r.text, "try again once the person has answered one") {
			t.Fatalf("a confirmation past the bound: %+v, want a tool error that says to try again", r)
		}
		// The same state, sent again and again while the person has not
		// answered: as many calls wait at once as the bound lets.
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		waiting := make(chan rawResult, store.MaxOpenConfirmations)
		for range store.MaxOpenConfirmations {
			go func() {
				r, err := rawCallContext(ctx, base, secret, "delete_task", args{"task_id": task.ID}, states[0])
				if err == nil {
					waiting <- r
				}
			}()
		}
		deadline := time.After(time.Minute)
		for e.done.waits.count() < store.MaxOpenConfirmations {
			select {
			case r := <-waiting:
				t.Fatalf("a call made again returned before the answer: %+v", r)
			case <-deadline:
				t.Fatalf("%d calls wait, want %d", e.done.waits.count(), store.MaxOpenConfirmations)
			case <-time.After(10 * time.Millisecond):
			}
		}
		r = rawCall(t, base, secret, "delete_task", args{"task_id": task.ID}, states[0])
		if !r.isError || !strings.Contains(r.text, "wait for a person's answer on the page already") {
			t.Errorf("a call made again past the bound: %+v, want a tool error that says to try again", r)
		}
		// The client gone, its calls stop waiting and give their places
		// back.
		cancel()
		for e.done.waits.count() > 0 {
			select {
			case <-deadline:
				t.Fatalf("%d calls still wait after their client went away", e.done.waits.count())
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
}

// count returns how many calls wait, for the tests.
func (w *confirmWaits) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all
}

// TestConfirmWaitsBounds holds the bounds of confirmWaits: per tree of
// tokens, and in all.
func TestConfirmWaitsBounds(t *testing.T) {
	w := newConfirmWaits(2, 3)
	a1 := store.Token{ID: "a1", Root: "a"}
	a2 := store.Token{ID: "a2", Root: "a"}
	b := store.Token{ID: "b"}
	leave1, why := w.enter(a1)
	if why != "" {
		t.Fatal(why)
	}
	if _, why := w.enter(a2); why != "" {
		t.Fatal(why)
	}
	if _, why := w.enter(a1); !strings.Contains(why, "minted from the same command-line token") {
		t.Errorf("a third call of one tree: %q", why)
	}
	if _, why := w.enter(b); why != "" {
		t.Fatal(why)
	}
	if _, why := w.enter(store.Token{ID: "c"}); !strings.Contains(why, "of this server") {
		t.Errorf("a fourth call in all: %q", why)
	}
	leave1()
	if _, why := w.enter(store.Token{ID: "c"}); why != "" {
		t.Errorf("after one left: %q", why)
	}
}

// TestURLConfirmDeadlineAtUse: a confirmation's deadline holds wherever
// it is used. On 2026-07-28, a call made with the request state of a
// confirmation answered yes but expired since is refused, and the task
// stays; on 2025-11-25, a call whose confirmation expires while it waits
// is refused, and the page can no longer answer it.
func TestURLConfirmDeadlineAtUse(t *testing.T) {
	t.Run("2026-07-28", func(t *testing.T) {
		e, base := urlConfirmEnv(t, "url")
		secret := e.mint("alice", store.Human, mcpeffect.Full)
		alice, _ := e.store.Authenticate(t.Context(), secret)
		setup := e.connect(secret)
		task := must[store.Task](t, setup, "create_task", args{"title": "keep me"})
		r := rawCall(t, base, secret, "delete_task", args{"task_id": task.ID}, "")
		if r.state == "" {
			t.Fatalf("no request state: %+v", r)
		}
		if _, err := e.store.AnswerConfirmation(t.Context(), alice.Actor(), r.state, true); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(7*24*time.Hour + urlConfirmTTL)
		r = rawCall(t, base, secret, "delete_task", args{"task_id": task.ID}, r.state)
		if r.code != mcpeffect.CodeNotConfirmed || !strings.Contains(r.data, "expired") {
			t.Errorf("a call with the state of a confirmation expired a week ago: %+v, want a refusal that says it expired", r)
		}
		must[store.TaskDetail](t, setup, "get_task", args{"task_id": task.ID})
	})
	t.Run("2025-11-25", func(t *testing.T) {
		e, base := urlConfirmEnv(t, "url")
		secret := e.mint("alice", store.Human, mcpeffect.Full)
		alice, _ := e.store.Authenticate(t.Context(), secret)
		urls := make(chan string, 1)
		cs := pageHost(t, base, secret, "2025-11-25", urls)
		task := must[store.Task](t, cs, "create_task", args{"title": "keep me"})
		called := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": task.ID}})
			called <- err
		}()
		id := strings.TrimPrefix(<-urls, base+web.ConfirmPath)
		e.clock.Advance(urlConfirmTTL)
		if _, err := e.store.AnswerConfirmation(t.Context(), alice.Actor(), id, true); err == nil {
			t.Error("an expired confirmation was answered")
		}
		err := <-called
		if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Answer != "cancel" {
			t.Errorf("a call whose confirmation expired while it waited: %v", err)
		}
		must[store.TaskDetail](t, cs, "get_task", args{"task_id": task.ID})
	})
}

// TestURLConfirmAnswerNeedsScope: the person who answers a confirmation
// on the page holds a scope that permits the call, as for every other
// change there: a read-only person is refused a command-line agent's
// delete_task (confirm or decline), the call goes on waiting, and a
// person with a full token confirms it.
func TestURLConfirmAnswerNeedsScope(t *testing.T) {
	e, base := urlConfirmEnv(t, "url")
	readerSecret := e.mint("reader", store.Human, mcpeffect.ReadOnly)
	reader, _ := e.store.Authenticate(t.Context(), readerSecret)
	fullSecret := e.mint("alice", store.Human, mcpeffect.Full)
	alice, _ := e.store.Authenticate(t.Context(), fullSecret)
	botSecret := e.mint("bot", store.Agent, mcpeffect.Full)
	urls := make(chan string, 1)
	bot := pageHost(t, base, botSecret, "2025-11-25", urls)
	task := must[store.Task](t, bot, "create_task", args{"title": "keep me"})
	called := make(chan error, 1)
	go func() {
		_, err := bot.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": task.ID}})
		called <- err
	}()
	page := <-urls
	id := strings.TrimPrefix(page, base+web.ConfirmPath)

	hc, cookie := httpSession(t, e, reader.ID)
	get, body := getPage(t, hc, cookie, page)
	if get != http.StatusOK || !strings.Contains(body, "You cannot answer this call") || strings.Contains(body, `id="confirm"`) {
		t.Errorf("the read-only person's page of the call: %d\n%s", get, body)
	}
	csrf := between(body, `name="csrf" value="`, `"`)
	for _, answer := range []string{"confirm", "decline"} {
		status, body := postForm(t, hc, cookie, base, strings.TrimPrefix(page, base), url.Values{"csrf": {csrf}, "answer": {answer}})
		if status != http.StatusForbidden || !strings.Contains(body, "needs a full token") {
			t.Errorf("the read-only person answers %s: %d %s", answer, status, body)
		}
	}
	if _, err := e.store.AnswerConfirmation(t.Context(), reader.Actor(), id, true); err == nil {
		t.Error("the store let a read-only person confirm a delete_task")
	}
	select {
	case err := <-called:
		t.Fatalf("the call returned after the read-only person's answers: %v", err)
	default:
	}
	if _, err := e.store.AnswerConfirmation(t.Context(), alice.Actor(), id, true); err != nil {
		t.Fatal(err)
	}
	if err := <-called; err != nil {
		t.Fatalf("confirmed by a full token: %v", err)
	}
	if _, err := call[store.TaskDetail](t, bot, "get_task", args{"task_id": task.ID}); err == nil {
		t.Error("confirmed, and the task is still there")
	}
}

// httpSession signs the person of the token tokenID in to e's page over
// plain HTTP, and returns a client that follows no redirect and the
// session's cookie.
func httpSession(t *testing.T, e *env, tokenID string) (*http.Client, *http.Cookie) {
	t.Helper()
	link, _, err := e.store.CreateSignInLink(t.Context(), tokenID, web.DefaultLinkTTL)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.PostForm(e.httpURL+web.SignInPath, url.Values{"link": {link}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "done_session" && c.Value != "" && resp.StatusCode == http.StatusSeeOther {
			return hc, &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	t.Fatalf("signing in: %d, cookies %v", resp.StatusCode, resp.Cookies())
	return nil, nil
}

// getPage gets the page at u with the session's cookie.
func getPage(t *testing.T, hc *http.Client, cookie *http.Cookie, u string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(cookie)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return resp.StatusCode, b.String()
}
