// Package web is the page of Done for people, served at /app by
// done-server serve -http: the close requests that wait for them, the
// Trash, the tokens and calendar links, and the tool calls that wait for
// their yes (serve -confirm url).
//
// It is server-rendered HTML (html/template), without JavaScript. A
// person signs in with a one-time link that done-server login prints,
// never with a token; the session is a cookie (HttpOnly, SameSite=Strict,
// Secure over TLS) whose state, like that of the links and of the
// confirmations, is in the store, so that any process serving the data
// serves any page. Every form carries a token tied to the session, and a
// cross-site request is refused whatever it carries. Every action is one
// call into the store, the call a tool makes, with the same rules and
// the same record in the activity log.
package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// Prefix is the path the page is served under.
const Prefix = "/app"

// SignInPath is the path of a sign-in link, with its secret in the query
// parameter link.
const SignInPath = Prefix + "/signin"

// ConfirmPath is the path of the page of one confirmation, followed by
// its id.
const ConfirmPath = Prefix + "/confirm/"

// Default lifetimes.
const (
	// DefaultLinkTTL is how long a sign-in link lasts: long enough to
	// open it, short enough that one found later in a terminal's
	// scrollback is dead.
	DefaultLinkTTL = 10 * time.Minute
	// DefaultSessionTTL is how long a session lasts, however active.
	DefaultSessionTTL = 12 * time.Hour
)

// RetryAfter is the Retry-After header, in seconds, of an answer refused
// because the database is unavailable for now ([store.Transient]), here
// and on the rest of done-server's HTTP: a restart of PostgreSQL takes a
// few seconds.
const RetryAfter = "2"

// The cookies of the page. Both are HttpOnly, SameSite=Strict, Secure
// over TLS, and scoped to [Prefix].
const (
	sessionCookie = "done_session"
	// nextCookie remembers, for a few minutes, the confirmation page that
	// a person opened before signing in, to take them back to it.
	nextCookie = "done_next"
)

// Options configure [New].
type Options struct {
	// SessionTTL is how long a session lasts; zero means
	// [DefaultSessionTTL].
	SessionTTL time.Duration
}

// A Handler serves the page. It is safe for concurrent use.
type Handler struct {
	store      *store.Store
	logger     *slog.Logger
	sessionTTL time.Duration
	now        func() time.Time
	mux        *http.ServeMux
	cross      *http.CrossOriginProtection
}

// New returns the handler of the page over st, logging to logger, to be
// mounted at [Prefix].
func New(st *store.Store, logger *slog.Logger, opts *Options) *Handler {
	if opts == nil {
		opts = &Options{}
	}
	h := &Handler{store: st, logger: logger, sessionTTL: opts.SessionTTL, now: st.Now, mux: http.NewServeMux(),
		cross: http.NewCrossOriginProtection()}
	if h.sessionTTL <= 0 {
		h.sessionTTL = DefaultSessionTTL
	}
	// A cross-site request is answered 403 before any handler runs,
	// whatever it carries: the browser says where it comes from
	// (Sec-Fetch-Site, or else Origin), and only the page's own forms
	// come from the page.
	h.cross.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusForbidden, "This request came from another site, and is refused.")
	}))
	h.routes()
	return h
}

// ServeHTTP serves the page, with the headers every answer carries: no
// framing (clickjacking), no script, no referrer (a sign-in link in the
// address must not leak to another site), nothing cached.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
	h.cross.Handler(h.mux).ServeHTTP(w, r)
}

//go:embed templates/*.html static/style.css
var files embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"show": Visible,
	"at":   at,
	"did":  did,
}).ParseFS(files, "templates/*.html"))

// Visible returns s with each control or format character, but for tab
// and newline, written as its code point, such as ⟨U+202E⟩: a title that
// an agent wrote cannot turn the page's text around (U+202E shows the
// text after it reversed) or hide what it says. html/template escapes
// the rest.
func Visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
		return true
	}
	// Format characters (Cf: direction marks and overrides, zero-width
	// joiners...), line and paragraph separators, and what is not a
	// character at all.
	return r == 0x2028 || r == 0x2029 || r == 0xfffd || unicode.Is(unicode.Cf, r)
}

