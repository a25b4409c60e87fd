package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func (h *Handler) routes() {
	m := h.mux
	m.HandleFunc("GET "+Prefix+"/static/style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		http.ServeFileFS(w, r, files, "static/style.css")
	})
	m.HandleFunc("GET "+SignInPath, h.signInForm)
	m.HandleFunc("POST "+SignInPath, h.signIn)
	m.HandleFunc("POST "+Prefix+"/signout", h.authed(h.signOut))
	m.HandleFunc("GET "+Prefix+"/{$}", h.authed(h.home))
	m.HandleFunc("GET "+Prefix+"/approvals/{id}", h.authed(h.approval))
	m.HandleFunc("POST "+Prefix+"/approvals/{id}", h.authed(h.decide))
	m.HandleFunc("GET "+Prefix+"/trash", h.authed(h.trash))
	m.HandleFunc("POST "+Prefix+"/trash", h.authed(h.restore))
	m.HandleFunc("GET "+Prefix+"/access", h.authed(h.access))
	m.HandleFunc("GET "+Prefix+"/access/tokens/{id}", h.authed(h.tokenToRevoke))
	m.HandleFunc("POST "+Prefix+"/access/tokens", h.authed(h.revokeToken))
	m.HandleFunc("POST "+Prefix+"/access/links", h.authed(h.revokeLink))
	m.HandleFunc("GET "+ConfirmPath+"{id}", h.authed(h.confirmation))
	m.HandleFunc("POST "+ConfirmPath+"{id}", h.authed(h.answer))
	m.HandleFunc("GET "+Prefix+"/zone", h.authed(h.zoneForm))
	m.HandleFunc("POST "+Prefix+"/zone", h.authed(h.setZone))
	m.HandleFunc(Prefix+"/", h.authed(func(w http.ResponseWriter, r *http.Request, _ *session) {
		h.fail(w, r, http.StatusNotFound, "There is no such page.")
	}))
	m.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) { done(w, r, Prefix+"/") })
}

// signInForm shows the form that signs in with the link in the address.
// Opening the link signs no one in by itself: a GET changes nothing, so
// that what fetches links on its own (a chat's preview, a mail scanner)
// does not use it up, and the person's click does.
func (h *Handler) signInForm(w http.ResponseWriter, r *http.Request) {
	link := r.URL.Query().Get("link")
	status := http.StatusOK
	if link == "" {
		status = http.StatusUnauthorized
	}
	h.render(w, r, status, "signin.html", map[string]any{"Title": "Sign in", "Link": link})
}

func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	ws, secret, err := h.store.SignIn(r.Context(), r.PostForm.Get("link"), h.sessionTTL)
	switch {
	case errors.Is(err, store.ErrBadLink):
		h.render(w, r, http.StatusForbidden, "signin.html", map[string]any{"Title": "Sign in",
			"Refused": "This sign-in link is unknown, used already or expired. A link signs in once, within minutes: ask for a new one (done-server login). A token is not a sign-in link."})
		return
	case err != nil:
		h.refuse(w, r, err)
		return
	}
	h.setCookie(w, r, sessionCookie, secret, h.sessionTTL)
	h.logger.InfoContext(r.Context(), "web sign-in", "person", ws.Token.Name, "token_id", ws.Token.ID)
	next := Prefix + "/"
	if c, err := r.Cookie(nextCookie); err == nil && strings.HasPrefix(c.Value, ConfirmPath) && !strings.ContainsAny(c.Value, "\\?#") {
		next = c.Value
		h.setCookie(w, r, nextCookie, "", 0)
	}
	done(w, r, next)
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	if err := h.store.SignOut(r.Context(), s.Token.Actor(), s.ID); err != nil {
		h.refuse(w, r, err)
		return
	}
	h.setCookie(w, r, sessionCookie, "", 0)
	h.render(w, r, http.StatusOK, "signin.html", map[string]any{"Title": "Signed out", "SignedOut": true})
}

