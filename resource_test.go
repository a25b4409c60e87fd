package mcpeffect_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newScopedServer returns a server with resources and prompts of every
// kind: declared through mcpeffect with a scope, and added with go-sdk
// alone, which need the default, read-only.
func newScopedServer(t testing.TB, opts *mcpeffect.MiddlewareOptions) (*mcp.Server, *mcpeffect.Registry, *calls) {
	t.Helper()
	s, r, c := newTestServer(t, opts)
	read := func(name string) mcp.ResourceHandler {
		return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			c.add(name)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name}}}, nil
		}
	}
	get := func(name string) mcp.PromptHandler {
		return func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			c.add(name)
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: name}}}}, nil
		}
	}
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://readme", Name: "readme"}, mcpeffect.ReadOnly, read("readme"))
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://payroll", Name: "payroll"}, mcpeffect.Full, read("payroll"))
	mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "notes://{id}", Name: "note"}, mcpeffect.NonDestructive, read("note"))
	s.AddResource(&mcp.Resource{URI: "plain://status", Name: "status"}, read("status"))
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "plain://logs/{day}", Name: "logs"}, read("logs"))
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "summarize"}, mcpeffect.ReadOnly, get("summarize"))
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "audit_everything"}, mcpeffect.Full, get("audit_everything"))
	s.AddPrompt(&mcp.Prompt{Name: "hello"}, get("hello"))
	return s, r, c
}

// TestResourcesAndPromptsScoped reads every resource and gets every prompt
// with every scope: what the scope does not allow is refused before its
// handler runs, and the zero Scope reads nothing at all.
func TestResourcesAndPromptsScoped(t *testing.T) {
	s, r, c := newScopedServer(t, nil)
	ctx := context.Background()
	type item struct {
		kind, name, handler string // kind: resource or prompt
		need                mcpeffect.Scope
	}
	items := []item{
		{"resource", "notes://readme", "readme", mcpeffect.ReadOnly},
		{"resource", "notes://payroll", "payroll", mcpeffect.Full},
		{"resource", "notes://42", "note", mcpeffect.NonDestructive},
		{"resource", "plain://status", "status", mcpeffect.ReadOnly},
		{"resource", "plain://logs/monday", "logs", mcpeffect.ReadOnly},
		{"resource", "nowhere://x", "", mcpeffect.ReadOnly}, // not found, once allowed
		{"prompt", "summarize", "summarize", mcpeffect.ReadOnly},
		{"prompt", "audit_everything", "audit_everything", mcpeffect.Full},
		{"prompt", "hello", "hello", mcpeffect.ReadOnly},
	}
	for _, scope := range []mcpeffect.Scope{0, mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full} {
		cs := connect(t, mcpeffect.WithConnectionScope(ctx, scope), s)
		for _, it := range items {
			t.Run(fmt.Sprintf("%s/%s", scope, it.name), func(t *testing.T) {
				var err error
				var need mcpeffect.Scope
				before := c.count(it.handler)
				if it.kind == "resource" {
					need = r.ResourceScope(it.name)
					_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: it.name})
				} else {
					need = r.PromptScope(it.name)
					_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: it.name})
				}
				ran := c.count(it.handler) > before
				if need != it.need {
					t.Errorf("the registry says %s, want %s", need, it.need)
				}
				if !scope.Allows(mcpeffect.Read) || need > scope {
					d, ok := mcpeffect.AsDeniedError(err)
					if !ok || ran || d.Required != it.need || d.Granted != scope || !d.Classified {
						t.Fatalf("err %v, ran %t; want a refusal needing %s", err, ran, it.need)
					}
					if got := map[string]string{"resource": d.Resource, "prompt": d.Prompt}[it.kind]; got != it.name || d.Tool != "" {
						t.Errorf("denial %+v names the wrong thing", d)
					}
					if want := fmt.Sprintf("%s %q is refused: it needs the %s scope", it.kind, it.name, it.need); !strings.Contains(err.Error(), want) {
						t.Errorf("message %q does not say %q", err, want)
					}
					return
				}
				if it.handler == "" {
					var rpcErr *jsonrpc.Error
					if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams { // resource not found, since SEP-2164
						t.Errorf("err %v, want resource not found", err)
					}
					return
				}
				if err != nil || !ran {
					t.Errorf("err %v, ran %t; want it read", err, ran)
				}
			})
		}
	}
}

