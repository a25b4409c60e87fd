package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/notrun"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests of the web page drive a real headless Chromium (Debian's
// chromium package), as a person would: they sign in with a link, read
// the pages, click. Without a Chromium they are skipped, and the end of
// the run says so in a NOT RUN line with the command that installs it,
// except where MCPEFFECT_REQUIRE_CHROMIUM=1 (CI) makes that a failure.

// needChromium is what the browser tests need.
var needChromium = notrun.Need{What: "Chromium", Enable: "apt-get install -y chromium", Require: "MCPEFFECT_REQUIRE_CHROMIUM"}

// screenshots is where the README's pictures of the pages go, written
// by go test -update.
const screenshots = "images"

// browser returns a context of a fresh headless Chromium, with its own
// profile, whose window is a phone's.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		notrun.Skip(t, needChromium, "no Chromium found on PATH (chromium, chromium-browser or google-chrome)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(412, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// The first run starts the browser, which lives as long as its
	// context: the deadline is for what follows.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	ctx, cancel3 := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel3)
	return ctx
}

// inBrowser runs actions in the browser, failing the test on an error.
func inBrowser(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// get runs the action a in the browser and returns its value.
func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// bodyText returns the text of the page shown.
func bodyText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return get(t, ctx, chromedp.Text(chromedp.CSS("body")))
}