// mayChange refuses, for the pages' changes, a person whose token may not
// make them as a tool call: approving, rejecting, restoring and revoking
// are destructive, so they need a full token, as over MCP.
func (h *Handler) mayChange(w http.ResponseWriter, r *http.Request, s *session) bool {
	if s.Token.Scope < mcpeffect.Full {
		h.fail(w, r, http.StatusForbidden, "Your token's scope is "+s.Token.Scope.String()+": this needs a full one, as the tool does.")
		return false
	}
	return true
}

func (h *Handler) home(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	approvals, err := h.store.ListPendingApprovals(ctx, store.Page{Cursor: r.URL.Query().Get("cursor")})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	type row struct {
		store.Approval
		TaskTitle string
	}
	rows := make([]row, 0, len(approvals.Items))
	for _, a := range approvals.Items {
		t, err := h.store.GetTask(ctx, a.TaskID)
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		rows = append(rows, row{a, t.Title})
	}
	confirmations, more, err := h.store.PendingConfirmations(ctx, s.Token.Actor())
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.page(w, r, s, "home.html", map[string]any{"Title": "Waiting for you", "Approvals": rows,
		"Next": approvals.NextCursor, "Confirmations": confirmations, "MoreConfirmations": more})
}

// A review is what the page of a request shows the person who decides:
// the request, its task, its steps, the run it was asked from and what
// that produced, and one page of the activity since the request.
type review struct {
	Approval store.ApprovalDetail
	Task     store.TaskDetail
	Activity []store.Activity
	// ActivityCursor is the cursor of the page of activity shown ("" for
	// the first), and NextActivity that of the next ("" on the last).
	ActivityCursor string
	NextActivity   string
	// Newest is the id of the task's newest entry of activity, on this
	// page or past it: whatever the task does since changes the mark.
	Newest int64
}

// review reads the request id and the page of its activity after the
// cursor activity: what the page shows, no more, so that it costs the
// same whatever the task's history before the request.
func (h *Handler) review(r *http.Request, id, activity string) (review, error) {
	ctx := r.Context()
	a, err := h.store.GetApproval(ctx, id)
	if err != nil {
		return review{}, err
	}
	t, err := h.store.GetTask(ctx, a.TaskID)
	if err != nil {
		return review{}, err
	}
	since, err := h.store.TaskActivitySince(ctx, a.TaskID, a.RequestedAt, store.Page{Cursor: activity})
	if err != nil {
		return review{}, err
	}
	return review{Approval: a, Task: t, Activity: since.Items, ActivityCursor: activity, NextActivity: since.NextCursor, Newest: since.Newest}, nil
}