// TestResourceWrapperChecksItsOwnScope: where the registry's reckoning and
// go-sdk's choice of handler disagree (a declared template removed from
// the server), the handler's wrapper still refuses what its own scope
// does not allow.
func TestResourceWrapperChecksItsOwnScope(t *testing.T) {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
	ran := false
	h := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ran = true
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "x"}}}, nil
	}
	mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "t://{a}"}, mcpeffect.ReadOnly, h)
	mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "t://{b}"}, mcpeffect.Full, h)
	s.RemoveResourceTemplates("t://{a}")
	s.AddReceivingMiddleware(r.Middleware(nil))
	if got := r.ResourceScope("t://1"); got != mcpeffect.ReadOnly {
		t.Fatalf("the registry says %s: the test no longer builds the disagreement", got)
	}
	_, err := connect(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly), s).ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "t://1"})
	if d, ok := mcpeffect.AsDeniedError(err); !ok || d.Required != mcpeffect.Full || d.Resource != "t://1" || ran {
		t.Errorf("err %v, ran %t; want the wrapper to refuse", err, ran)
	}
}

// TestResourcesWithoutMiddleware: resources and prompts added through
// mcpeffect refuse to be read on a server without the middleware.
func TestResourcesWithoutMiddleware(t *testing.T) {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://readme"}, mcpeffect.ReadOnly, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "x"}}}, nil
	})
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "p"}, mcpeffect.ReadOnly, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	cs := connect(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full), s)
	_, err1 := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "notes://readme"})
	_, err2 := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "p"})
	for i, err := range []error{err1, err2} {
		want := []string{`resource "notes://readme" was not read`, `prompt "p" was not given`}[i]
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "the server has no mcpeffect middleware") {
			t.Errorf("err %v, want it to say %q", err, want)
		}
	}
}

func TestResourcesHideDenied(t *testing.T) {
	ctx := context.Background()
	for _, hide := range []bool{false, true} {
		s, _, _ := newScopedServer(t, &mcpeffect.MiddlewareOptions{HideDenied: hide})
		for _, tt := range []struct {
			scope                         mcpeffect.Scope
			resources, templates, prompts []string
		}{
			{0, nil, nil, nil},
			{mcpeffect.ReadOnly, []string{"notes://readme", "plain://status"}, []string{"plain://logs/{day}"}, []string{"hello", "summarize"}},
			{mcpeffect.NonDestructive, []string{"notes://readme", "plain://status"}, []string{"notes://{id}", "plain://logs/{day}"}, []string{"hello", "summarize"}},
			{mcpeffect.Full, []string{"notes://payroll", "notes://readme", "plain://status"}, []string{"notes://{id}", "plain://logs/{day}"}, []string{"audit_everything", "hello", "summarize"}},
		} {
			if !hide {
				tt.resources = []string{"notes://payroll", "notes://readme", "plain://status"}
				tt.templates = []string{"notes://{id}", "plain://logs/{day}"}
				tt.prompts = []string{"audit_everything", "hello", "summarize"}
			}
			cs := connect(t, mcpeffect.WithConnectionScope(ctx, tt.scope), s)
			res, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			tmpl, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var gotRes, gotTmpl, gotPrompts []string
			for _, x := range res.Resources {
				gotRes = append(gotRes, x.URI)
			}
			for _, x := range tmpl.ResourceTemplates {
				gotTmpl = append(gotTmpl, x.URITemplate)
			}
			for _, x := range prompts.Prompts {
				gotPrompts = append(gotPrompts, x.Name)
			}
			for _, l := range []struct {
				what      string
				got, want []string
				cache     string
			}{
				{"resources", gotRes, tt.resources, res.CacheScope},
				{"templates", gotTmpl, tt.templates, tmpl.CacheScope},
				{"prompts", gotPrompts, tt.prompts, prompts.CacheScope},
			} {
				slices.Sort(l.got)
				if !slices.Equal(l.got, l.want) {
					t.Errorf("hide %t, scope %s: %s %q, want %q", hide, tt.scope, l.what, l.got, l.want)
				}
				if want := map[bool]string{true: "private", false: "public"}[hide]; l.cache != want {
					t.Errorf("hide %t: %s cacheScope %q, want %q", hide, l.what, l.cache, want)
				}
			}
		}
	}
}