// screenshot saves the page shown as images/name.png, under go test
// -update.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !*update {
		return
	}
	png := get(t, ctx, chromedp.FullScreenshot(100))
	if err := os.MkdirAll(screenshots, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshots, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// signIn signs the browser in as the person of the token id, with a new
// link, the way a person does with the link of done-server login.
func signIn(t *testing.T, ctx context.Context, e *env, tokenID string) {
	t.Helper()
	link, _, err := e.store.CreateSignInLink(t.Context(), tokenID, web.DefaultLinkTTL)
	if err != nil {
		t.Fatal(err)
	}
	inBrowser(t, ctx, chromedp.Navigate(e.httpURL+web.SignInPath+"?link="+url.QueryEscape(link)),
		chromedp.Click(chromedp.CSS("#signin")), chromedp.WaitVisible(chromedp.CSS("nav")))
}

// sessionClient returns an HTTP client that carries the browser's
// session cookie, as a forger who stole nothing but the cookie would
// (the cookie is HttpOnly: a page's script cannot read it).
func sessionClient(t *testing.T, ctx context.Context) (*http.Client, *http.Cookie) {
	t.Helper()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cookies {
		if c.Name == "done_session" {
			if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict {
				t.Errorf("session cookie HttpOnly=%v SameSite=%v, want HttpOnly, Strict", c.HTTPOnly, c.SameSite)
			}
			hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			return hc, &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	t.Fatal("no session cookie in the browser")
	return nil, nil
}

// postForm posts form to the page at path with the cookie, and returns
// the status and body.
func postForm(t *testing.T, hc *http.Client, cookie *http.Cookie, base, path string, form url.Values) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// csrfOf returns the CSRF token of the forms of the page shown.
func csrfOf(t *testing.T, ctx context.Context) string {
	t.Helper()
	v := get(t, ctx, chromedp.AttributeValue(chromedp.CSS(`input[name="csrf"]`), "value"))
	if v.Value == "" {
		t.Fatal("no CSRF token on the page")
	}
	return v.Value
}

// TestBrowserApproval signs a person in with a link, shows them a close
// request an agent made over MCP, with a title full of HTML and a
// direction override, and has them approve it: the task is done. Around
// it, the attacks: a link replayed, an agent's token and an expired link
// at sign-in, a page without a session, a form without its CSRF token, a
// request approved by id unreviewed, a cross-site form, framing.
func TestBrowserApproval(t *testing.T) {
	ctx := browser(t)
	e := newEnv(t)
	base := e.serveHTTP()
	aliceSecret := e.mint("alice", store.Human, mcpeffect.Full)
	alice, err := e.store.Authenticate(t.Context(), aliceSecret)
	if err != nil {
		t.Fatal(err)
	}
	botSecret := e.mint("bot", store.Agent, mcpeffect.NonDestructive)
	bot := e.connectHTTP(botSecret)

	// What an agent wrote: markup, and U+202E, which would show
	// "exe.gnp" as "png.exe".
	title := "<b>Ship</b> <script>alert(1)</script> invoice\u202egnp.exe"
	task := must[store.Task](t, bot, "create_task", args{"title": title})
	must[store.Step](t, bot, "add_step", args{"task_id": task.ID, "text": "Send the <i>invoice</i>"})
	req := must[store.Approval](t, bot, "request_approval", args{"task_id": task.ID, "kind": "close", "reason": "Sent; the customer has it."})
	other := must[store.Task](t, bot, "create_task", args{"title": "Another task"})
	unreviewed := must[store.Approval](t, bot, "request_approval", args{"task_id": other.ID, "kind": "close", "reason": "Trust me."})
	// A close request without a reason, as close_task makes it.
	closer := e.connectHTTP(e.mint("closer", store.Agent, mcpeffect.Full))
	silent := must[store.Task](t, closer, "create_task", args{"title": "Water the plants"})
	must[store.Task](t, closer, "close_task", args{"task_id": silent.ID})
	silentReq := must[store.TaskDetail](t, closer, "get_task", args{"task_id": silent.ID}).Approval

	// No page without a session.
	for _, path := range []string{"/app/", "/app/trash", "/app/access", "/app/approvals/" + req.ID} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "Ship") || !strings.Contains(string(b), "done-server login") {
			t.Errorf("GET %s without a session: %d, %q", path, resp.StatusCode, b)
		}
		if got := resp.Header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("GET %s: X-Frame-Options %q", path, got)
		}
		if got := resp.Header.Get("Content-Security-Policy"); !strings.Contains(got, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, got)
		}
	}

	// An agent's token is not a sign-in link, nor is an expired link.
	expired, _, err := e.store.CreateSignInLink(t.Context(), alice.ID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Minute)
	for name, link := range map[string]string{"an agent's token": botSecret, "a person's token": aliceSecret, "an expired link": expired} {
		inBrowser(t, ctx, chromedp.Navigate(base+web.SignInPath+"?link="+url.QueryEscape(link)), chromedp.Click(chromedp.CSS("#signin")),
			chromedp.WaitVisible(chromedp.CSS("#message")))
		if got := bodyText(t, ctx); !strings.Contains(got, "unknown, used already or expired") {
			t.Errorf("signing in with %s: %q", name, got)
		}
	}
	screenshot(t, ctx, "signin-refused")

	// The link signs in once.
	link, _, err := e.store.CreateSignInLink(t.Context(), alice.ID, web.DefaultLinkTTL)
	if err != nil {
		t.Fatal(err)
	}
	signInURL := base + web.SignInPath + "?link=" + url.QueryEscape(link)
	inBrowser(t, ctx, chromedp.Navigate(signInURL))
	screenshot(t, ctx, "signin")
	inBrowser(t, ctx, chromedp.Click(chromedp.CSS("#signin")), chromedp.WaitVisible(chromedp.CSS("a.approval")))
	home := bodyText(t, ctx)
	if !strings.Contains(home, "<b>Ship</b> <script>alert(1)</script> invoice⟨U+202E⟩gnp.exe") {
		t.Errorf("the home page does not show the title as written, escaped, with U+202E visible:\n%s", home)
	}
	// Times are the server's until the person says where they are: then
	// theirs, as people write them, the stamp in the <time> element.
	inBrowser(t, ctx, chromedp.Click(chromedp.CSS("#zone")), chromedp.WaitVisible(chromedp.CSS("#zone-name")),
		chromedp.SendKeys(chromedp.CSS("#zone-name"), "Europe/Paris"), chromedp.Click(chromedp.CSS("#set-zone")),
		chromedp.WaitVisible(chromedp.CSS("#notice")))
	home = bodyText(t, ctx)
	if !strings.Contains(home, "Times are now shown in Europe/Paris.") || !strings.Contains(home, "asked by agent bot on 2 Jun 2025, 11:00") ||
		!strings.Contains(home, "Times are in Europe/Paris") {
		t.Errorf("the home page, in Europe/Paris, does not say so, nor show the requests' times there:\n%s", home)
	}
	if got := get(t, ctx, chromedp.AttributeValue(chromedp.CSS("a.approval ~ p time"), "datetime")).Value; got != "2025-06-02T09:00:00.000Z" {
		t.Errorf("the time element's stamp is %q", got)
	}
	readable(t, ctx, "home")
	screenshot(t, ctx, "home")

	// Replayed, in a second browser, the link signs no one in.
	ctx2, cancel := chromedp.NewContext(ctx)
	defer cancel()
	inBrowser(t, ctx2, chromedp.Navigate(signInURL), chromedp.Click(chromedp.CSS("#signin")), chromedp.WaitVisible(chromedp.CSS("#message")))
	if got := bodyText(t, ctx2); !strings.Contains(got, "unknown, used already or expired") {
		t.Errorf("a sign-in link replayed: %q", got)
	}

	// The request, read and approved: its title as its heading, what was
	// asked and when, and the activity in words.
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/approvals/"+req.ID), chromedp.WaitVisible(chromedp.CSS("#approve")))
	got := bodyText(t, ctx)
	for _, want := range []string{
		"Send the <i>invoice</i>",
		"Sent; the customer has it.",
		"2 Jun 2025, 11:00 · bot (agent) asked to close the task",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the request's page lacks %q:\n%s", want, got)
		}
	}
	if asked := get(t, ctx, chromedp.Text(chromedp.CSS("#asked"))); asked != "bot (agent) asked to close the task on 2 Jun 2025, 11:00, saying:" {
		t.Errorf("what was asked: %q", asked)
	}
	if h1 := get(t, ctx, chromedp.Text(chromedp.CSS("h1"))); h1 != "Close “<b>Ship</b> <script>alert(1)</script> invoice⟨U+202E⟩gnp.exe”?" {
		t.Errorf("the request's heading is %q, want its task's title", h1)
	}
	readable(t, ctx, "the request's page")
	screenshot(t, ctx, "approval")
	// A request asked without a reason says so: nothing follows a colon.
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/approvals/"+silentReq.ID), chromedp.WaitVisible(chromedp.CSS("#asked")))
	if asked := get(t, ctx, chromedp.Text(chromedp.CSS("#asked"))); asked != "closer (agent) asked to close the task on 2 Jun 2025, 11:00, giving no reason." {
		t.Errorf("a request without a reason: %q", asked)
	}
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/approvals/"+req.ID), chromedp.WaitVisible(chromedp.CSS("#approve")))
	csrf := csrfOf(t, ctx)
	hc, cookie := sessionClient(t, ctx)

	// A form without the CSRF token, with the cookie: refused.
	if status, body := postForm(t, hc, cookie, base, "/app/approvals/"+req.ID, url.Values{"decision": {"approve"}}); status != http.StatusForbidden {
		t.Errorf("a forged form without the CSRF token: %d %s", status, body)
	}
	// The other request, never shown, approved by id with a valid CSRF
	// token: refused, and so is one reviewed with another page's mark.
	reviewed := get(t, ctx, chromedp.AttributeValue(chromedp.CSS(`input[name="reviewed"]`), "value")).Value
	for _, mark := range []string{"", reviewed} {
		status, body := postForm(t, hc, cookie, base, "/app/approvals/"+unreviewed.ID, url.Values{"csrf": {csrf}, "decision": {"approve"}, "reviewed": {mark}})
		if status != http.StatusConflict {
			t.Errorf("a request approved by id, unreviewed (mark %q): %d %s", mark, status, body)
		}
	}
	if got := must[store.ApprovalDetail](t, bot, "get_approval", args{"approval_id": unreviewed.ID}); got.Status != "pending" {
		t.Errorf("the unreviewed request is %s", got.Status)
	}

	inBrowser(t, ctx, chromedp.SendKeys(chromedp.CSS("#note"), "Checked with the customer."), chromedp.Click(chromedp.CSS("#approve")),
		chromedp.WaitVisible(chromedp.CSS("#decided")))
	status := get(t, ctx, chromedp.Text(chromedp.CSS("#task-status")))
	if status != "done" {
		t.Errorf("after approving, the page shows the task %q", status)
	}
	if n := get(t, ctx, chromedp.Text(chromedp.CSS("#notice"))); !strings.Contains(n, "You approved the request on") || !strings.Contains(n, "the task is done") {
		t.Errorf("the notice after approving: %q", n)
	}
	if got := must[store.TaskDetail](t, bot, "get_task", args{"task_id": task.ID}); got.Status != store.StatusDone {
		t.Errorf("after approving on the page, the task is %s over MCP", got.Status)
	}
	if acts := must[activityResult](t, bot, "get_task_activity", args{"task_id": task.ID}); !hasAction(acts, "approve_task", "alice") {
		t.Errorf("the activity log has no approve_task by alice: %+v", acts)
	}

	// The Trash, with a restore.
	gone := must[store.Task](t, bot, "create_task", args{"title": "Deleted by mistake"})
	must[store.TrashItem](t, e.connectHTTP(aliceSecret), "delete_task", args{"task_id": gone.ID})
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/trash"), chromedp.WaitVisible(chromedp.CSS("button.restore")))
	screenshot(t, ctx, "trash")

	// A cross-site form, from a page on another origin, with the session's
	// very CSRF token (as if leaked): refused by where it comes from, and
	// nothing restored. The cookie is SameSite=Strict, but a page on
	// another port of the same host is the same site, and the browser
	// sends it: the check of Sec-Fetch-Site refuses it.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/frame" {
			fmt.Fprintf(w, `<iframe id="f" src="%s/app/" width="300" height="300"></iframe>`, base)
			return
		}
		fmt.Fprintf(w, `<form id="f" method="post" action="%s/app/trash"><input name="csrf" value="%s"><input name="item_id" value="%s"></form>
<script>document.getElementById("f").submit()</script>`, base, csrf, gone.ID)
	}))
	defer evil.Close()
	inBrowser(t, ctx, chromedp.Navigate(evil.URL+"/post"), chromedp.WaitVisible(chromedp.CSS("#message")))
	if got := bodyText(t, ctx); !strings.Contains(got, "came from another site") {
		t.Errorf("a cross-site form: %q", got)
	}
	if got := must[trashResult](t, bot, "list_trash", args{}); len(got.Items) != 1 {
		t.Errorf("after a cross-site restore, the Trash holds %d items, want 1", len(got.Items))
	}
	// Framed by another site, the page does not load in the frame.
	inBrowser(t, ctx, chromedp.Navigate(evil.URL+"/frame"), chromedp.WaitReady(chromedp.CSS("#f")), chromedp.Sleep(500*time.Millisecond))
	frames, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	tree := frames.FrameTree
	if len(tree.ChildFrames) != 1 {
		t.Fatalf("the framing page has %d frames, want 1", len(tree.ChildFrames))
	}
	for _, child := range tree.ChildFrames {
		if strings.HasPrefix(child.Frame.URL, base) {
			t.Errorf("the page loaded in another site's frame: %s", child.Frame.URL)
		}
	}

	// The restore, from the page, and the notice that says so.
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/trash"), chromedp.Click(chromedp.CSS("button.restore")), chromedp.WaitVisible(chromedp.CSS("main p.none")))
	if got := must[store.TaskDetail](t, bot, "get_task", args{"task_id": gone.ID}); got.Title != "Deleted by mistake" {
		t.Errorf("restored: %+v", got)
	}
	if n := get(t, ctx, chromedp.Text(chromedp.CSS("#notice"))); n != "Restored the task “Deleted by mistake” from the Trash." {
		t.Errorf("the notice after restoring: %q", n)
	}
	// Read once: the next page has none.
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/trash"), chromedp.WaitVisible(chromedp.CSS("main p.none")))
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("notice") !== null`)); n {
		t.Error("the notice of the restore shows again")
	}

	// Revoke the agent's token: its next call fails.
	botToken, err := e.store.Authenticate(t.Context(), botSecret)
	if err != nil {
		t.Fatal(err)
	}
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/access"), chromedp.WaitVisible(chromedp.CSS("a.revoke")))
	readable(t, ctx, "the tokens' page")
	screenshot(t, ctx, "access")
	// Revoke asks first, and says what goes with the token; one's own
	// token is revoked only after a warning.
	inBrowser(t, ctx, chromedp.Click(chromedp.CSS(`a[href="/app/access/tokens/`+botToken.ID+`"]`)), chromedp.WaitVisible(chromedp.CSS("#revoke")))
	if _, err := e.store.Authenticate(t.Context(), botSecret); err != nil {
		t.Errorf("the agent's token, before the second step: %v", err)
	}
	if warned, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("own-warning") !== null`)); warned {
		t.Error("the page of the agent's token warns as for one's own")
	}
	screenshot(t, ctx, "revoke")
	if status, body := postForm(t, hc, cookie, base, "/app/access/tokens", url.Values{"csrf": {csrf}, "token_id": {botToken.ID}}); status != http.StatusBadRequest {
		t.Errorf("a revocation without its second step: %d %s", status, body)
	}
	inBrowser(t, ctx, chromedp.Click(chromedp.CSS("#revoke")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	if n := get(t, ctx, chromedp.Text(chromedp.CSS("#notice"))); n != "Revoked the token “bot”." {
		t.Errorf("the notice after revoking: %q", n)
	}
	if _, err := e.store.Authenticate(t.Context(), botSecret); !errors.Is(err, store.ErrBadToken) {
		t.Errorf("after revoking on the page, the agent's token: %v", err)
	}
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/access/tokens/"+alice.ID), chromedp.WaitVisible(chromedp.CSS("#own-warning")))
	screenshot(t, ctx, "revoke-own")

	// Signing out ends the session, in the store: the cookie, replayed,
	// opens nothing.
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/"), chromedp.Click(chromedp.CSS("header button.link")), chromedp.WaitVisible(chromedp.CSS("#message")))
	getReq, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/app/", nil)
	getReq.AddCookie(cookie)
	resp, err := hc.Do(getReq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the cookie of a session signed out: %d", resp.StatusCode)
	}

	// Signed in again, alice revokes her own token, warned: she is
	// signed out, and told why.
	signIn(t, ctx, e, alice.ID)
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/access/tokens/"+alice.ID), chromedp.Click(chromedp.CSS("#revoke")),
		chromedp.WaitVisible(chromedp.CSS("#notice")))
	if n := get(t, ctx, chromedp.Text(chromedp.CSS("#notice"))); !strings.Contains(n, "It was the token you were signed in with: you are signed out.") {
		t.Errorf("after revoking one's own token: %q", n)
	}
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/"), chromedp.WaitVisible(chromedp.CSS("main")))
	if got := bodyText(t, ctx); !strings.Contains(got, "done-server login") {
		t.Errorf("after revoking one's own token, the page: %s", got)
	}
}