// session is the signed-in person of a request, with the secrets the
// forms carry, derived from the cookie's.
type session struct {
	store.WebSession
	csrf string
	// reviewKey signs what a page showed (see [Handler.reviewed]).
	reviewKey []byte
}

// derive returns a secret derived from the session's secret for purpose.
func derive(secret, purpose string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// sessionOf returns the live session of r, [store.ErrBadSession] if it
// has none, or the error that kept the store from saying.
func (h *Handler) sessionOf(r *http.Request) (*session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, store.ErrBadSession
	}
	ws, err := h.store.WebSession(r.Context(), c.Value)
	if err != nil {
		return nil, err
	}
	return &session{WebSession: ws,
		csrf:      base64.RawURLEncoding.EncodeToString(derive(c.Value, "csrf")),
		reviewKey: derive(c.Value, "review")}, nil
}

// authed wraps a page that needs a session. Without one, a GET gets the
// sign-in page (remembering a confirmation to come back to) and anything
// else 403. A POST must carry the session's CSRF token in its form.
func (h *Handler) authed(next func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := h.sessionOf(r)
		if err != nil && !errors.Is(err, store.ErrBadSession) {
			// The store could not say (the database is down, say): a
			// signed-in person is not sent to sign in again.
			h.refuse(w, r, err)
			return
		}
		if err != nil {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				if strings.HasPrefix(r.URL.Path, ConfirmPath) {
					h.setCookie(w, r, nextCookie, r.URL.Path, 15*time.Minute)
				}
				h.render(w, r, http.StatusUnauthorized, "signin.html", map[string]any{"Title": "Sign in"})
				return
			}
			h.fail(w, r, http.StatusForbidden, "You are not signed in, or your session has ended.")
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if err := r.ParseForm(); err != nil {
				h.fail(w, r, http.StatusBadRequest, "The form could not be read.")
				return
			}
			if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
				h.fail(w, r, http.StatusForbidden, "This form did not come from your session of this page, and is refused.")
				return
			}
		}
		next(w, r, s)
	}
}

// setCookie sets one of the page's cookies; a zero ttl deletes it.
func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, ttl time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: Prefix, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode}
	if ttl > 0 {
		c.MaxAge = int(ttl / time.Second)
	} else {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// render writes the page name with data, which gets the session's CSRF
// token and person when there is one.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, data map[string]any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		h.logger.ErrorContext(r.Context(), "rendering a page", "page", name, "err", err)
	}
}

// page renders a page of the signed-in person s, in their time zone,
// with the notice of what they just did, if anything.
func (h *Handler) page(w http.ResponseWriter, r *http.Request, s *session, name string, data map[string]any) {
	data["CSRF"] = s.csrf
	data["Person"] = s.Token.Name
	data["Zone"], data["ZoneName"] = zoneOf(r)
	data["Notice"] = h.notice(w, r, s)
	h.render(w, r, http.StatusOK, name, data)
}

// fail answers with a page that says what went wrong.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, message string) {
	zone, _ := zoneOf(r)
	h.render(w, r, status, "error.html", map[string]any{"Title": http.StatusText(status), "Message": message, "Zone": zone})
}

// refuse answers err, an error of the store: a refusal of the domain
// with its message; the database unavailable for now as 503 with
// Retry-After; anything else as an internal error, logged.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var e *refusal.Error
	if errors.As(err, &e) {
		status := map[refusal.Code]int{refusal.Invalid: http.StatusBadRequest, refusal.NotFound: http.StatusNotFound,
			refusal.Conflict: http.StatusConflict, refusal.Forbidden: http.StatusForbidden}[e.Code]
		if status == 0 {
			status = http.StatusBadRequest
		}
		h.fail(w, r, status, e.Error())
		return
	}
	if store.Transient(err) {
		// Nothing was done, and the same request may work in a moment.
		h.logger.WarnContext(r.Context(), "web page", "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", RetryAfter)
		h.fail(w, r, http.StatusServiceUnavailable, "The database of Done is unavailable for now: nothing was changed. Try again in a few seconds.")
		return
	}
	h.logger.ErrorContext(r.Context(), "web page", "path", r.URL.Path, "err", err)
	h.fail(w, r, http.StatusInternalServerError, "Internal error; the server log has the details.")
}

// done redirects, after a form, to the page path (303: the browser GETs
// it, and a reload does not post again).
func done(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, path, http.StatusSeeOther)
}