func TestAddResourcePanics(t *testing.T) {
	h := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil }
	ph := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil }
	for _, tt := range []struct {
		name string
		add  func(s *mcp.Server, r *mcpeffect.Registry)
		want string
	}{
		{"zero scope", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddResource(s, r, &mcp.Resource{URI: "a://b"}, 0, h)
		}, `resource "a://b": required scope none is not one of`},
		{"scope beyond full", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "p"}, 9, ph)
		}, `prompt "p": required scope Scope(9)`},
		{"another scope", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddResource(s, r, &mcp.Resource{URI: "a://b"}, mcpeffect.ReadOnly, h)
			mcpeffect.AddResource(s, r, &mcp.Resource{URI: "a://b"}, mcpeffect.Full, h)
		}, `resource "a://b" already requires the read-only scope`},
		{"template with another scope", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "a://{b}"}, mcpeffect.Full, h)
			mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "a://{b}"}, mcpeffect.ReadOnly, h)
		}, `resource template "a://{b}" already requires the full scope`},
		{"invalid template", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "a://{b"}, mcpeffect.Full, h)
		}, `resource template "a://{b" is invalid`},
		{"prompt with another scope", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "p"}, mcpeffect.Full, ph)
			mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "p"}, mcpeffect.NonDestructive, ph)
		}, `prompt "p" already requires the full scope`},
		{"nil handler", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "p"}, mcpeffect.Full, nil)
		}, "nil prompt or handler"},
		{"the same twice", func(s *mcp.Server, r *mcpeffect.Registry) {
			mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "a://{b}"}, mcpeffect.Full, h)
			mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "a://{b}"}, mcpeffect.Full, h)
		}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p any
			func() {
				defer func() { p = recover() }()
				tt.add(mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil), mcpeffect.NewRegistry())
			}()
			if tt.want == "" {
				if p != nil {
					t.Errorf("panic: %v", p)
				}
				return
			}
			if !strings.Contains(fmt.Sprint(p), tt.want) {
				t.Errorf("panic %v, want %q", p, tt.want)
			}
		})
	}
}

// TestResourceScopeOrder: a URI declared itself wins over a template, and
// templates are tried in the order of their text, first match wins, as
// go-sdk tries them.
func TestResourceScopeOrder(t *testing.T) {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
	h := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil }
	mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "docs://{+page}"}, mcpeffect.Full, h)
	mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "docs://public/{page}"}, mcpeffect.ReadOnly, h)
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "docs://index"}, mcpeffect.ReadOnly, h)
	for uri, want := range map[string]mcpeffect.Scope{
		"docs://index":       mcpeffect.ReadOnly,
		"docs://secret":      mcpeffect.Full,
		"docs://public/faq":  mcpeffect.ReadOnly, // both match; "docs://public/{page}" < "docs://{+page}"
		"docs://public/a/b":  mcpeffect.Full,     // {page} takes no slash
		"other://x":          mcpeffect.ReadOnly,
		"docs://public%2Ffq": mcpeffect.Full,
	} {
		if got := r.ResourceScope(uri); got != want {
			t.Errorf("ResourceScope(%q) = %s, want %s", uri, got, want)
		}
	}
}