// readable checks the page shown as a person reads it on a phone: no
// time is broken over two lines, and no heading is an id.
func readable(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("time")).filter(e => e.getClientRects().length !== 1).map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) > 0 {
		t.Errorf("%s: times broken over lines: %q", page, broken)
	}
	times, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("time").length`))
	if err != nil || times == 0 {
		t.Errorf("%s: %d times in <time> elements (%v)", page, times, err)
	}
	headings, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("h1, h2")).map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headings {
		if uuidText.MatchString(h) {
			t.Errorf("%s: a heading shows an id: %q", page, h)
		}
	}
}

// uuidText matches an id of Done's, as ids are shown.
var uuidText = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// withoutWeb returns dump without the tables of the web page (its
// sessions, links and confirmations).
func withoutWeb(dump string) string {
	var keep []string
	skip := false
	for line := range strings.Lines(dump) {
		if strings.HasPrefix(line, "-- ") {
			skip = strings.HasPrefix(strings.Fields(line)[1], "web_")
		}
		if !skip {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "")
}

// hasAction reports whether the activity holds action by actor.
func hasAction(acts activityResult, action, actor string) bool {
	for _, a := range acts.Activity {
		if a.Action == action && a.Actor == actor {
			return true
		}
	}
	return false
}

// TestBrowserURLConfirm serves with -confirm url: an agent's delete_task
// sends the person to the page by URL elicitation; declined there, the
// call is refused and nothing changed; confirmed, it runs. The page of a
// call is the person's only: another person is refused it, and it is
// answered once.
func TestBrowserURLConfirm(t *testing.T) {
	ctx := browser(t)
	e := newEnv(t)
	e.done.confirmURL = urlConfirmModes["url"]
	e.server, e.registry = e.done.newServer()
	base := e.serveHTTP()
	aliceSecret := e.mint("alice", store.Human, mcpeffect.Full)
	alice, _ := e.store.Authenticate(t.Context(), aliceSecret)
	bobSecret := e.mint("bob", store.Human, mcpeffect.Full)
	bob, _ := e.store.Authenticate(t.Context(), bobSecret)
	// The agent's token is alice's to give: its calls wait for her.
	_, botSecret, err := e.store.CreateToken(t.Context(), alice.Actor(), mcpeffect.Full, store.NewToken{Name: "bot", Kind: store.Agent, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}

	urls := make(chan string, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		// The host opens the page for the person, and says so: "accept"
		// is only that, never the person's answer.
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "url" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			urls <- req.Params.URL
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	bot, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: base + mcpPath, HTTPClient: &http.Client{Transport: bearerTransport{secret: botSecret}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	task := must[store.Task](t, bot, "create_task", args{"title": "Quarterly report"})
	before := withoutWeb(e.dumpData())

	type result struct{ err error }
	deleteTask := func() chan result {
		done := make(chan result, 1)
		go func() {
			_, err := bot.CallTool(t.Context(), &mcp.CallToolParams{Name: "delete_task", Arguments: args{"task_id": task.ID}})
			done <- result{err}
		}()
		return done
	}

	// Decline.
	called := deleteTask()
	var page string
	select {
	case page = <-urls:
	case r := <-called:
		t.Fatalf("delete_task returned before asking: %v", r.err)
	}
	if !strings.HasPrefix(page, base+web.ConfirmPath) {
		t.Fatalf("the elicitation's URL %q is not the page's", page)
	}

	// Bob, another person, is refused the page; alice, not signed in,
	// signs in and lands on it.
	signIn(t, ctx, e, bob.ID)
	inBrowser(t, ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#message")))
	if got := bodyText(t, ctx); !strings.Contains(got, "another person") {
		t.Errorf("bob on alice's confirmation: %q", got)
	}
	inBrowser(t, ctx, chromedp.Navigate(base+"/app/"), chromedp.WaitVisible(chromedp.CSS("nav")))
	if got := bodyText(t, ctx); strings.Contains(got, "Quarterly") {
		t.Errorf("bob's page lists alice's confirmation:\n%s", got)
	}
	bobClient, bobCookie := sessionClient(t, ctx)
	bobCSRF := csrfOf(t, ctx)
	if status, body := postForm(t, bobClient, bobCookie, base, strings.TrimPrefix(page, base), url.Values{"csrf": {bobCSRF}, "answer": {"confirm"}}); status != http.StatusForbidden {
		t.Errorf("bob answers alice's confirmation: %d %s", status, body)
	}
	inBrowser(t, ctx, chromedp.Click(chromedp.CSS("header button.link")), chromedp.WaitVisible(chromedp.CSS("#message")))

	inBrowser(t, ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("pre")))
	link, _, err := e.store.CreateSignInLink(t.Context(), alice.ID, web.DefaultLinkTTL)
	if err != nil {
		t.Fatal(err)
	}
	inBrowser(t, ctx, chromedp.Navigate(base+web.SignInPath+"?link="+url.QueryEscape(link)), chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#question")))
	if got := bodyText(t, ctx); !strings.Contains(got, `Delete task "Quarterly report"?`) || !strings.Contains(got, "bot") {
		t.Errorf("the confirmation page does not ask in plain words:\n%s", got)
	}
	readable(t, ctx, "the confirmation page")
	screenshot(t, ctx, "confirm")
	csrf := csrfOf(t, ctx)
	inBrowser(t, ctx, chromedp.Click(chromedp.CSS("#decline")), chromedp.WaitVisible(chromedp.CSS("#answer")))
	if n := get(t, ctx, chromedp.Text(chromedp.CSS("#notice"))); !strings.HasPrefix(n, "You declined the call: it does not run.") {
		t.Errorf("the notice after declining: %q", n)
	}
	r := <-called
	n, ok := mcpeffect.AsNotConfirmedError(r.err)
	if !ok || n.Answer != "decline" {
		t.Fatalf("delete_task declined on the page: %v", r.err)
	}
	if !strings.Contains(e.dump(), "decline_call") {
		t.Error("the decline is not in the activity log")
	}
	if got := withoutWeb(e.dumpData()); got != before {
		t.Errorf("a call declined on the page changed the data:\n%s\nwas\n%s", got, before)
	}
	if got := must[store.TaskDetail](t, bot, "get_task", args{"task_id": task.ID}); got.Title != "Quarterly report" {
		t.Errorf("after a decline, the task: %+v", got)
	}
	if trash := must[trashResult](t, bot, "list_trash", args{}); len(trash.Items) != 0 {
		t.Errorf("after a decline, the Trash holds %d items", len(trash.Items))
	}

	// Used twice: the page answers no more.
	aliceClient, aliceCookie := sessionClient(t, ctx)
	if status, body := postForm(t, aliceClient, aliceCookie, base, strings.TrimPrefix(page, base), url.Values{"csrf": {csrf}, "answer": {"confirm"}}); status != http.StatusConflict {
		t.Errorf("a confirmation answered twice: %d %s", status, body)
	}

	// Confirm: the call runs.
	called = deleteTask()
	page = <-urls
	inBrowser(t, ctx, chromedp.Navigate(page), chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#answer")))
	if n := get(t, ctx, chromedp.Text(chromedp.CSS("#notice"))); !strings.HasPrefix(n, "You confirmed the call: it runs now.") {
		t.Errorf("the notice after confirming: %q", n)
	}
	if r := <-called; r.err != nil {
		t.Fatalf("delete_task confirmed on the page: %v", r.err)
	}
	if trash := must[trashResult](t, bot, "list_trash", args{}); len(trash.Items) != 1 {
		t.Errorf("after a confirmation, the Trash holds %d items, want 1", len(trash.Items))
	}
}