// reviewed returns the mark of what rv shows, signed with the session's
// key: the decision form carries it, and a decision is taken only if the
// request still shows the same, to this same session. A request decided
// by its id alone, one the person never opened, or one that changed
// since (a step ticked, a run's result, the request itself replaced) is
// refused.
func (s *session) reviewed(rv review) string {
	js, _ := json.Marshal(rv)
	m := hmac.New(sha256.New, s.reviewKey)
	m.Write(js)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (h *Handler) approval(w http.ResponseWriter, r *http.Request, s *session) {
	rv, err := h.review(r, r.PathValue("id"), r.URL.Query().Get("activity"))
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	title := "Validate, on “" + rv.Task.Title + "”"
	if rv.Approval.Kind == store.ApprovalClose {
		title = "Close “" + rv.Task.Title + "”?"
	}
	h.page(w, r, s, "approval.html", map[string]any{"Title": title, "R": rv, "Reviewed": s.reviewed(rv),
		"Pending": rv.Approval.Status == "pending"})
}

func (h *Handler) decide(w http.ResponseWriter, r *http.Request, s *session) {
	if !h.mayChange(w, r, s) {
		return
	}
	id := r.PathValue("id")
	rv, err := h.review(r, id, r.PostForm.Get("activity"))
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if !hmac.Equal([]byte(r.PostForm.Get("reviewed")), []byte(s.reviewed(rv))) {
		h.fail(w, r, http.StatusConflict, "This is not the request you reviewed: it changed since the page showed it, or was never shown to you. Read it again, then decide.")
		return
	}
	by := s.Token.Actor()
	var v store.Verdict
	switch r.PostForm.Get("decision") {
	case "approve":
		v, err = h.store.ApproveTask(r.Context(), by, rv.Approval.TaskID, id, r.PostForm.Get("note"))
	case "reject":
		v, err = h.store.RejectTask(r.Context(), by, rv.Approval.TaskID, id, r.PostForm.Get("note"))
	default:
		h.fail(w, r, http.StatusBadRequest, "Approve or reject.")
		return
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.notify(w, r, s, fmt.Sprintf("You %s the request on “%s”: the task is %s.", v.Approval.Status, v.Task.Title, strings.ReplaceAll(string(v.Task.Status), "_", " ")))
	done(w, r, Prefix+"/approvals/"+id)
}

func (h *Handler) trash(w http.ResponseWriter, r *http.Request, s *session) {
	l, err := h.store.ListTrash(r.Context(), store.Page{Cursor: r.URL.Query().Get("cursor")})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.page(w, r, s, "trash.html", map[string]any{"Title": "Trash", "Items": l.Items, "Next": l.NextCursor})
}

func (h *Handler) restore(w http.ResponseWriter, r *http.Request, s *session) {
	if !h.mayChange(w, r, s) {
		return
	}
	res, err := h.store.RestoreFromTrash(r.Context(), s.Token.Actor(), r.PostForm.Get("item_id"))
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if res.Restored {
		h.notify(w, r, s, "Restored "+h.named(r, res.ItemKind, res.ItemID)+" from the Trash.")
	} else {
		h.notify(w, r, s, "That was no longer in the Trash: nothing changed.")
	}
	done(w, r, Prefix+"/trash")
}

func (h *Handler) access(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	by := s.Token.Actor()
	tokens, err := h.store.ListTokens(ctx, by, store.Page{Cursor: r.URL.Query().Get("tokens"), Limit: store.MaxLimit})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	links, err := h.store.ListCalendarLinks(ctx, by, store.Page{Cursor: r.URL.Query().Get("links"), Limit: store.MaxLimit})
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.page(w, r, s, "access.html", map[string]any{"Title": "Tokens and calendar links", "Tokens": tokens.Items,
		"NextTokens": tokens.NextCursor, "Links": links.Items, "NextLinks": links.NextCursor, "Self": s.Token.ID})
}

// tokenToRevoke is the second step of revoking a token: what revoking it
// would take with it, and, for the token the person is signed in with, a
// warning; the form there revokes it.
func (h *Handler) tokenToRevoke(w http.ResponseWriter, r *http.Request, s *session) {
	rv, err := h.store.Revocation(r.Context(), s.Token.Actor(), r.PathValue("id"))
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.page(w, r, s, "revoke.html", map[string]any{"Title": "Revoke the token “" + rv.Token.Name + "”?", "R": rv,
		"Own": rv.Token.ID == s.Token.ID, "Takes": takes(rv)})
}

// takes says what revoking rv's token takes with it, besides itself.
func takes(rv store.Revocation) string {
	var parts []string
	if rv.Tokens > 0 {
		parts = append(parts, count(rv.Tokens, "token")+" minted from it")
	}
	if rv.Links > 0 {
		parts = append(parts, count(rv.Links, "calendar link")+" of theirs")
	}
	return strings.Join(parts, " and ")
}

// count returns "1 token", "3 tokens".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// revokeToken revokes a token, once the person has seen what it takes
// with it (see [Handler.tokenToRevoke]): a form without that step's
// confirmation is refused. Revoking the token the person is signed in
// with ends their session: they are told so, on the sign-in page.
func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request, s *session) {
	if !h.mayChange(w, r, s) {
		return
	}
	id := r.PostForm.Get("token_id")
	if r.PostForm.Get("confirm") != "yes" {
		h.fail(w, r, http.StatusBadRequest, "Revoking a token asks first: open it from the tokens page, read what it takes with it, then revoke.")
		return
	}
	rv, err := h.store.Revocation(r.Context(), s.Token.Actor(), id)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	k, err := h.store.RevokeToken(r.Context(), s.Token.Actor(), id)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	text := "Revoked the token “" + k.Name + "”"
	if t := takes(rv); t != "" && rv.Token.RevokedAt == "" {
		text += ", with " + t
	}
	text += "."
	if k.ID == s.Token.ID {
		h.setCookie(w, r, sessionCookie, "", 0)
		h.render(w, r, http.StatusOK, "signin.html", map[string]any{"Title": "Signed out",
			"Notice": text + " It was the token you were signed in with: you are signed out."})
		return
	}
	h.notify(w, r, s, text)
	done(w, r, Prefix+"/access")
}

func (h *Handler) revokeLink(w http.ResponseWriter, r *http.Request, s *session) {
	if !h.mayChange(w, r, s) {
		return
	}
	l, err := h.store.RevokeCalendarLink(r.Context(), s.Token.Actor(), r.PostForm.Get("link_id"))
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.notify(w, r, s, "Revoked the calendar link “"+l.Name+"”: its address answers nothing from now on.")
	done(w, r, Prefix+"/access")
}

// named returns how the notice of a restore names the item of kind and
// id: its title, or its kind alone if it cannot be read.
func (h *Handler) named(r *http.Request, kind, id string) string {
	ctx := r.Context()
	switch kind {
	case "task":
		if t, err := h.store.GetTask(ctx, id); err == nil {
			return "the task “" + t.Title + "”"
		}
	case "project":
		if p, err := h.store.GetProject(ctx, id); err == nil {
			return "the project “" + p.Name + "”"
		}
	case "step":
		if st, err := h.store.GetStep(ctx, id); err == nil {
			return "the step “" + st.Text + "”"
		}
	}
	return "the " + kind
}

// confirmation shows one call waiting for the person's answer, only to
// the person it waits for.
func (h *Handler) confirmation(w http.ResponseWriter, r *http.Request, s *session) {
	c, err := h.store.GetConfirmation(r.Context(), r.PathValue("id"))
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if c.Person != "" && c.Person != s.Token.Name {
		h.fail(w, r, http.StatusForbidden, "This call waits for another person's answer.")
		return
	}
	var args any
	if json.Unmarshal([]byte(c.Arguments), &args) == nil {
		if js, err := json.MarshalIndent(args, "", "  "); err == nil {
			c.Arguments = string(js)
		}
	}
	open := c.Answer == "" && c.UsedAt == "" && !c.Expired(h.now())
	var cannot string
	if err := store.MayAnswer(c, s.Token); open && err != nil {
		// The person sees the call, and that another must answer it.
		cannot, open = err.Error(), false
	}
	h.page(w, r, s, "confirm.html", map[string]any{"Title": "Confirm a call", "C": c,
		"Open": open, "Cannot": cannot})
}

func (h *Handler) answer(w http.ResponseWriter, r *http.Request, s *session) {
	var accept bool
	switch r.PostForm.Get("answer") {
	case "confirm":
		accept = true
	case "decline":
	default:
		h.fail(w, r, http.StatusBadRequest, "Confirm or decline.")
		return
	}
	id := r.PathValue("id")
	if _, err := h.store.AnswerConfirmation(r.Context(), s.Token.Actor(), id, accept); err != nil {
		h.refuse(w, r, err)
		return
	}
	if accept {
		h.notify(w, r, s, "You confirmed the call: it runs now. You can go back to your MCP host.")
	} else {
		h.notify(w, r, s, "You declined the call: it does not run. You can go back to your MCP host.")
	}
	done(w, r, ConfirmPath+id)
}

func (h *Handler) zoneForm(w http.ResponseWriter, r *http.Request, s *session) {
	h.page(w, r, s, "zone.html", map[string]any{"Title": "Your time zone", "Zones": commonZones})
}

// setZone keeps the time zone the person chose, for this browser.
func (h *Handler) setZone(w http.ResponseWriter, r *http.Request, s *session) {
	name := strings.TrimSpace(r.PostForm.Get("zone"))
	if _, err := loadZone(name); err != nil {
		h.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	h.setCookie(w, r, zoneCookie, name, 365*24*time.Hour)
	h.notify(w, r, s, "Times are now shown in "+name+".")
	done(w, r, Prefix+"/")
}