// TestSubscribeAndCompleteScoped: a subscription to a resource, which
// tells of each change to it, needs the scope that reads it; completing
// the arguments of a prompt or a resource template needs the scope that
// gets it. Both are refused, with the refusal of a read, to a scope that
// could not read, and the zero Scope subscribes to nothing.
func TestSubscribeAndCompleteScoped(t *testing.T) {
	r := mcpeffect.NewRegistry()
	var mu sync.Mutex
	var subscribed, completed []string
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			subscribed = append(subscribed, req.Params.URI)
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			mu.Lock()
			defer mu.Unlock()
			completed = append(completed, req.Params.Ref.Name+req.Params.Ref.URI)
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"x"}}}, nil
		},
	})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "x"}}}, nil
	}
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://readme", Name: "readme"}, mcpeffect.ReadOnly, read)
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://payroll", Name: "payroll"}, mcpeffect.Full, read)
	mcpeffect.AddResourceTemplate(s, r, &mcp.ResourceTemplate{URITemplate: "notes://drafts/{id}", Name: "draft"}, mcpeffect.NonDestructive, read)
	mcpeffect.AddPrompt(s, r, &mcp.Prompt{Name: "audit_everything", Arguments: []*mcp.PromptArgument{{Name: "team"}}}, mcpeffect.Full,
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	s.AddReceivingMiddleware(r.Middleware(nil))

	for _, c := range []struct {
		what string
		need mcpeffect.Scope
		do   func(context.Context, *mcp.ClientSession) error
	}{
		{"subscribe to notes://readme", mcpeffect.ReadOnly, func(ctx context.Context, cs *mcp.ClientSession) error {
			return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "notes://readme"})
		}},
		{"subscribe to notes://payroll", mcpeffect.Full, func(ctx context.Context, cs *mcp.ClientSession) error {
			return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "notes://payroll"})
		}},
		{"subscribe to a draft", mcpeffect.NonDestructive, func(ctx context.Context, cs *mcp.ClientSession) error {
			return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "notes://drafts/7"})
		}},
		{"complete the prompt's argument", mcpeffect.Full, func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "audit_everything"},
				Argument: mcp.CompleteParamsArgument{Name: "team", Value: "p"}})
			return err
		}},
		{"complete the template's argument", mcpeffect.NonDestructive, func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "notes://drafts/{id}"},
				Argument: mcp.CompleteParamsArgument{Name: "id", Value: "7"}})
			return err
		}},
	} {
		// go-sdk's client subscribes with subscriptions/listen on
		// 2026-07-28: TestSubscriptionsListenScoped holds it.
		for _, protocol := range []string{"2025-11-25"} {
			for _, scope := range []mcpeffect.Scope{0, mcpeffect.ReadOnly, mcpeffect.NonDestructive, mcpeffect.Full} {
				mu.Lock()
				before := len(subscribed) + len(completed)
				mu.Unlock()
				cs := connectAs(t, mcpeffect.WithConnectionScope(context.Background(), scope), s, nil, protocol)
				err := c.do(context.Background(), cs)
				mu.Lock()
				ran := len(subscribed)+len(completed) > before
				mu.Unlock()
				d, denied := mcpeffect.AsDeniedError(err)
				switch allowed := scope >= c.need && scope != 0; {
				case allowed && (err != nil || !ran):
					t.Errorf("%s, %s, with %v: err = %v, ran %t; want it allowed", protocol, c.what, scope, err, ran)
				case !allowed && (!denied || ran || d.Required != c.need):
					t.Errorf("%s, %s, with %v: err = %v, ran %t; want it refused as needing %v", protocol, c.what, scope, err, ran, c.need)
				}
				cs.Close()
			}
		}
	}
}

// TestSubscriptionsListenScoped: subscriptions/listen, the 2026-07-28 form
// of resources/subscribe, is refused when any resource it names needs a
// scope the caller lacks, before the server parks on it; one that names
// only what the caller may read goes on.
func TestSubscriptionsListenScoped(t *testing.T) {
	r := mcpeffect.NewRegistry()
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, nil)
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://readme", Name: "readme"}, mcpeffect.ReadOnly, read)
	mcpeffect.AddResource(s, r, &mcp.Resource{URI: "notes://payroll", Name: "payroll"}, mcpeffect.Full, read)
	for _, c := range []struct {
		uris  []string
		scope mcpeffect.Scope
		want  string // the refused resource, or "" for none
	}{
		{[]string{"notes://readme"}, mcpeffect.ReadOnly, ""},
		{[]string{"notes://readme", "notes://payroll"}, mcpeffect.ReadOnly, "notes://payroll"},
		{[]string{"notes://payroll"}, mcpeffect.Full, ""},
		{[]string{"notes://readme"}, 0, "notes://readme"},
	} {
		ran := false
		next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
			ran = true
			return &mcp.SubscriptionsListenResult{}, nil
		}
		req := &mcp.SubscriptionsListenRequest{Params: &mcp.SubscriptionsListenParams{
			Notifications: &mcp.NotificationSubscriptions{ResourceSubscriptions: c.uris}}}
		ctx := mcpeffect.WithConnectionScope(context.Background(), c.scope)
		_, err := r.Middleware(nil)(next)(ctx, "subscriptions/listen", req)
		d, denied := mcpeffect.AsDeniedError(err)
		switch {
		case c.want == "" && (err != nil || !ran):
			t.Errorf("%v with %v: err = %v, ran %t; want it on", c.uris, c.scope, err, ran)
		case c.want != "" && (!denied || ran || d.Resource != c.want):
			t.Errorf("%v with %v: err = %v, ran %t; want %s refused", c.uris, c.scope, err, ran, c.want)
		}
	}
}
