package main

import (
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
	"golang.org/x/time/rate"
)

// BenchmarkApprovalPage reads the page of a close request, as a person
// signed in does (page), and posts a decision on it with a mark of
// another page (decide: the page reads the request again, finds that it
// is not the one reviewed, and refuses: what every decision reads, with
// nothing changed), for a task whose history before the request holds
// 10 entries, then 100,000: the second costs what the first does when
// the page reads only what it shows, the activity since the request.
// Done serves it over HTTP, on the store of the run:
//
//	go test -run '^$' -bench ApprovalPage .
func BenchmarkApprovalPage(b *testing.B) {
	for _, history := range []int{10, 100_000} {
		b.Run(fmt.Sprint(history), func(b *testing.B) {
			base, hc, cookie, approval := approvalBench(b, history)
			page := base + web.Prefix + "/approvals/" + approval
			get := func() string {
				req, _ := http.NewRequestWithContext(b.Context(), http.MethodGet, page, nil)
				req.AddCookie(cookie)
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("GET %s: %d %s", page, resp.StatusCode, body)
				}
				return string(body)
			}
			_, csrf, _ := strings.Cut(get(), `name="csrf" value="`)
			csrf, _, _ = strings.Cut(csrf, `"`)
			b.Run("page", func(b *testing.B) {
				for range b.N {
					get()
				}
			})
			b.Run("decide", func(b *testing.B) {
				form := url.Values{"csrf": {csrf}, "decision": {"approve"}, "reviewed": {"not this page"}}.Encode()
				for range b.N {
					req, _ := http.NewRequestWithContext(b.Context(), http.MethodPost, page, strings.NewReader(form))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.AddCookie(cookie)
					resp, err := hc.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusConflict {
						b.Fatalf("a decision with another page's mark: %d", resp.StatusCode)
					}
				}
			})
		})
	}
}

// approvalBench serves Done over HTTP on the store of this run, with a
// task whose history holds history entries of activity, and a close
// request on it made after them; it returns the server's URL, a client
// that follows no redirect and the cookie of a person signed in to the
// page, and the request's id.
func approvalBench(b *testing.B, history int) (base string, hc *http.Client, cookie *http.Cookie, approval string) {
	ctx := b.Context()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewUnstartedServer(nil)
	b.Cleanup(srv.Close)
	base = "http://" + srv.Listener.Addr().String()
	dir := b.TempDir()
	st, _, err := openStoreAt(b, dir, storeOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	d := newDone(st, logger, config{baseURL: base, writeRate: rate.Inf})
	server, registry := d.newServer()
	srv.Config.Handler = d.httpHandler(server, registry)
	srv.Start()

	alice, _, err := st.MintToken(ctx, store.NewToken{Name: "alice", Kind: store.Human, Scope: mcpeffect.Full})
	if err != nil {
		b.Fatal(err)
	}
	task, err := st.CreateTask(ctx, alice.Actor(), store.NewTask{Title: "a task with a history"})
	if err != nil {
		b.Fatal(err)
	}
	// The history, written straight into the database: through the
	// store, 100,000 writes would take minutes. Each is an entry of the
	// task's, older than the request.
	db, insert := benchDB(b, dir)
	defer db.Close()
	if _, err := db.ExecContext(ctx, insert, history-1, alice.ID, task.ID); err != nil {
		b.Fatal(err)
	}
	if _, err := st.CloseTask(ctx, alice.Actor(), task.ID); err != nil {
		b.Fatal(err)
	}
	got, err := st.GetTask(ctx, task.ID)
	if err != nil || got.Approval == nil {
		b.Fatalf("the task's close request: %+v, %v", got.Approval, err)
	}

	link, _, err := st.CreateSignInLink(ctx, alice.ID, web.DefaultLinkTTL)
	if err != nil {
		b.Fatal(err)
	}
	hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.PostForm(base+web.SignInPath, url.Values{"link": {link}})
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "done_session" && c.Value != "" {
			cookie = &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	if cookie == nil {
		b.Fatalf("signing in: %d", resp.StatusCode)
	}
	return base, hc, cookie, got.Approval.ID
}

// benchDB opens the database of the store of dir beside it, and returns
// the statement that adds $1 entries of activity of the token $2 to the
// task $3, all on the same old day, after its first (its creation).
func benchDB(b *testing.B, dir string) (*sql.DB, string) {
	const columns = `INSERT INTO activity (at, token_id, actor, actor_kind, action, subject_kind, subject_id, task_id, details) `
	if pgtest.Postgres() {
		db, err := sql.Open("pgx", storeURL(b, dir))
		if err != nil {
			b.Fatal(err)
		}
		return db, columns + `SELECT '2025-01-01T00:00:00.000Z', $2, 'alice', 'human', 'comment_on_task', 'comment', 'c' || i, $3, '{}' FROM generate_series(1, $1) i`
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.FileName)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	return db, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) ` +
		columns + `SELECT '2025-01-01T00:00:00.000Z', ?2, 'alice', 'human', 'comment_on_task', 'comment', 'c' || i, ?3, '{}' FROM n`
}
